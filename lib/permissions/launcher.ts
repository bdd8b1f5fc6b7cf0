/**
 * The launcher: starts the client (`main.ts`) under the flags `patchbay permissions` prints
 * for the configuration and .env in effect, so every session runs with the narrowest
 * permissions its configuration needs. It computes the plan by running
 * `patchbay permissions --json` (the one definition of the plan), remembers it until an
 * input changes (`plan_cache.ts`), then runs the client with the same terminal, passing on
 * signals and returning its exit code unchanged.
 *
 * The launcher itself needs only to read files and variables, write its memory of plans,
 * and run Deno. It imports no npm package, so it adds little to start-up.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { configDir, dataDir, stateDir } from "../paths.ts";
import { CLIENT_V8_FLAGS } from "../cli/v8_flags.ts";
import { editorFlags } from "./editor_flags.ts";
import { configCheckFlags } from "./check_flags.ts";
import { DEFAULTS } from "../defaults.ts";
import { EXIT } from "../errors.ts";
import { managedFile } from "../policy/place.ts";
import { clientFiles, sharedInputs } from "./client_files.ts";
import { taskWorkingDirectory } from "../cli/task_folder.ts";
import { TERMINAL_VARIABLES } from "../terminal/terminal.ts";
import { ensureModules } from "./module_cache.ts";
import { type CommandGrammar, type LaunchArgs, parseLaunchArgs } from "./launch_args.ts";
import {
  grantList,
  RESTART_EXIT_CODE,
  RESTART_FILE_VARIABLE,
  restartArgs,
  takeRestartRequest,
} from "./restart.ts";
import {
  CACHE_FORMAT,
  cacheFile,
  currentInputs,
  type InputNames,
  namesFor,
  type PrintedPlan,
  readCachedPlan,
  stillValid,
  writeCachedPlan,
} from "./plan_cache.ts";
import * as clientTelemetry from "../telemetry/client_env.ts";
import { type HandOver, handOver } from "./handoff_start.ts";
import { earlyStartFlags } from "../early_start.ts";
import type { PrintedTelemetry } from "../telemetry/client_env.ts";

/** Where patchbay's own files are (main.ts, deno.json): a checkout, or the URL run from. */
const PROJECT_URL = new URL("../../", import.meta.url);
/** The folder of patchbay's own files; undefined when it runs from a URL or a package. */
const PROJECT = PROJECT_URL.protocol === "file:" ? fileURLToPath(PROJECT_URL) : undefined;
/** The client's entry point: a path in a checkout, else the URL beside the launcher's. */
export const CLIENT_MAIN: string = PROJECT !== undefined
  ? join(PROJECT, "main.ts")
  : new URL("main.ts", PROJECT_URL).href;
const MANIFEST = PROJECT !== undefined ? join(PROJECT, "deno.json") : undefined;
/**
 * How the client resolves its imports: the checkout's deno.json; run from a URL or a
 * package, the deno.json published beside it as the import map, and imports allowed from
 * the host the launcher itself came from.
 */
const MANIFEST_FLAGS: readonly string[] = MANIFEST !== undefined ? ["--config", MANIFEST] : [
  `--import-map=${new URL("deno.json", PROJECT_URL).href}`,
  `--allow-import=${PROJECT_URL.host}`,
];

/**
 * The variable that tells the client how the launcher started it (`/status`, `doctor`):
 * `narrow` (the plan), `unrestricted` (`--unrestricted`) or `bare` (`--version`, `--help`).
 */
export const LAUNCHER_VARIABLE = "PATCHBAY_LAUNCHER";

/** How the client was started. */
export type LaunchMode = "narrow" | "unrestricted" | "bare";

/** The broad flags of `--unrestricted`: everything but writing outside patchbay's folders. */
export function unrestrictedFlags(): string[] {
  return [
    "--no-prompt",
    "--allow-env",
    "--allow-read",
    `--allow-write=${[stateDir(), dataDir(), configDir()].join(",")}`,
    "--allow-net",
    "--allow-run",
    "--allow-sys",
  ];
}

/** Options of {@linkcode launch}. */
export interface LaunchOptions {
  /** @default Deno.execPath() */
  deno?: string;
  /** @default the folder `deno task` was run from, else Deno.cwd() */
  cwd?: string;
  /**
   * Servers already started for this command line ({@linkcode handOverEarly}); taken
   * when the command runs under the same plan, else ended.
   */
  handover?: HandOver;
}

