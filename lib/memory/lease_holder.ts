/**
 * Whether the process holding a conversation's lease is gone, when that can be known:
 * only for a holder on this machine (the same host name), whose process id no longer runs.
 * Its lease is then taken over at once instead of being waited out. A holder on another
 * machine, or one whose process cannot be asked about, is taken to be running: its lease
 * ends when it stops renewing it (`lease.ts`).
 *
 * A process is asked about with `kill -0 <pid>` (no signal is sent), through the `kill`
 * program the permission plan grants; only "No such process" counts as gone, never a
 * refusal (a process of another user is running). The host name needs `--allow-sys=hostname`.
 *
 * @module
 */

import { KILL_PROGRAM } from "../transports/process.ts";

/** What of a lease holder (`lease.ts`) tells whether it is gone. */
interface Holder {
  token: string;
  pid: number;
  host?: string;
}

/** This machine's name, or `undefined` when Deno may not read it. */
export function hostName(): string | undefined {
  try {
    return Deno.hostname();
  } catch {
    return undefined;
  }
}

/**
 * Whether `holder`, another process than `self`, ran on this machine and has ended. A
 * process id of this machine that is `self`'s own, with another token, was a process that
 * ended (its id is ours now).
 */
export async function holderGone(holder: Holder, self: Holder): Promise<boolean> {
  if (holder.token === self.token || !holder.host || holder.host !== self.host) return false;
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return false;
  if (holder.pid === self.pid) return true;
  return await processRuns(holder.pid) === false;
}

/** Whether process `pid` runs here; `undefined` when this process may not ask. */
async function processRuns(pid: number): Promise<boolean | undefined> {
  if (Deno.permissions.querySync({ name: "run", command: KILL_PROGRAM }).state !== "granted") {
    return undefined;
  }
  try {
    const { success, stderr } = await new Deno.Command(KILL_PROGRAM, {
      args: ["-0", String(pid)],
      // The message is read: in English whatever the person's locale.
      env: { LC_ALL: "C" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (success) return true;
    return /no such process/i.test(new TextDecoder().decode(stderr)) ? false : undefined;
  } catch {
    return undefined;
  }
}
