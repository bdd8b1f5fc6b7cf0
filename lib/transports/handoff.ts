/**
 * Servers handed over by the launcher (start-up cost): for `tools`, `prompts` and
 * `resources` under a remembered plan, the launcher starts the stdio servers' processes
 * before it starts the client (`handoff_relay.ts`), so a server boots while two Deno
 * programs start and the client's code loads. Deno cannot pass a pipe to another process,
 * so the launcher keeps the server's pipes and offers them on a loopback port the system
 * picks; the client reaches each server as if it had started the process itself
 * ({@linkcode handedOffProcess}). (A Unix socket would need a path fixed in advance in the
 * launcher's `--allow-net`; `127.0.0.1:0` names any port the system gives.)
 *
 * Each connection opens with a header ({@linkcode header}): the launch's secret token (any
 * local account can reach a loopback port; only the client knows the token), the stream
 * it carries ({@linkcode STREAM}: stdin and stdout together, stderr, or the exit status as
 * one JSON line once the process ends) and the server's index. The client learns of them
 * from {@linkcode HANDOFF_VARIABLE}: the port, the token, the processes' pids, and a digest
 * of what each was started with ({@linkcode specDigest}), so the client takes a process
 * only for the very entry it would start.
 *
 * @module
 */

import { readVariable } from "../deno_permission/launched.ts";

/** The variable the launcher sets to the servers it hands over (JSON, {@linkcode Handoff}). */
export const HANDOFF_VARIABLE = "PATCHBAY_HANDOFF";

/** The first byte of a connection to a handed-over server: which stream it carries. */
export const STREAM = {
  /** The client writes the server's stdin and reads its stdout. */
  io: 0x69,
  /** The server's stderr. */
  stderr: 0x65,
  /** The server's exit status, one JSON line ({@linkcode ExitLine}) once it ends. */
  exit: 0x78,
} as const;

/** Bytes of the launch's secret token. */
export const TOKEN_BYTES = 32;

/** One server the launcher started. */
export interface HandedOff {
  /** {@linkcode specDigest} of what it was started with. */
  digest: string;
  /** Its pid, which is also its process group. */
  pid: number;
  /** Its index in the header of a connection ({@linkcode header}). */
  index: number;
}

/** What {@linkcode HANDOFF_VARIABLE} holds. */
export interface Handoff {
  /** The loopback port the launcher offers the servers on. */
  port: number;
  /** The launch's secret ({@linkcode TOKEN_BYTES} bytes, hexadecimal). */
  token: string;
  servers: HandedOff[];
}

/** The header a connection opens with: the token, the stream, the server's index. */
export function header(token: string, stream: number, index: number): Uint8Array {
  const bytes = new Uint8Array(TOKEN_BYTES + 2);
  for (let i = 0; i < TOKEN_BYTES; i++) bytes[i] = parseInt(token.slice(2 * i, 2 * i + 2), 16);
  bytes[TOKEN_BYTES] = stream;
  bytes[TOKEN_BYTES + 1] = index;
  return bytes;
}

/** The exit status the launcher sends on the {@linkcode STREAM}.exit connection. */
export interface ExitLine {
  code: number;
  signal: Deno.Signal | null;
}

/**
 * A SHA-256 digest of `key`, what a server process was started with as `spawn.ts` keys it
 * (command, arguments, folder and every variable): the launcher and the client compare
 * these rather than the values, which may hold secrets from .env.
 */
export async function specDigest(key: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return toHex(new Uint8Array(bytes));
}

/** `bytes` as lowercase hexadecimal. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * What the launcher handed over, read from {@linkcode HANDOFF_VARIABLE}; `undefined` when
 * it is unset, not readable under the grants, or malformed.
 */
export function readHandoff(
  get: (name: string) => string | undefined = readVariable,
): Handoff | undefined {
  const text = get(HANDOFF_VARIABLE);
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Handoff;
    if (
      !Number.isInteger(value?.port) || value.port <= 0 || value.port > 65535 ||
      typeof value.token !== "string" || !/^[0-9a-f]+$/.test(value.token) ||
      value.token.length !== 2 * TOKEN_BYTES || !Array.isArray(value.servers)
    ) return undefined;
    const servers = value.servers.filter((s) =>
      typeof s?.digest === "string" && Number.isSafeInteger(s.pid) && s.pid > 0 &&
      Number.isInteger(s.index) && s.index >= 0 && s.index < 256
    );
    return { port: value.port, token: value.token, servers };
  } catch {
    return undefined;
  }
}

