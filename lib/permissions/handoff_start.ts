/**
 * Which servers the launcher starts before the client (start-up cost, `lib/transports/
 * handoff.ts`): those the client's own early start would start (`lib/early_start.ts`: the
 * stdio servers of `tools`, `prompts` and `resources` in their plain form), read by the same
 * reader from the same files, and only under a plan computed from those files whose
 * `--allow-run` lets the client run each of them. So the launcher starts nothing the client
 * could not start itself at that moment, with the same command, arguments, folder and
 * environment; anything it is unsure of, the client starts as before.
 *
 * @module
 */

import { earlyStartFlags } from "../early_start.ts";
import { readStdioEntries } from "../config/stdio_entries.ts";
import { stdioSpawnSpecs } from "../transports/spawn.ts";
import { type Relay, startRelay } from "../transports/handoff_relay.ts";
import { HANDOFF_VARIABLE } from "../transports/handoff.ts";
import { resolveCommandPath } from "./command_path.ts";

/** What the client is started with to take the servers over: its grants and variables. */
export interface HandOver {
  relay: Relay;
  /** The plan's flags the servers were started under. */
  plan: readonly string[];
  /** Flags added to the plan's for this run: the sockets and the variable naming them. */
  flags: string[];
  env: Record<string, string>;
}

/**
 * Starts the servers the client `clientArgs` will connect first, when the plan `flags`
 * (computed from the configuration, not the fallback) runs them; `undefined` otherwise.
 * `cwd` is the client's working folder, `project` patchbay's own folder.
 */
export async function handOver(
  clientArgs: readonly string[],
  flags: readonly string[],
  cwd: string,
  project: string,
): Promise<HandOver | undefined> {
  const root = earlyStartFlags(clientArgs);
  if (!root) return undefined;
  const allowed = allowedRun(flags);
  if (allowed.size === 0) return undefined;
  // The reader finds relative paths from the working folder, as it does in the client.
  const before = Deno.cwd();
  let read;
  try {
    Deno.chdir(cwd);
    read = await readStdioEntries(root, project);
  } catch {
    return undefined;
  } finally {
    Deno.chdir(before);
  }
  if (!read) return undefined;
  const specs = stdioSpawnSpecs(read.servers, (name) => read.env.get(name));
  if (specs.length === 0) return undefined;
  const runnable = specs.every((spec) => {
    if (allowed.has(spec.command)) return true;
    const path = resolveCommandPath(spec.command, spec.env.PATH, spec.cwd ?? cwd);
    return path !== undefined && allowed.has(path);
  });
  if (!runnable) return undefined;
  const relay = await startRelay(specs);
  if (!relay) return undefined;
  return {
    relay,
    plan: [...flags],
    flags: [...relay.flags, `--allow-env=${HANDOFF_VARIABLE}`].filter((grant) =>
      // A plan granting all of a kind keeps it: a list given after it would narrow it.
      !flags.includes(grant.slice(0, grant.indexOf("=")))
    ),
    env: { [HANDOFF_VARIABLE]: JSON.stringify(relay.handoff) },
  };
}

/** The programs `--allow-run=…` grants in `flags` (none for a bare `--allow-run`). */
function allowedRun(flags: readonly string[]): Set<string> {
  const allowed = new Set<string>();
  for (const flag of flags) {
    const match = /^--allow-run=(.+)$/.exec(flag);
    if (match) { for (const program of match[1].split(",")) allowed.add(program); }
  }
  return allowed;
}
