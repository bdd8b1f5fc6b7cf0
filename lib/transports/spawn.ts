/**
 * Starting a stdio server's process, possibly before the code that speaks to it is
 * loaded (start-up cost): a server such as server-everything needs about half a second from
 * spawn to answering, and patchbay's own modules (the SDK behind the connections) take a
 * good part of that to load. A command that knows its servers once the configuration is
 * read starts their processes at once ({@linkcode prespawn}); the transport created later
 * for the same entry takes the running process ({@linkcode claimPrespawned}) instead of
 * starting another. Whatever no transport claims is ended ({@linkcode endUnclaimed}).
 *
 * @module
 */

import { canSignalGroups, terminateChild, terminateGroup } from "./process.ts";

/** What a server process is started with (its environment already reduced). */
export interface SpawnSpec {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
}

/** Time an unclaimed process group gets between SIGTERM and SIGKILL. */
const UNCLAIMED_TERM_GRACE_MS = 2000;

/** Processes started ahead, by {@linkcode specKey}, oldest first. */
const started = new Map<string, Deno.ChildProcess[]>();

function specKey(spec: SpawnSpec): string {
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
export function prespawn(spec: SpawnSpec): number | undefined {
  let child: Deno.ChildProcess;
  try {
    child = spawnServer(spec);
  } catch {
    return undefined;
  }
  const key = specKey(spec);
  started.set(key, [...started.get(key) ?? [], child]);
  return child.pid;
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
  await Promise.all(children.map(async (child) => {
    await Promise.all([child.stdin.close(), child.stdout.cancel(), child.stderr.cancel()])
      .catch(() => {});
    if (canSignalGroups()) await terminateGroup(child.pid, UNCLAIMED_TERM_GRACE_MS);
    else await terminateChild(child, UNCLAIMED_TERM_GRACE_MS);
    await child.status;
  }));
}