/** Opens one stream of `server`: connects and sends the header. */
async function openStream(
  handoff: Handoff,
  server: HandedOff,
  stream: number,
): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: handoff.port });
  try {
    await writeAll(conn, header(handoff.token, stream, server.index));
  } catch (error) {
    conn.close();
    throw error;
  }
  return conn;
}

/** Writes all of `bytes` to `conn`. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await conn.write(bytes.subarray(written));
  }
}

/** Bytes read from a connection at a time. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A readable stream of what `conn` receives, read with `read` rather than `conn.readable`:
 * Deno closes the whole connection when its readable ends, and the other direction of a
 * stream connection must outlive it (stdin may be written after stdout ended, and the other
 * way round).
 */
export function connReadable(
  conn: Promise<Deno.Conn>,
  onDone: () => void = () => {},
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const buffer = new Uint8Array(CHUNK_BYTES);
        const read = await (await conn).read(buffer);
        if (read === null) {
          controller.close();
          onDone();
        } else controller.enqueue(buffer.subarray(0, read));
      } catch {
        // The launcher went away or the connection was closed: the stream ends.
        controller.close();
        onDone();
      }
    },
    cancel() {
      onDone();
    },
  });
}

/**
 * The handed-over `server` as the transport uses a child process: its stdin, stdout,
 * stderr, exit status and pid. A launcher gone away reads as a process that ended (status
 * 1, no signal), which the transport reports as it reports any server that exits.
 */
export function handedOffProcess(handoff: Handoff, server: HandedOff): Deno.ChildProcess {
  const io = openStream(handoff, server, STREAM.io);
  // Unhandled here, a refused connection surfaces through the streams that use it.
  io.catch(() => {});
  let readDone = false;
  let writeDone = false;
  // The connection closes once both directions are done with it.
  const settle = () => {
    if (readDone && writeDone) io.then((c) => c.close()).catch(() => {});
  };
  const stdout = connReadable(io, () => {
    readDone = true;
    settle();
  });
  const stdin = new WritableStream<Uint8Array>({
    write: async (chunk) => await writeAll(await io, chunk),
    close: async () => {
      try {
        await (await io).closeWrite();
      } catch {
        // Gone already: nothing more reaches the server either way.
      }
      writeDone = true;
      settle();
    },
    abort: () => {
      writeDone = true;
      settle();
    },
  });
  const errors = openStream(handoff, server, STREAM.stderr);
  errors.catch(() => {});
  const stderr = connReadable(errors, () => errors.then((c) => c.close()).catch(() => {}));
  const status = readExit(handoff, server);
  return {
    pid: server.pid,
    stdin,
    stdout,
    stderr,
    status,
    kill: (signal?: Deno.Signal) => Deno.kill(server.pid, signal),
    ref() {},
    unref() {},
    output: () => Promise.reject(new Error("a handed-over server has no collected output")),
    [Symbol.asyncDispose]: async () => {
      await status;
    },
  } as unknown as Deno.ChildProcess;
}

/** The most bytes an exit line may take: a code and a signal name. */
const MAX_EXIT_LINE_BYTES = 256;

/** The exit status the launcher reports for `server`; status 1 when it cannot be read. */
async function readExit(handoff: Handoff, server: HandedOff): Promise<Deno.CommandStatus> {
  const failed: Deno.CommandStatus = { success: false, code: 1, signal: null };
  let conn: Deno.TcpConn;
  try {
    conn = await openStream(handoff, server, STREAM.exit);
  } catch {
    return failed;
  }
  try {
    let text = "";
    const buffer = new Uint8Array(MAX_EXIT_LINE_BYTES);
    for (;;) {
      const read = await conn.read(buffer);
      if (read === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, read));
      if (text.length > MAX_EXIT_LINE_BYTES) return failed;
    }
    const line = JSON.parse(text) as ExitLine;
    if (!Number.isInteger(line.code)) return failed;
    return { success: line.code === 0 && !line.signal, code: line.code, signal: line.signal };
  } catch {
    return failed;
  } finally {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
}