/** The working folder of a client started from a checkout (else `undefined`). */
function checkoutCwd(): string | undefined {
  return PROJECT !== undefined ? taskWorkingDirectory(PROJECT) ?? Deno.cwd() : undefined;
}

/**
 * The launcher's reading of a command line the client starts its servers early for
 * (`tools`, `prompts`, `resources` in their plain form, `lib/early_start.ts`), without the
 * commands' declarations, which are most of what the launcher loads: the plan of the
 * servers, the files given; `undefined` for any other command line.
 * `tests/permissions/launcher_test.ts` compares it with {@linkcode parseLaunchArgs}.
 */
export function plainLaunchArgs(args: readonly string[]): LaunchArgs | undefined {
  const root = earlyStartFlags(args);
  if (!root) return undefined;
  const files: LaunchArgs["files"] = {};
  for (const key of ["config", "envFile", "logFile", "trace"] as const) {
    if (root[key] !== undefined) files[key] = root[key];
  }
  return {
    clientArgs: [...args],
    unrestricted: false,
    informational: false,
    needs: "servers",
    planning: false,
    editing: false,
    files,
    output: undefined,
  };
}

/**
 * Starts the servers of `parsed` (a {@linkcode plainLaunchArgs} reading) before the client,
 * when its plan is remembered and still valid; `undefined` otherwise. The launch then takes
 * them ({@linkcode LaunchOptions.handover}).
 */
export async function handOverEarly(parsed: LaunchArgs): Promise<HandOver | undefined> {
  const cwd = checkoutCwd();
  if (cwd === undefined || PROJECT === undefined) return undefined;
  const key = planKey(cwd, parsed.files, Deno.execPath());
  const cached = readCachedPlan(cacheFile(plansDir(), key));
  if (!cached || !stillValid(cached)) return undefined;
  return await handOver(parsed.clientArgs, cached.plan.flags, cwd, PROJECT);
}

/** Which remembered plan a command line uses: its folder, files, Deno and client. */
function planKey(cwd: string, files: LaunchArgs["files"], deno: string): string {
  // In a fixed order, whatever the order of the flags on the command line.
  const named = [files.config, files.envFile, files.logFile, files.trace];
  return JSON.stringify([cwd, named, deno, CLIENT_MAIN]);
}

/**
 * The most times one launch starts the client again. Each restart should widen the plan
 * once (a `/refresh`, an OAuth server that moved); a client that keeps asking is asking for
 * what the plan cannot give, and the launcher stops rather than start it without end.
 */
export const MAX_RESTARTS = 3;

/**
 * Runs the client for `args` and returns its exit code. A client that needs grants its plan
 * lacks (`restart.ts`) is started again under the plan computed anew, resuming its
 * conversation. A restart that would not widen the plan is the last one: the interactive
 * client then runs without the grant and says why when it is refused; a failed command is
 * not run again (it may have had side effects and read its input) and ends with its code.
 * A client the launcher passed a terminating signal to, or a malformed request, is not
 * started again, nor more than {@linkcode MAX_RESTARTS} times. `commands` are the declared
 * commands (`commands/_declarations.ts` `ROOT`): what the command named needs is read there;
 * or the command line already read ({@linkcode plainLaunchArgs}).
 */
export async function launch(
  args: string[],
  commands: CommandGrammar | LaunchArgs,
  options: LaunchOptions = {},
): Promise<number> {
  try {
    return await launchWith(args, commands, options);
  } finally {
    // Servers started early but not handed to a client (a refusal, another plan). Those
    // handed over end with their client's run; closing twice waits for the first.
    await options.handover?.relay.close();
  }
}

