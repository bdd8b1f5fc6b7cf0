/**
 * The launcher's side of the hand-over (`handoff.ts`): it starts the stdio servers before
 * the client, offers them on a loopback port, and copies bytes between each connection and
 * the process's pipes until the client is done. It reads none of them: the client speaks to
 * the server as before, under its own narrow plan.
 *
 * A connection is served only when its header carries the launch's token, for a stream of a
 * server not taken yet; any other is closed unread, as is one that sends no header within
 * {@linkcode HEADER_TIMEOUT_MS}, or the oldest of more than {@linkcode MAX_PENDING_HEADERS}. Once
 * the client has ended, whatever it left running is ended with its process group
 * ({@linkcode Relay.close}).
 *
 * @module
 */

import {
  type ExitLine,
  type HandedOff,
  type Handoff,
  specDigest,
  STREAM,
  toHex,
  TOKEN_BYTES,
  writeAll,
} from "./handoff.ts";
import { spawnServer, type SpawnSpec, specKey } from "./spawn.ts";
import { canSignalGroups, terminateGroup } from "./process.ts";

/** Time a server the client left running gets between SIGTERM and SIGKILL. */
const LEFT_RUNNING_TERM_GRACE_MS = 2000;

/** Time a connection has to send its header before it is closed. */
const HEADER_TIMEOUT_MS = 10_000;

/**
 * Connections waiting to send their header at once; past it the oldest is closed, so a local
 * process opening connections without end cannot exhaust the launcher's descriptors, nor
 * keep the client's out.
 */
const MAX_PENDING_HEADERS = 16;

/** Bytes copied from a connection at a time. */
const CHUNK_BYTES = 64 * 1024;

/** The grant the launcher listens under: a loopback port the system picks. */
export const RELAY_LISTEN = { name: "net", host: "127.0.0.1:0" } as const;

/** Servers started for a client, and how to end what it leaves. */
export interface Relay {
  /** What the client is told ({@linkcode Handoff}, the value of `HANDOFF_VARIABLE`). */
  handoff: Handoff;
  /** The grant the client needs to reach the port. */
  flags: string[];
  /** Ends every server still running and stops listening (once; later calls wait for it). */
  close(): Promise<void>;
}

/** One server offered. */
interface Offered {
  child: Deno.ChildProcess;
  /** The streams connected so far. */
  taken: Set<number>;
  copies: Promise<void>[];
}

/**
 * Starts a process for each of `specs` and offers them on a loopback port. `undefined`
 * when the launcher may not listen or nothing could be started: the client then starts
 * its servers itself, as it does without a launcher.
 */
export async function startRelay(specs: readonly SpawnSpec[]): Promise<Relay | undefined> {
  if (Deno.permissions.querySync(RELAY_LISTEN).state !== "granted") return undefined;
  let listener: Deno.TcpListener;
  try {
    listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  } catch {
    return undefined;
  }
  const offered: Offered[] = [];
  const servers: HandedOff[] = [];
  for (const spec of specs.slice(0, 256)) {
    let child: Deno.ChildProcess;
    try {
      child = spawnServer(spec);
    } catch {
      continue; // The client starts it and reports why it cannot.
    }
    servers.push({
      digest: await specDigest(specKey(spec)),
      pid: child.pid,
      index: offered.length,
    });
    offered.push({ child, taken: new Set(), copies: [] });
  }
  if (offered.length === 0) {
    listener.close();
    return undefined;
  }
  const token = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES));
  const pending = new Set<Deno.Conn>();
  const accepting = accept(listener, token, offered, pending);
  let closing: Promise<void> | undefined;
  return {
    handoff: {
      port: listener.addr.port,
      token: toHex(token),
      servers,
    },
    flags: [`--allow-net=127.0.0.1:${listener.addr.port}`],
    close: () =>
      closing ??= (async () => {
        closeQuietly(listener);
        for (const conn of pending) closeQuietly(conn);
        await accepting;
        await Promise.all(offered.map(async (server) => {
          await endProcess(server.child);
          await Promise.allSettled(server.copies);
        }));
      })(),
  };
}

