/**
 * Runs the real patchbay entry point the way a user does: `deno task start`, under the
 * exact permission flags of the `start` task, with HOME pointed at a temporary folder
 * so logs, history and stored sessions never touch the developer's own.
 *
 * @module
 */

import { join } from "node:path";
import { MACHINE_PREFIX, PROXY_VARIABLES } from "../../scripts/run_tests.ts";
import { DENO } from "./deps.ts";

const PROJECT = new URL("../../", import.meta.url).pathname;

/** Where Deno keeps its caches for the real user, so a temporary HOME reuses them. */
function realDenoDir(): string {
  return Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME")!, ".cache"), "deno");
}

/**
 * Variables that let a process trust a TLS-inspecting proxy's certificate authority (Deno
 * honours `DENO_CERT` and `NODE_EXTRA_CA_CERTS`): passed through to every sandbox, so Deno
 * can still fetch npm packages on a machine behind such a proxy.
 */
const CERTIFICATE_VARIABLES = [
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
] as const;

/** The certificate variables of this process that are set. */
export function certificateEnv(): Record<string, string> {
  return Object.fromEntries(
    CERTIFICATE_VARIABLES.flatMap((name) => {
      const value = Deno.env.get(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
}

/** Test traffic stays on this machine: never through a proxy. */
const LOOPBACK = ["127.0.0.1", "localhost", "::1"];

/** The machine's proxy variable `name`: set aside by `scripts/run_tests.ts`, or as it is. */
function machineVariable(name: string): string | undefined {
  return Deno.env.get(`${MACHINE_PREFIX}${name}`) ?? Deno.env.get(name);
}

/**
 * The machine's proxy variables, for a sandbox: Deno needs them (with the certificate
 * variables) to reach the npm registry on a network that allows nothing else. When a proxy
 * is set, loopback is added to NO_PROXY (both spellings), so traffic to the test's own
 * servers never goes through it.
 */
export function proxyEnv(
  get: (name: string) => string | undefined = machineVariable,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const value = get(name);
    if (value !== undefined) env[name] = value;
  }
  const proxied = PROXY_VARIABLES.some((name) => !/no_proxy/i.test(name) && env[name]?.trim());
  if (proxied) {
    for (const name of ["NO_PROXY", "no_proxy"]) {
      env[name] = [env[name], ...LOOPBACK].filter((part) => part?.trim()).join(",");
    }
  }
  return env;
}

/**
 * For tests about proxies, which set the proxy variables they mean themselves: removes
 * every proxy variable this process would pass on (spread into a sandbox's environment).
 */
export const WITHOUT_PROXIES: Readonly<Record<string, undefined>> = Object.fromEntries(
  PROXY_VARIABLES.map((name) => [name, undefined]),
);

/** `base` with `changes` applied; an `undefined` value removes the variable. */
function withChanges(
  base: Record<string, string>,
  changes: Record<string, string | undefined>,
): Record<string, string> {
  const env = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** A temporary HOME with an isolated working directory. */
export interface Sandbox {
  home: string;
  cwd: string;
  /** Environment for a patchbay process in this sandbox (no inherited secrets). */
  env: Record<string, string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a sandbox; `await using` removes it. `extraEnv` is added to its environment; an
 * `undefined` value removes a variable (`WITHOUT_PROXIES`).
 */
export async function sandbox(
  extraEnv: Record<string, string | undefined> = {},
): Promise<Sandbox> {
  const home = await Deno.makeTempDir({ prefix: "patchbay-home-" });
  const cwd = join(home, "work");
  await Deno.mkdir(cwd);
  const env = withChanges({
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR: realDenoDir(),
    ...certificateEnv(),
    ...proxyEnv(),
    NO_COLOR: "1",
    TERM: "dumb",
  }, extraEnv);
  return {
    home,
    cwd,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** What a finished patchbay process left behind. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@linkcode runPatchbay}. */
export interface RunOptions {
  /** Working directory. @default the sandbox's cwd */
  cwd?: string;
  /** Text written to stdin, then closed. */
  stdin?: string;
  /** Extra environment variables; `undefined` removes one. */
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
}

/** Runs `deno task start <args>` in the sandbox and collects its output. */
export async function runPatchbay(
  box: Sandbox,
  args: string[],
  options: RunOptions = {},
): Promise<CliResult> {
  const cwd = options.cwd ?? box.cwd;
  const child = new Deno.Command(DENO, {
    // The task runs in the project folder; patchbay moves to INIT_CWD (this cwd) itself.
    args: ["task", "--quiet", "--config", join(PROJECT, "deno.json"), "start", ...args],
    cwd,
    env: withChanges(box.env, options.env ?? {}),
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** Runs `command` with no stdin and only `env` (nothing inherited); collects its output. */
export async function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<CliResult> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** `deno run <the start task's flags> launch.ts`, so a signal reaches the launcher itself. */
export function startTaskArgs(home: string): string[] {
  const task = JSON.parse(Deno.readTextFileSync(join(PROJECT, "deno.json"))).tasks.start as string;
  const words = task.replaceAll("$HOME", home).split(/\s+/).slice(1);
  return words.map((word) => word === "launch.ts" ? join(PROJECT, "launch.ts") : word);
}

/**
 * Runs `command` in the sandbox: in its folder (or `options.cwd`), with its environment and
 * `options.env` over it; collects its output.
 */
export function runInSandbox(
  box: Sandbox,
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return runCommand(command, args, {
    cwd: options.cwd ?? box.cwd,
    env: { ...box.env, ...options.env },
  });
}

/**
 * Spawns patchbay on `config` by `deno run` with the `start` task's own flags rather than
 * `deno task start`, so a signal sent to the child reaches patchbay itself, not the task's
 * wrapper. Runs in the project folder with the sandbox's environment; stderr is piped.
 * `args` follow the configuration (a command and its arguments).
 */
export async function spawnStartTask(
  box: Sandbox,
  config: string,
  stdout: "piped" | "null",
  args: readonly string[] = [],
): Promise<Deno.ChildProcess> {
  const manifest = JSON.parse(await Deno.readTextFile(join(PROJECT, "deno.json")));
  const flags = (manifest.tasks.start as string).replaceAll("$HOME", box.home).split(/\s+/)
    .slice(1);
  return new Deno.Command(DENO, {
    args: [...flags, "--config", config, ...args],
    cwd: PROJECT,
    env: box.env,
    clearEnv: true,
    stdout,
    stderr: "piped",
  }).spawn();
}

/** Writes a configuration file into the sandbox and returns its path. */
export async function writeConfig(
  box: Sandbox,
  config: unknown,
  name = "servers_config.json",
): Promise<string> {
  const path = join(box.cwd, name);
  await Deno.writeTextFile(
    path,
    typeof config === "string" ? config : JSON.stringify(config, null, 2),
  );
  return path;
}

/** A minimal valid configuration with the given servers. */
export function configWith(
  mcpServers: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return { LLM: { provider: "openai", model: "gpt-4o-mini" }, mcpServers, ...extra };
}
