/**
 * Crash-safe append-only files of JSON lines: the embedded session store and the Redis
 * outage journal both keep their data this way.
 *
 * Why this holds up after `kill -9` or a power cut:
 * - every append is one `write` of whole lines to a file opened with O_APPEND, followed by
 *   `fdatasync`; the caller is told "saved" only after both returned, so an acknowledged
 *   line is on the disk;
 * - a write cut short (the kernel stops a large write when the process is killed, or the
 *   disk fills) leaves at most one torn line at the end; readers skip it, and the next
 *   append starts with a newline that seals it off, so it never glues itself to a record;
 * - nothing is ever rewritten in place, so an old record cannot be damaged by a new one.
 *
 * @module
 */

import { dirname } from "node:path";
import {
  MAX_SESSION_FILE_BYTES,
  type ReadBound,
  readBoundedText,
  requireRegularFile,
} from "../files/bounded_read.ts";

/** Owner-only: conversations can hold anything a person typed or a tool returned. */
export const PRIVATE_FILE_MODE = 0o600;
/** Owner-only directories for the same reason. */
export const PRIVATE_DIR_MODE = 0o700;

/** How a conversation's (or the journal's) file is read: a regular file, within a bound. */
const SESSION_BOUND: ReadBound = {
  what: "the conversation file",
  maxBytes: MAX_SESSION_FILE_BYTES,
  code: "store_failed",
};

/** How much of a file's end is read at a time when looking for its last line. */
const TAIL_CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NEWLINE = 0x0a;

/** Creates `dir` (and parents) owner-only; tightens it if it already exists. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (Deno.build.os === "windows") return;
  try {
    await Deno.chmod(dir, PRIVATE_DIR_MODE);
  } catch (error) {
    // A folder someone else owns stays as it is; writing into it decides whether it works.
    if (!(error instanceof Deno.errors.PermissionDenied)) throw error;
  }
}

/**
 * Whether an appender holds the file's exclusive lock for as long as it is open: the
 * journal does, which tells other processes its owner is alive. Session files are not
 * locked: appends with O_APPEND are whole-line writes that never interleave, and a torn
 * line is sealed off rather than cut out, so a concurrent writer is never disturbed.
 */
export type LockMode = "none" | "hold";

/** An open append-only JSON-lines file. Appends are serialised in call order. */
export class JsonLinesFile {
  readonly path: string;
  #file: Deno.FsFile;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** The file may end in a torn line: the next append starts with a newline. */
  #sealNext: boolean;

  private constructor(path: string, file: Deno.FsFile, sealNext: boolean) {
    this.path = path;
    this.#file = file;
    this.#sealNext = sealNext;
  }

  /**
   * Opens (creating owner-only if needed). `created` says whether the file was new or
   * empty. With `lock: "hold"`, resolves to `undefined` when another process holds it.
   */
  static async open(
    path: string,
    lock: LockMode = "none",
  ): Promise<{ file: JsonLinesFile; created: boolean } | undefined> {
    await ensurePrivateDir(dirname(path));
    const handle = await Deno.open(path, {
      read: true,
      append: true,
      create: true,
      mode: PRIVATE_FILE_MODE,
    });
    try {
      if (lock === "hold" && !(await handle.tryLock(true))) {
        handle.close();
        return undefined;
      }
      const size = (await handle.stat()).size;
      // A new file's name must survive a power cut too, not only its contents.
      if (size === 0) await syncDirectory(dirname(path));
      const torn = size > 0 && !(await endsWithNewline(handle, size));
      return { file: new JsonLinesFile(path, handle, torn), created: size === 0 };
    } catch (error) {
      handle.close();
      throw error;
    }
  }

  /** Appends the values as lines in one write; resolves once they are on the disk. */
  append(values: readonly unknown[]): Promise<void> {
    const lines = values.map((v) => JSON.stringify(v) + "\n").join("");
    return this.#enqueue(async () => {
      // After a crash (ours or another writer's) the file may end mid-line: a newline
      // first seals that torn line off, so readers skip it and this record stays whole.
      const bytes = encoder.encode(this.#sealNext ? `\n${lines}` : lines);
      this.#sealNext = true;
      await writeAll(this.#file, bytes);
      await this.#file.syncData();
      this.#sealNext = false;
    });
  }