/** Accepts connections until every stream of every server is taken or the relay closes. */
async function accept(
  listener: Deno.TcpListener,
  token: Uint8Array,
  offered: Offered[],
  pending: Set<Deno.Conn>,
): Promise<void> {
  const wanted = offered.length * 3;
  let served = 0;
  try {
    for await (const conn of listener) {
      // Headers are read apart from accepting: a connection that sends none holds nothing up.
      if (pending.size >= MAX_PENDING_HEADERS) {
        // The oldest goes: the client sends its header as it connects, so a wait is not its.
        const [oldest] = pending;
        pending.delete(oldest);
        closeQuietly(oldest);
      }
      pending.add(conn);
      readHeader(conn, token).then((found) => {
        pending.delete(conn);
        const server = found && offered[found.index];
        if (!found || !server || server.taken.has(found.stream)) return closeQuietly(conn);
        server.taken.add(found.stream);
        server.copies.push(copyStream(server.child, conn, found.stream));
        if (++served === wanted) closeQuietly(listener);
      });
    }
  } catch {
    // Closed: every stream is taken, or the client has ended.
  }
}

/** The stream and server a connection's header names; `undefined` for a wrong header. */
async function readHeader(
  conn: Deno.Conn,
  token: Uint8Array,
): Promise<{ stream: number; index: number } | undefined> {
  const bytes = new Uint8Array(TOKEN_BYTES + 2);
  const timer = setTimeout(() => closeQuietly(conn), HEADER_TIMEOUT_MS);
  try {
    for (let got = 0; got < bytes.length;) {
      const read = await conn.read(bytes.subarray(got));
      if (read === null) return undefined;
      got += read;
    }
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
  let differs = 0;
  for (let i = 0; i < TOKEN_BYTES; i++) differs |= bytes[i] ^ token[i];
  const stream = bytes[TOKEN_BYTES];
  if (differs !== 0 || !(Object.values(STREAM) as number[]).includes(stream)) return undefined;
  return { stream, index: bytes[TOKEN_BYTES + 1] };
}

/** Copies one stream between `child` and `conn` until either side ends. */
async function copyStream(child: Deno.ChildProcess, conn: Deno.Conn, stream: number) {
  try {
    if (stream === STREAM.io) {
      await Promise.allSettled([toChild(conn, child.stdin), fromChild(child.stdout, conn)]);
    } else if (stream === STREAM.stderr) {
      await fromChild(child.stderr, conn);
    } else {
      const status = await child.status;
      const line: ExitLine = { code: status.code, signal: status.signal };
      await writeAll(conn, new TextEncoder().encode(JSON.stringify(line) + "\n"));
    }
  } catch {
    // The client went away: what it left running is ended when the launcher closes.
  } finally {
    closeQuietly(conn);
  }
}

/** The client's writes, to the server's stdin; closed when the client closes its side. */
async function toChild(conn: Deno.Conn, stdin: WritableStream<Uint8Array>): Promise<void> {
  const writer = stdin.getWriter();
  try {
    const buffer = new Uint8Array(CHUNK_BYTES);
    for (;;) {
      const read = await conn.read(buffer);
      if (read === null) break;
      await writer.write(buffer.slice(0, read));
    }
  } finally {
    await writer.close().catch(() => {});
  }
}

/** A server's output, to the client; the client's side then reads its end. */
async function fromChild(output: ReadableStream<Uint8Array>, conn: Deno.Conn): Promise<void> {
  try {
    for await (const chunk of output) await writeAll(conn, chunk);
  } finally {
    await conn.closeWrite().catch(() => {});
  }
}

/** Ends `child` and its process group if it still runs, and waits for it. */
async function endProcess(child: Deno.ChildProcess): Promise<void> {
  await child.stdin.close().catch(() => {});
  if (canSignalGroups()) await terminateGroup(child.pid, LEFT_RUNNING_TERM_GRACE_MS);
  else {
    try {
      child.kill("SIGTERM");
    } catch {
      // Ended already.
    }
  }
  await Promise.allSettled([child.stdout.cancel(), child.stderr.cancel()]);
  await child.status;
}

function closeQuietly(closer: { close(): void }): void {
  try {
    closer.close();
  } catch {
    // Closed already.
  }
}
