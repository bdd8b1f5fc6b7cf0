/**
 * The one way patchbay reads a file: only a regular file (a link is followed, and where it
 * leads must be one too), and only up to a bound that names its policy. A configuration,
 * `.env`, an imported client's file or the approvals file may come from someone else (a
 * cloned project, a shared machine): linked to `/dev/zero` it would be read until memory
 * runs out, a FIFO would block every command, shell Tab completion included. Each refusal
 * says what the file is and what to do ({@linkcode UnreadableFileError}).
 *
 * The kind is judged before the file is opened (opening a FIFO blocks until a writer comes)
 * and again on the opened handle, and the read stops one byte past the bound whatever the
 * file claims its size is (`/proc` files say 0; a growing file says less). A directory is
 * left to the caller as Deno reports it (`Deno.errors.IsADirectory`), as is a missing file
 * (`Deno.errors.NotFound`). No npm imports: the launcher reads through here too.
 *
 * @module
 */

import { type ErrorCode, UnreadableFileError } from "../errors.ts";

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * Largest servers_config.json (and any patchbay configuration): a hundred servers take
 * about 20 KiB, so 4 MiB is far beyond a real one and still cheap to parse.
 */
export const MAX_CONFIG_BYTES = 4 * MIB;
/**
 * Largest file of another client read by `mcp import`: Claude Code's `~/.claude.json` keeps
 * every project's history beside its servers and grows to several MiB in real use.
 */
export const MAX_IMPORTED_FILE_BYTES = 32 * MIB;
/** Largest `.env`: variables, not data. */
export const MAX_ENV_FILE_BYTES = 1 * MIB;
/** Largest approvals.json: about 400 bytes an approval, so some twenty thousand of them. */
export const MAX_APPROVALS_BYTES = 8 * MIB;
/** Largest small state file patchbay writes itself (a lease, a restart request, a plan). */
export const MAX_STATE_FILE_BYTES = 1 * MIB;
/** Largest key or certificate file (a PEM chain of a few certificates is some 10 KiB). */
export const MAX_KEY_FILE_BYTES = 1 * MIB;
/** Largest prompt history read back (its lines are bounded when written). */
export const MAX_HISTORY_BYTES = 16 * MIB;
/** Largest conversation file read whole (a session of thousands of messages is a few MiB). */
export const MAX_SESSION_FILE_BYTES = 256 * MIB;
/**
 * Largest table the kernel gives under `/proc` (a socket table: some 150 bytes a socket,
 * so hundreds of thousands of sockets).
 */
export const MAX_PROC_FILE_BYTES = 64 * MIB;
/** Largest file of patchbay's own code read by the launcher (`deno.json`, `deno.lock`). */
export const MAX_MANIFEST_BYTES = 16 * MIB;

/** How a file is read: what it is, for messages, and its bound. */
export interface ReadBound {
  /** What the file is, for messages: `the configuration file`, `the approvals file`. */
  what: string;
  /** Bytes read at most; a larger file is refused. */
  maxBytes: number;
  /** The code of the refusal. @default "config_invalid" */
  code?: ErrorCode;
  /** What else the person can do, added to the refusal's remedy. */
  remedy?: string;
}

/** Decodes as Deno.readTextFile does: a byte-order mark is kept (an edit writes it back). */
const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Bytes asked of the kernel at a time. */
const CHUNK_BYTES = 64 * KIB;

/** The whole of the regular file `path`, at most `bound.maxBytes` of it. */
export async function readBoundedFile(path: string, bound: ReadBound): Promise<Uint8Array> {
  judgeKind(path, await Deno.stat(path), bound);
  const file = await Deno.open(path, { read: true });
  try {
    // Replaced between the look and the open: the handle is what is read.
    const opened = await file.stat().catch(unlessNotCapable);
    if (opened) judgeKind(path, opened, bound);
    const chunks: Uint8Array[] = [];
    let total = 0;
    while (true) {
      const buffer = new Uint8Array(Math.min(CHUNK_BYTES, bound.maxBytes + 1 - total));
      const count = await file.read(buffer);
      if (count === null) break;
      chunks.push(buffer.subarray(0, count));
      total += count;
      if (total > bound.maxBytes) throw tooLarge(path, total, bound);
    }
    return concat(chunks, total);
  } finally {
    file.close();
  }
}

/** {@linkcode readBoundedFile}, decoded as UTF-8 (a bad sequence becomes U+FFFD). */
export async function readBoundedText(path: string, bound: ReadBound): Promise<string> {
  return UTF8.decode(await readBoundedFile(path, bound));
}

/** {@linkcode readBoundedFile}, synchronously (the launcher, shell completion). */
export function readBoundedFileSync(path: string, bound: ReadBound): Uint8Array {
  judgeKind(path, Deno.statSync(path), bound);
  const file = Deno.openSync(path, { read: true });
  try {
    let opened: Deno.FileInfo | undefined;
    try {
      opened = file.statSync();
    } catch (error) {
      unlessNotCapable(error);
    }
    if (opened) judgeKind(path, opened, bound);
    const chunks: Uint8Array[] = [];
    let total = 0;
    while (true) {
      const buffer = new Uint8Array(Math.min(CHUNK_BYTES, bound.maxBytes + 1 - total));
      const count = file.readSync(buffer);
      if (count === null) break;
      chunks.push(buffer.subarray(0, count));
      total += count;
      if (total > bound.maxBytes) throw tooLarge(path, total, bound);
    }
    return concat(chunks, total);
  } finally {
    file.close();
  }
}

/** {@linkcode readBoundedFileSync}, decoded as UTF-8. */
export function readBoundedTextSync(path: string, bound: ReadBound): string {
  return UTF8.decode(readBoundedFileSync(path, bound));
}

/**
 * Nothing for Deno's refusal to describe an opened link (its `fstat` asks for the right to
 * read where the link leads, which a narrow plan grants only by the link's name): the look
 * at the path stands then. Anything else is thrown.
 */
function unlessNotCapable(error: unknown): undefined {
  if (error instanceof Deno.errors.NotCapable) return undefined;
  throw error;
}

/**
 * Refuses `path` unless it is a regular file within the bound, for a reader that reads
 * only part of it (the start or the end of a conversation) through a handle of its own.
 */
export async function requireRegularFile(path: string, bound: ReadBound): Promise<void> {
  judgeKind(path, await Deno.stat(path), bound);
}

/**
 * Refuses what is not a regular file (a directory is Deno's `IsADirectory`, as reading one
 * would report), and a regular file already known to be too large.
 */
function judgeKind(path: string, info: Deno.FileInfo, bound: ReadBound): void {
  if (info.isDirectory) throw new Deno.errors.IsADirectory(`${path} is a directory`);
  if (!info.isFile) {
    throw new UnreadableFileError(bound.what, path, {
      kind: kindOf(info),
      target: linkTarget(path),
      code: bound.code,
      remedy: bound.remedy,
    });
  }
  if (info.size > bound.maxBytes) throw tooLarge(path, info.size, bound);
}

function tooLarge(path: string, size: number, bound: ReadBound): UnreadableFileError {
  return new UnreadableFileError(bound.what, path, {
    size,
    maxBytes: bound.maxBytes,
    target: linkTarget(path),
    code: bound.code,
    remedy: bound.remedy,
  });
}

/** What a file that is not a regular one is, in words. */
function kindOf(info: Deno.FileInfo): string {
  if (info.isFifo) return "a named pipe (FIFO)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

/** Where a link at `path` leads; `undefined` when it is no link. */
function linkTarget(path: string): string | undefined {
  try {
    if (!Deno.lstatSync(path).isSymlink) return undefined;
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