async function launchWith(
  args: string[],
  commands: CommandGrammar | LaunchArgs,
  options: LaunchOptions,
): Promise<number> {
  const deno = options.deno ?? Deno.execPath();
  // A checkout run by `deno task --config` works in the folder the task was invoked from;
  // from a URL or a package there is no checkout, and the working folder is the one.
  const cwd = options.cwd ?? checkoutCwd() ?? Deno.cwd();
  const parsed = "clientArgs" in commands ? commands : parseLaunchArgs(args, commands);
  // Checked here, with the launcher's read access to every folder: the client may only
  // read the files themselves. The remembered plans grant the client its permissions.
  const shared = sharedInputs(parsed, cwd, plansDir(), PROJECT);
  if (shared) {
    console.error(
      `error: ${shared.message}\n  cause:  ${shared.reason}\n  remedy: ${shared.remedy}`,
    );
    return EXIT.failure;
  }
  // On an empty Deno cache, fetch every module now, before anything is drawn. The cache
  // checked is this Deno's, so only when the client runs under this same Deno.
  // From a URL or a package, `deno install` / `deno run` fetched the modules already.
  if (deno === Deno.execPath() && MANIFEST !== undefined) {
    await ensureModules({ deno, manifest: MANIFEST, main: CLIENT_MAIN });
  }
  const chosen = await flagsFor(parsed, deno, cwd);
  const mode = chosen.mode;
  let flags = chosen.flags;
  let clientEnv = await clientTelemetry.telemetryEnv(chosen.telemetry);
  let clientArgs = parsed.clientArgs;
  let canRestart = mode === "narrow";
  // The first run's servers: started already, or now, while the client starts
  // (lib/transports/handoff.ts); only under the plan they were started for.
  const early = options.handover;
  let handover = !chosen.planned || PROJECT === undefined
    ? undefined
    : early && sameFlags(early.plan, flags)
    ? early
    : await handOver(parsed.clientArgs, flags, cwd, PROJECT);
  if (early && early !== handover) await early.relay.close();
  for (let restarts = 0;; restarts++) {
    const file = canRestart ? await restartFileFor() : undefined;
    let run;
    try {
      run = await runClient(
        deno,
        [...flags, ...outputGrant(parsed, cwd), ...handover?.flags ?? []],
        clientArgs,
        cwd,
        { mode, restartFile: file, env: { ...clientEnv, ...handover?.env } },
      );
    } finally {
      // What the client left running ends with it; a restart starts its own servers.
      await handover?.relay.close();
      handover = undefined;
    }
    const asked = run.code === RESTART_EXIT_CODE && file && !run.signalled;
    const request = asked ? await takeRestartRequest(file) : undefined;
    if (file) await Deno.remove(file).catch(() => {});
    if (!request) return run.code;
    if ("malformed" in request) {
      console.error(
        `patchbay: the client asked for a restart, but its request is malformed ` +
          `(${request.malformed}), so it is not started again; run the command again ` +
          "(`patchbay permissions` shows the plan; --unrestricted allows everything)",
      );
      return run.code;
    }
    if (restarts >= MAX_RESTARTS) {
      console.error(
        `patchbay: the client asked for a restart ${restarts + 1} times in a row (for ` +
          `${grantList(request.adds)}), so it is not started again; check the configuration ` +
          "with `patchbay doctor` and start patchbay again",
      );
      return request.failedWith ?? run.code;
    }
    const plan = await planFor(parsed, deno, cwd, { fresh: true, rediscover: request.rediscover });
    const extended = plan?.flags ?? flags;
    if (JSON.stringify(extended) === JSON.stringify(flags)) {
      // Computed from the same files, the plan still lacks what was asked for: asking again
      // would only start the client again.
      const lacking = `the plan for this configuration does not include ${grantList(request.adds)}`;
      const where = "(`patchbay permissions` shows the plan; --unrestricted allows everything)";
      if (request.failedWith !== undefined) {
        console.error(`patchbay: ${lacking}, so the command is not run again ${where}`);
        return request.failedWith;
      }
      console.error(`patchbay: ${lacking}, so the session continues without it ${where}`);
      canRestart = false;
    }
    flags = extended;
    if (plan) clientEnv = await clientTelemetry.telemetryEnv(plan.telemetry);
    clientArgs = restartArgs(parsed.clientArgs, request.session);
  }
}

/** Writing the file of `read --output`, which the person named on the command line. */
function outputGrant(parsed: LaunchArgs, cwd: string): string[] {
  return parsed.output ? [`--allow-write=${resolve(cwd, parsed.output)}`] : [];
}

/** The launcher's remembered plans: the client may not write there (`runClient`). */
function plansDir(): string {
  return join(stateDir(), "launch");
}

/**
 * A fresh file for one client's restart request, in a folder of its own: the client writes
 * it, so it is not in the folder of remembered plans, which the client may not write.
 */
async function restartFileFor(): Promise<string | undefined> {
  const dir = join(stateDir(), "restart");
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch {
    return undefined; // Not writable: the client runs without asking for restarts.
  }
  return join(dir, `restart-${crypto.randomUUID()}.json`);
}

/** The flags to run the client with, how they were chosen, and its telemetry. */
export async function flagsFor(
  parsed: LaunchArgs,
  deno: string,
  cwd: string,
): Promise<
  { flags: string[]; mode: LaunchMode; telemetry?: PrintedTelemetry | null; planned?: true }
