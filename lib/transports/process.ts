/**
 * What a server process tree needs beyond `Deno.Command`: a minimal environment, a
 * process group that can be signalled as a whole (so `npx` → `sh` → `node` chains die
 * together), and, on Linux, a look at which processes are still alive and which TCP
 * ports they listen on (used to diagnose a stdio entry whose process serves HTTP).
 *
 * @module
 */

import { delay } from "../async/delay.ts";
import { MAX_PROC_FILE_BYTES, readBoundedTextSync } from "../files/bounded_read.ts";

/** How the kernel's process and socket tables are read. */
const PROC_BOUND = { what: "a process table", maxBytes: MAX_PROC_FILE_BYTES };

/**
 * The only variables a server process inherits from patchbay's environment. Everything
 * else (LLM_API_KEY, REDIS_*, cloud credentials) stays out unless the entry's `env`
 * names it: a server is third-party code.
 */
export const INHERITED_ENV_NAMES: readonly string[] = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
];

/**
 * The environment of a server process: the inherited names from `parent`, then the
 * entry's own `env` (which wins).
 */
export function childEnvironment(
  entryEnv: Readonly<Record<string, string>>,
  parent: (name: string) => string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV_NAMES) {
    const value = parent(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...entryEnv };
}

/** How often a dying process group is checked. */
const GROUP_POLL_MS = 25;

let procFs: boolean | undefined;

/**
 * True when `/proc` can answer questions about processes: Linux, and a Deno allowed to
 * read it (Deno requires `--allow-all` for `/proc`, so not under patchbay's own flags).
 */
export function hasProcFs(): boolean {
  procFs ??= (() => {
    try {
      return Deno.statSync("/proc/self/stat").isFile;
    } catch {
      return false;
    }
  })();
  return procFs;
}

/** One line of `/proc/<pid>/stat`, the fields patchbay reads. */
interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgid: number;
}

function readStat(pid: number | "self"): ProcStat | undefined {
  let text: string;
  try {
    text = readBoundedTextSync(`/proc/${pid}/stat`, PROC_BOUND);
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may itself hold spaces or parentheses.
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  return {
    pid: Number(text.slice(0, text.indexOf(" "))),
    state: fields[0],
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
  };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const stat = readStat(Number(entry.name));
      if (stat) stats.push(stat);
    }
  } catch {
    // No /proc: callers fall back to signals alone.
  }
  return stats;
}

/** Living (not zombie) processes of process group `pgid`, Linux only. */
export function groupMembers(pgid: number): number[] {
  return allStats().filter((s) => s.pgid === pgid && s.state !== "Z").map((s) => s.pid);
}

/** `pid` and its living descendants, Linux only. */
export function processTree(pid: number): number[] {
  const stats = allStats().filter((s) => s.state !== "Z");
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const s of stats) if (s.ppid === tree[i]) tree.push(s.pid);
  }
  return tree.filter((p) => stats.some((s) => s.pid === p));
}

/**
 * The program that signals a process group when `Deno.kill` may not: `Deno.kill` needs
 * `--allow-run` for every program, while `--allow-run=<commands>` (the narrow flags
 * `patchbay permissions` prints, which list this program) allows running `kill` itself.
 */
export const KILL_PROGRAM = "kill";

/** How process groups can be signalled here, if at all. */
type GroupSignalling = "deno" | "program";

function groupSignalling(): GroupSignalling | undefined {
  if (Deno.permissions.querySync({ name: "run" }).state === "granted") return "deno";
  return Deno.permissions.querySync({ name: "run", command: KILL_PROGRAM }).state === "granted"
    ? "program"
    : undefined;
}

/**
 * Sends `signal` to every process of group `pgid` (`0` only checks that one exists); false
 * when the group is gone or cannot be signalled.
 */
export async function signalGroup(pgid: number, signal: Deno.Signal | 0): Promise<boolean> {
  const how = groupSignalling();
  if (how === "deno") {
    try {
      // Deno.kill has no signal 0; SIGCONT is harmless to a running process.
      Deno.kill(-pgid, signal === 0 ? "SIGCONT" : signal);
      return true;
    } catch {
      return false;
    }
  }
  if (how !== "program") return false;
  try {
    const { success } = await new Deno.Command(KILL_PROGRAM, {
      args: ["-s", signal === 0 ? "0" : signal.replace(/^SIG/, ""), "--", `-${pgid}`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/**
 * Whether any process of group `pgid` is left. With `/proc` (Linux, and only under
 * `--allow-all`: Deno guards it) zombies are told apart; elsewhere a probe without effect
 * asks the group (a zombie then still counts until it is reaped).
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  return hasProcFs() ? groupMembers(pgid).length > 0 : await signalGroup(pgid, 0);
}

/**
 * Whether this process may signal process groups: with `--allow-run` for every program
 * (`Deno.kill`), or with the `kill` program allowed. Otherwise only a child's own handle
 * can signal it, and what it started may outlive it.
 */
export function canSignalGroups(): boolean {
  return groupSignalling() !== undefined;
}

/**
 * Ends one child through its own handle, where process groups cannot be signalled:
 * SIGTERM, then SIGKILL after `graceMs`. Its descendants are not reached (they see their
 * stdin close when it dies).
 */
export async function terminateChild(child: Deno.ChildProcess, graceMs: number): Promise<void> {
  const exited = child.status.then(() => true);
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    try {
      child.kill(signal);
    } catch {
      return; // Already exited.
    }
    if (await Promise.race([exited, delay(graceMs).then(() => false)])) return;
  }
}

/**
 * Ends what is left of a process group: SIGTERM, then SIGKILL for whatever still runs
 * after `graceMs`. Resolves once no member is left (or `graceMs` after the SIGKILL).
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await groupAlive(pgid)) || !(await signalGroup(pgid, "SIGTERM"))) return;
  if (await gone(pgid, graceMs)) return;
  await signalGroup(pgid, "SIGKILL");
  // SIGKILL cannot be ignored; the wait lets the kernel finish.
  await gone(pgid, graceMs);
}

async function gone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await delay(GROUP_POLL_MS);
    if (!(await groupAlive(pgid))) return true;
  }
  return false;
}

/** TCP ports the processes `pids` listen on, from `/proc` (Linux only; else empty). */
export function listeningPorts(pids: readonly number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
        try {
          const link = Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`);
          const match = /^socket:\[(\d+)\]$/.exec(link);
          if (match) inodes.add(match[1]);
        } catch {
          // The descriptor closed meanwhile.
        }
      }
    } catch {
      // Not ours to read, or gone.
    }
  }
  if (inodes.size === 0) return [];
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readBoundedTextSync(table, PROC_BOUND);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl local_address rem_address st ... inode (index 9); st 0A = LISTEN
      if (fields.length < 10 || fields[3] !== "0A" || !inodes.has(fields[9])) continue;
      ports.add(parseInt(fields[1].split(":")[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
