/**
 * Which process holds a TCP port, so "port 3000 is taken" can name what to stop.
 *
 * Linux: the listening socket's inode from `/proc/net/tcp{,6}`, then the process whose
 * `/proc/<pid>/fd` links to `socket:[<inode>]`. macOS: `lsof`. Elsewhere, or for another
 * user's process (whose descriptors are not readable), the holder stays unknown.
 *
 * @module
 */

import { MAX_PROC_FILE_BYTES, readBoundedText } from "../files/bounded_read.ts";

/** How the kernel's process and socket tables are read. */
const PROC_BOUND = { what: "a process table", maxBytes: MAX_PROC_FILE_BYTES };

/** A process listening on a port. */
export interface PortHolder {
  pid: number;
  /** Short program name (`/proc/<pid>/comm`, or lsof's command column). */
  name: string;
  /** The full command line, when readable. */
  commandLine?: string;
}

/** `st` value of a listening socket in /proc/net/tcp. */
const TCP_LISTEN = "0A";

/**
 * Inodes of sockets listening on `port` in the text of `/proc/net/tcp` or `/proc/net/tcp6`.
 * Lines look like `0: 0100007F:0BB8 00000000:0000 0A ... <uid> <timeout> <inode> ...`.
 */
export function listeningInodes(procNetTcp: string, port: number): string[] {
  const inodes: string[] = [];
  for (const line of procNetTcp.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const localPort = parseInt(fields[1].split(":").at(-1) ?? "", 16);
    if (localPort === port && fields[3] === TCP_LISTEN && fields[9] !== "0") {
      inodes.push(fields[9]);
    }
  }
  return inodes;
}

/** The process listening on `port`, if it can be found. Never throws. */
export async function findPortHolder(port: number): Promise<PortHolder | undefined> {
  const ways = Deno.build.os === "linux"
    // /proc needs --allow-all under Deno 2, which the start task does not grant: `ss`
    // (iproute2) and `lsof` name the holder under --allow-run alone.
    ? [findOnLinux, findWithSs, findWithLsof]
    : Deno.build.os === "darwin"
    ? [findWithLsof]
    : [];
  for (const way of ways) {
    try {
      const holder = await way(port);
      if (holder) return holder;
    } catch {
      // Finding the holder is a courtesy; the port-busy error stands without it.
    }
  }
  return undefined;
}

/**
 * `ss -Htlnp`: one line per listening socket, `… 127.0.0.1:3000 … users:(("node",pid=42,fd=19))`.
 * Returns the holder of `port` in that text.
 */
export function holderInSsOutput(text: string, port: number): PortHolder | undefined {
  for (const line of text.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (!fields[3]?.endsWith(`:${port}`)) continue;
    const user = /users:\(\("((?:[^"\\]|\\.)*)",pid=(\d+)/.exec(line);
    if (user) return { pid: Number(user[2]), name: user[1] };
  }
  return undefined;
}

async function findWithSs(port: number): Promise<PortHolder | undefined> {
  const output = await new Deno.Command("ss", {
    args: ["-Htlnp"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return holderInSsOutput(new TextDecoder().decode(output.stdout), port);
}

async function findOnLinux(port: number): Promise<PortHolder | undefined> {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readBoundedText(table, PROC_BOUND).catch(() => "");
    for (const inode of listeningInodes(text, port)) inodes.add(inode);
  }
  if (inodes.size === 0) return undefined;
  const targets = new Set([...inodes].map((inode) => `socket:[${inode}]`));
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    if (await holdsSocket(entry.name, targets)) return await describeProcess(Number(entry.name));
  }
  return undefined;
}

async function holdsSocket(pid: string, targets: Set<string>): Promise<boolean> {
  try {
    for await (const fd of Deno.readDir(`/proc/${pid}/fd`)) {
      const link = await Deno.readLink(`/proc/${pid}/fd/${fd.name}`).catch(() => "");
      if (targets.has(link)) return true;
    }
  } catch {
    // Another user's process, or one that just exited.
  }
  return false;
}

async function describeProcess(pid: number): Promise<PortHolder> {
  const name = (await readBoundedText(`/proc/${pid}/comm`, PROC_BOUND).catch(() => "")).trim() ||
    "unknown";
  const raw = await readBoundedText(`/proc/${pid}/cmdline`, PROC_BOUND).catch(() => "");
  const commandLine = raw.split("\0").filter(Boolean).join(" ") || undefined;
  return { pid, name, commandLine };
}

async function findWithLsof(port: number): Promise<PortHolder | undefined> {
  const output = await new Deno.Command("lsof", {
    args: ["-nP", `-iTCP:${port}`, "-sTCP:LISTEN", "-Fpc"],
    stdout: "piped",
    stderr: "null",
  }).output();
  let pid: number | undefined;
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    if (line.startsWith("p")) pid = Number(line.slice(1));
    if (line.startsWith("c") && pid !== undefined) return { pid, name: line.slice(1) };
  }
  return undefined;
}

/** `node (pid 1234)`, for messages. */
export function describeHolder(holder: PortHolder): string {
  return `${holder.name} (pid ${holder.pid})`;
}