> {
  // Editing the configuration starts no server: it needs its own writes (which the broad
  // flags of --unrestricted leave out too), not the servers' plan.
  if (parsed.editing) return { flags: editorFlags(parsed, cwd), mode: "narrow" };
  if (parsed.unrestricted || parsed.planning) {
    // No plan is computed: telemetry as the process environment asks for it.
    const telemetry = parsed.planning ? null : clientTelemetry.fromEnvironment();
    return { flags: unrestrictedFlags(), mode: "unrestricted", telemetry };
  }
  // Help reads nothing but the variables of the one colour rule (lib/terminal.ts
  // colorEnabled: NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, TERM), so `--help` is coloured as
  // every other command is; commander reads no colour variable of its own.
  const colours = `--allow-env=${TERMINAL_VARIABLES.join(",")}`;
  if (parsed.informational) return { flags: ["--no-prompt", colours], mode: "bare" };
  if (parsed.traceReading !== undefined) {
    return { flags: traceReadingFlags(parsed.traceReading, cwd), mode: "bare" };
  }
  if (parsed.configChecking) return { flags: configCheckFlags(parsed, cwd), mode: "narrow" };
  const plan = await planFor(parsed, deno, cwd);
  if (!plan) return { flags: fallbackFlags(parsed, cwd), mode: "narrow" };
  return { flags: plan.flags, mode: "narrow", telemetry: plan.telemetry, planned: true };
}

/**
 * The plan for this command line: remembered, or computed by `patchbay permissions --json`
 * under the broad flags (it reads the stored OAuth logins, in Redis for some).
 * `undefined` when it cannot be computed (an invalid configuration: the client says why).
 */
export async function planFor(
  parsed: LaunchArgs,
  deno: string,
  cwd: string,
  options: PlanOptions = {},
): Promise<PrintedPlan | undefined> {
  const base = baseInputs(parsed, cwd);
  const file = cacheFile(plansDir(), planKey(cwd, parsed.files, deno));
  const cached = options.fresh ? undefined : readCachedPlan(file);
  if (cached && stillValid(cached)) return cached.plan;
  // Inputs are read before the plan is computed: a change while it runs is seen next time.
  const before = currentInputs(base);
  const plan = await computePlan(parsed, deno, cwd, options.rediscover ?? []);
  if (!plan) return undefined;
  const inputs = currentInputs(namesFor(plan, base));
  const unchanged = Object.entries(before.files).every(([path, hash]) =>
    inputs.files[path] === hash
  );
  // An OAuth server whose authorization server could not be discovered (unreachable now)
  // is tried again at the next start rather than remembered without it.
  const undiscovered = plan.notes.some((note) => note.startsWith("OAuth:"));
  if (unchanged && !undiscovered) {
    await writeCachedPlan(file, { format: CACHE_FORMAT, inputs, plan });
  }
  return plan;
}

/** Options of {@linkcode planFor}. */
export interface PlanOptions {
  /** Compute it even when a remembered plan is still valid (a restart asked for). @default false */
  fresh?: boolean;
  /** OAuth servers whose authorization server is discovered again (it moved). @default [] */
  rediscover?: readonly string[];
}

/** The configuration, .env, permission code and stored logins the plan is computed from. */
function baseInputs(parsed: LaunchArgs, cwd: string): InputNames {
  const { configs, envFiles } = clientFiles(parsed, cwd, PROJECT);
  // From a URL or a package the code is fixed by its address (CLIENT_MAIN, in the key).
  const code = PROJECT === undefined ? [] : [
    ...["plan.ts", "inputs.ts", "flags.ts", "command_path.ts"].map((name) =>
      join(PROJECT, "lib", "permissions", name)
    ),
    join(PROJECT, "deno.json"),
  ];
  return {
    // The administrator's policy decides what the plan grants (its refusals, its settings).
    files: [...configs, ...envFiles, managedFile()],
    stats: [...code, join(configDir(), "oauth")],
    env: [],
  };
}

