/**
 * Starting a stdio server's process, possibly before the code that speaks to it is
 * loaded (start-up cost): a server such as server-everything needs about half a second from
 * spawn to answering, and patchbay's own modules (the SDK behind the connections) take a
 * good part of that to load. A command that knows its servers once the configuration is
 * read starts their processes at once ({@linkcode prespawnAll}); under the launcher's plan,
 * `tools`, `prompts` and `resources` start them earlier still, before the command's code
 * loads (`lib/early_start.ts`). The transport created later for the same entry takes the
 * running process ({@linkcode claimPrespawned}) instead of starting another. Whatever no
 * transport claims is ended ({@linkcode endUnclaimed}).
 *
 * @module
 */

import { ENDING_SIGNALS, signalExitCode } from "../cli/ending_signals.ts";
import {
  canSignalGroups,
  childEnvironment,
  KILL_PROGRAM,
  terminateChild,
  terminateGroup,
} from "./process.ts";
import { handedOffProcess, readHandoff, specDigest } from "./handoff.ts";

/** What a server process is started with (its environment already reduced). */
export interface SpawnSpec {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
}

/** What of a configured server decides whether and how its process is started. */
export interface StartableServer {
  transport: string;
  disabled?: boolean;
  /** Refused by the administrator's policy: never started (docs/policy.md). */
  refused?: unknown;
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

/**
 * The processes a command that connects `servers` starts, in their order: one per enabled
 * stdio server, its environment reduced to what it inherits (`childEnvironment`) from
 * `lookup`. The command's own start (`commands/_connect.ts`) and the early start read the
 * same rule here.
 */
export function stdioSpawnSpecs(
  servers: readonly StartableServer[],
  lookup: (name: string) => string | undefined,
): SpawnSpec[] {
  return servers.flatMap((server) =>
    server.transport !== "stdio" || server.disabled || server.refused ||
      server.command === undefined
      ? []
      : [{
        command: server.command,
        args: server.args ?? [],
        cwd: server.cwd,
        env: childEnvironment(server.env ?? {}, lookup),
      }]
  );
}

/** Time an unclaimed process group gets between SIGTERM and SIGKILL. */
const UNCLAIMED_TERM_GRACE_MS = 2000;

/** Processes started ahead, by {@linkcode specKey}, oldest first. */
const started = new Map<string, Deno.ChildProcess[]>();

/**
 * Who started a process ahead: the launcher before the client (`handoff.ts`), the early
 * start, or the command once its configuration was read.
 */
export type StartedAhead = "launcher" | "early" | "command";

/** Who started each process started ahead (the transport's log says so). */
const startedBy = new WeakMap<Deno.ChildProcess, StartedAhead>();

/** What `spec` starts, as one string: command, arguments, folder, variables in order. */
export function specKey(spec: SpawnSpec): string {
  const env = Object.entries(spec.env).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  return JSON.stringify([spec.command, spec.args, spec.cwd ?? null, env]);
}

/**
 * Spawns a server: pipes on all three streams, a cleared environment, and a process
 * group of its own, so shutdown signals reach every descendant, and a Ctrl+C in the
 * terminal reaches patchbay only, which then closes servers in order.
 */
export function spawnServer(spec: SpawnSpec): Deno.ChildProcess {
  return new Deno.Command(spec.command, {
    args: [...spec.args],
    cwd: spec.cwd,
    env: spec.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
}

/**
 * Starts a server ahead of its transport and returns its pid. A spawn that fails is left
 * for the transport, which tries again and reports the failure where every other start
 * failure is reported.
 */
export function prespawn(spec: SpawnSpec, by: StartedAhead = "command"): number | undefined {
  let child: Deno.ChildProcess;
  try {
    child = spawnServer(spec);
  } catch {
    return undefined;
  }
  keep(spec, child, by);
  return child.pid;
}

/** Puts `child`, started ahead for `spec`, in the pool its transport takes it from. */
function keep(spec: SpawnSpec, child: Deno.ChildProcess, by: StartedAhead): void {
  const key = specKey(spec);
  started.set(key, [...started.get(key) ?? [], child]);
  startedBy.set(child, by);
  signalAtExit();
}

/**
 * Takes over the servers the launcher started for `specs` (`handoff.ts`): each one offered
 * for exactly a spec of theirs goes into the pool, as if started here. Returns how many; an
 * offered server no spec matches is left to the launcher, which ends it.
 */
export async function adoptHandedOff(specs: readonly SpawnSpec[]): Promise<number> {
  const handoff = readHandoff();
  const offered = [...handoff?.servers ?? []];
  let count = 0;
  for (const spec of handoff ? specs : []) {
    const digest = await specDigest(specKey(spec));
    const at = offered.findIndex((server) => server.digest === digest);
    if (at < 0) continue;
    const [server] = offered.splice(at, 1);
    keep(spec, handedOffProcess(handoff!, server), "launcher");
    count++;
  }
  return count;
}

/** Whether {@linkcode signalAtExit} installed its listener. */
let exitListener = false;

/**
 * Makes sure no process started ahead outlives this one, whichever way it exits
 * (`Deno.exit` from the last resort included): at `unload` each unclaimed one's group is
 * sent SIGTERM (an `unload` listener cannot wait; {@linkcode endUnclaimed} is the orderly
 * way, this the backstop).
 */
function signalAtExit(): void {
  if (exitListener) return;
  exitListener = true;
  globalThis.addEventListener("unload", () => {
    for (const child of [...started.values()].flat()) terminateAtExit(child);
  });
}

/**
 * Sends SIGTERM to `child`'s process group without waiting (`Deno.kill`, else the `kill`
 * program, as `signalGroup` does), or to `child` alone where groups cannot be signalled.
 */
function terminateAtExit(child: Deno.ChildProcess): void {
  try {
    Deno.kill(-child.pid, "SIGTERM");
    return;
  } catch {
    // Not granted for every program: the `kill` program may be.
  }
  try {
    const kill = new Deno.Command(KILL_PROGRAM, {
      args: ["-s", "TERM", "--", `-${child.pid}`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    });
    if (kill.outputSync().success) return;
  } catch {
    // Not granted either.
  }
  try {
    child.kill("SIGTERM");
  } catch {
    // Already exited.
  }
}

/** The signals that end the process while processes started early wait for their command. */
const GUARDED_SIGNALS: readonly Deno.Signal[] = ["SIGINT", ...ENDING_SIGNALS];

/** The listeners of {@linkcode guardSignals}, while installed. */
let guard: [Deno.Signal, () => void][] | undefined;

/**
 * While processes started early wait for the command's code to load, a Ctrl+C or an ending
 * signal would take Deno's default action and leave them running (they have process groups
 * of their own, which a terminal's signals do not reach): instead they are ended, then this
 * process exits as the signal would have ended it. The command's own listeners take over
 * when it starts its servers (`prespawnAll` for the command), or when they are ended.
 */
function guardSignals(): void {
  if (guard) return;
  guard = [];
  for (const signal of GUARDED_SIGNALS) {
    const listener = async () => {
      releaseSignals();
      await endUnclaimed();
      Deno.exit(signalExitCode(signal));
    };
    try {
      Deno.addSignalListener(signal, listener);
      guard.push([signal, listener]);
    } catch {
      // Not on this platform.
    }
  }
}

/** Removes {@linkcode guardSignals}' listeners: the default actions, or the command's, apply. */
function releaseSignals(): void {
  for (const [signal, listener] of guard ?? []) Deno.removeSignalListener(signal, listener);
  guard = undefined;
}

/**
 * Starts ahead a process for each of `specs` that has none waiting yet: the early start may
 * have started some already, and a process is started once per entry (two entries with the
 * same spec get two). Returns how many it started.
 */
export function prespawnAll(specs: readonly SpawnSpec[], by: StartedAhead = "command"): number {
  // The command listens for signals before it starts its servers (`withServers`).
  if (by === "command") releaseSignals();
  const wanted = new Map<string, number>();
  let count = 0;
  for (const spec of specs) {
    const key = specKey(spec);
    const nth = (wanted.get(key) ?? 0) + 1;
    wanted.set(key, nth);
    if ((started.get(key)?.length ?? 0) >= nth) continue;
    if (prespawn(spec, by) !== undefined) count++;
  }
  if (by === "early" && count > 0) guardSignals();
  return count;
}

/** Who started `child` ahead; `undefined` for a process its transport started itself. */
export function startedAheadBy(child: Deno.ChildProcess): StartedAhead | undefined {
  return startedBy.get(child);
}

/** The process started ahead for exactly `spec`, taken out of the pool (at most once). */
export function claimPrespawned(spec: SpawnSpec): Deno.ChildProcess | undefined {
  const key = specKey(spec);
  const waiting = started.get(key);
  const child = waiting?.shift();
  if (waiting?.length === 0) started.delete(key);
  return child;
}

/** Ends every process started ahead that no transport claimed, and its process group. */
export async function endUnclaimed(): Promise<void> {
  const children = [...started.values()].flat();
  started.clear();
  releaseSignals();
  await Promise.all(children.map(async (child) => {
    await Promise.all([child.stdin.close(), child.stdout.cancel(), child.stderr.cancel()])
      .catch(() => {});
    if (canSignalGroups()) await terminateGroup(child.pid, UNCLAIMED_TERM_GRACE_MS);
    else await terminateChild(child, UNCLAIMED_TERM_GRACE_MS);
    await child.status;
  }));
}