  /** Empties the file (the journal after everything in it was delivered). */
  truncate(): Promise<void> {
    return this.#enqueue(async () => {
      await this.#file.truncate(0);
      await this.#file.syncData();
      this.#sealNext = false;
    });
  }

  /** Waits for queued work, then closes (releasing any lock). Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#file.close();
  }

  #enqueue(work: () => Promise<void>): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`${this.path} is closed`));
    const run = this.#queue.then(work);
    // A failed operation must not poison the ones queued after it.
    this.#queue = run.catch(() => {});
    return run;
  }
}

async function endsWithNewline(file: Deno.FsFile, size: number): Promise<boolean> {
  const last = await readRange(file, size - 1, 1);
  return last[0] === NEWLINE;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

/** fsync of a directory makes a newly created name durable; not possible on Windows. */
async function syncDirectory(dir: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.syncData();
  } finally {
    handle.close();
  }
}

async function readRange(file: Deno.FsFile, from: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  await file.seek(from, Deno.SeekMode.Start);
  let offset = 0;
  while (offset < length) {
    const n = await file.read(bytes.subarray(offset));
    if (n === null) break;
    offset += n;
  }
  return bytes.subarray(0, offset);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What {@linkcode parseJsonLines} recovered. */
export interface ParsedLines {
  values: unknown[];
  /** Lines that could not be read (a torn line, or bytes that are not JSON). */
  damaged: number;
}

/**
 * Parses JSON lines. The whole text is parsed in one `JSON.parse` when it is intact (about
 * three times faster than line by line); a damaged file falls back to line by line,
 * salvaging a record glued behind a torn line when `recordStart` marks where records begin.
 */
export function parseJsonLines(text: string, recordStart?: string): ParsedLines {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (body === "") return { values: [], damaged: 0 };
  const lines = body.split("\n");
  try {
    return { values: JSON.parse(`[${lines.join(",")}]`) as unknown[], damaged: 0 };
  } catch {
    // Fall through to line by line.
  }
  const values: unknown[] = [];
  let damaged = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const value = parseJson(line) ?? (recordStart ? salvage(line, recordStart) : undefined);
    if (value === undefined) {
      damaged++;
    } else {
      values.push(value);
    }
  }
  return { values, damaged };
}

/** A whole record that follows the remains of a torn one on the same line. */
function salvage(line: string, recordStart: string): unknown {
  let at = line.indexOf(recordStart, 1);
  while (at > 0) {
    const value = parseJson(line.slice(at));
    if (value !== undefined) return value;
    at = line.indexOf(recordStart, at + 1);
  }
  return undefined;
}

/** Reads a whole file of JSON lines; `undefined` when it does not exist. */
export async function readJsonLines(
  path: string,
  recordStart?: string,
): Promise<ParsedLines | undefined> {
  let text: string;
  try {
    text = await readBoundedText(path, SESSION_BOUND);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return parseJsonLines(text, recordStart);
}

/** The first lines of a file within `maxBytes` (whole lines only). */
export async function readHeadLines(path: string, maxBytes: number): Promise<unknown[]> {
  await requireRegularFile(path, SESSION_BOUND);
  const file = await Deno.open(path, { read: true });
  try {
    const bytes = await readRange(file, 0, maxBytes);
    const end = bytes.lastIndexOf(NEWLINE);
    if (end < 0) return [];
    return parseJsonLines(decoder.decode(bytes.subarray(0, end + 1))).values;
  } finally {
    file.close();
  }
}

/**
 * The last complete line that parses and passes `accept`, reading backwards in growing
 * chunks, so a summary of a 10,000-message session costs one small read.
 */
export async function readLastLine(
  path: string,
  accept: (value: unknown) => boolean,
): Promise<unknown> {
  await requireRegularFile(path, SESSION_BOUND);
  const file = await Deno.open(path, { read: true });
  try {
    const size = (await file.stat()).size;
    let chunk = TAIL_CHUNK_BYTES;
    while (true) {
      const from = Math.max(0, size - chunk);
      const text = decoder.decode(await readRange(file, from, size - from));
      const lines = text.split("\n");
      // The first piece may be the end of a line that started before the chunk.
      const complete = from === 0 ? lines : lines.slice(1);
      for (let i = complete.length - 1; i >= 0; i--) {
        const value = parseJson(complete[i]);
        if (value !== undefined && accept(value)) return value;
      }
      if (from === 0) return undefined;
      chunk *= 4;
    }
  } finally {
    file.close();
  }
}