async function computePlan(
  parsed: LaunchArgs,
  deno: string,
  cwd: string,
  rediscover: readonly string[],
): Promise<PrintedPlan | undefined> {
  const files = [
    ...(parsed.files.config !== undefined ? ["--config", parsed.files.config] : []),
    ...(parsed.files.envFile !== undefined ? ["--env-file", parsed.files.envFile] : []),
    ...(parsed.files.logFile !== undefined ? ["--log-file", parsed.files.logFile] : []),
    ...(parsed.files.trace !== undefined ? ["--trace", parsed.files.trace] : []),
  ];
  try {
    const output = await new Deno.Command(deno, {
      args: [
        "run",
        CLIENT_V8_FLAGS,
        ...unrestrictedFlags(),
        ...MANIFEST_FLAGS,
        CLIENT_MAIN,
        ...files,
        "permissions",
        "--json",
        "--discover",
        ...rediscover.flatMap((server) => ["--rediscover", server]),
      ],
      cwd,
      // Computing the plan is no part of the session: Deno exports nothing of it.
      env: { OTEL_DENO: "false" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (output.code !== 0) return undefined;
    const printed = JSON.parse(new TextDecoder().decode(output.stdout)) as PrintedPlan;
    return Array.isArray(printed.flags) ? printed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Without a plan (the configuration or .env is unusable), just enough for the client to
 * read them and say what is wrong: the files themselves, its own folders and the
 * environment; no network, no commands.
 */
export function fallbackFlags(parsed: LaunchArgs, cwd: string): string[] {
  const base = baseInputs(parsed, cwd);
  const own = [stateDir(), dataDir(), configDir()];
  const logFile = parsed.files.logFile !== undefined ? [resolve(cwd, parsed.files.logFile)] : [];
  if (parsed.files.trace !== undefined) logFile.push(resolve(cwd, parsed.files.trace));
  return [
    "--no-prompt",
    // Every variable, so a configuration naming an unset one says "is not set" rather than
    // "cannot be read"; without network or commands, nothing can leave the process.
    "--allow-env",
    // base.files holds the administrator's policy, which the client must read to start.
    `--allow-read=${[...base.files, ...own, ...logFile].join(",")}`,
    `--allow-write=${[...own, ...logFile].join(",")}`,
  ];
}

/**
 * `trace show FILE` and `trace stats FILE` read that file and its older generations, and
 * nothing else: no network, no commands, no writing.
 */
export function traceReadingFlags(file: string, cwd: string): string[] {
  const path = resolve(cwd, file);
  const generations = Array.from(
    { length: DEFAULTS.trace.files - 1 },
    (_, i) => `${path}.${i + 1}`,
  );
  return ["--no-prompt", "--allow-env", `--allow-read=${[path, ...generations].join(",")}`];
}

/** Signals passed on to the client when the launcher receives them. */
const FORWARDED: readonly Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/**
 * Runs the client on this terminal. A Ctrl+C at a terminal reaches the client directly (the
 * terminal signals the whole foreground process group), so the launcher only passes SIGINT
 * on when it has no terminal; SIGTERM, SIGHUP and SIGQUIT sent to the launcher are always
 * passed on (the client ends its servers' process groups for each of them),
 * and a client asked to stop that way is not started again (`signalled`).
 *
 * The client may write patchbay's folders, but never the launcher's remembered plans: the
 * launcher trusts them at the next start, so a client that could write one could grant
 * itself anything. Deno's `--deny-write` wins over the `--allow-write` of their parent.
 */
async function runClient(
  deno: string,
  flags: readonly string[],
  clientArgs: readonly string[],
  cwd: string,
  client: { mode: LaunchMode; restartFile?: string; env: Record<string, string> },
): Promise<{ code: number; signalled: boolean }> {
  // --quiet: Deno's own notices stay off the screen (`Failed to resolve '…' for allow-run`,
  // a configured text raw; its progress bar's erasures, even on TERM=dumb). Errors still show.
  const guarded = ["--quiet", ...flags, `--deny-write=${plansDir()}`];
  const child = new Deno.Command(deno, {
    args: ["run", CLIENT_V8_FLAGS, ...guarded, ...MANIFEST_FLAGS, CLIENT_MAIN, ...clientArgs],
    cwd,
    env: {
      ...client.env,
      [LAUNCHER_VARIABLE]: client.mode,
      ...(client.restartFile ? { [RESTART_FILE_VARIABLE]: client.restartFile } : {}),
    },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const terminal = Deno.stdin.isTerminal();
  let signalled = false;
  const listeners = FORWARDED.map((signal) => {
    const listener = () => {
      if (signal === "SIGINT" && terminal) return;
      signalled = true;
      try {
        child.kill(signal);
      } catch {
        // Already gone: its status follows.
      }
    };
    Deno.addSignalListener(signal, listener);
    return { signal, listener };
  });
  try {
    const status = await child.status;
    return {
      code: status.signal ? 128 + signalNumber(status.signal) : status.code,
      signalled,
    };
  } finally {
    for (const { signal, listener } of listeners) Deno.removeSignalListener(signal, listener);
  }
}

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

function signalNumber(signal: Deno.Signal): number {
  return SIGNAL_NUMBERS[signal] ?? 0;
}

function sameFlags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((flag, i) => flag === b[i]);
}
