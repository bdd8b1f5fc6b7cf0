/**
 * The embedded store: one append-only JSON-lines file per session under the data
 * directory (`~/.local/share/patchbay/sessions/<id>.jsonl`), owner-only.
 *
 * The first line is a header (`{"type":"session",...}`); every other line is one message
 * record carrying, besides the message, the running totals a listing needs (`turns`, the
 * last `model`), so `patchbay sessions` reads only the head and the tail of each file.
 *
 * @module
 */

import { FileLeases } from "./file_lease.ts";
import { dirname, join } from "node:path";
import { FileTaskRegistry } from "./task_registry_file.ts";
import {
  DenoPermissionError,
  messageOf,
  PatchbayError,
  PermissionDeniedError,
  StoreFailedError,
} from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { isSessionId } from "./ids.ts";
import { MEMORY_STEPS } from "../errors/memory_steps.ts";
import {
  ensurePrivateDir,
  JsonLinesFile,
  readHeadLines,
  readJsonLines,
  readLastLine,
} from "./json_lines.ts";
import { titleOf } from "./title.ts";
import type {
  AppendStatus,
  ListOptions,
  MemoryStore,
  MessageRecord,
  SessionSummary,
  StoredMessage,
} from "./types.ts";

/** Version of the file layout, written in every header. */
export const FILE_SCHEMA_VERSION = 1;

/** How records begin on their line; lets a reader salvage a record glued to a torn one. */
const RECORD_START = '{"id":"';
/** Bytes read from a file's start to find the session's first user message. */
const HEAD_BYTES = 64 * 1024;

/** The first line of a session file. */
interface FileHeader {
  type: "session";
  schema: number;
  id: string;
  created: string;
}

/** A message line of a session file. */
interface FileRecord {
  id: string;
  seq: number;
  /** User messages in the session up to and including this one. */
  turns: number;
  /** The last model seen in the session up to this line. */
  model?: string;
  message: StoredMessage;
}

/** Running totals of a session being appended to. */
interface SessionTail {
  file: JsonLinesFile;
  turns: number;
  model?: string;
}

/** Options of {@linkcode FileStore}. */
export interface FileStoreOptions {
  /** Folder of the session files. */
  dir: string;
  /** Sessions idle longer than this many seconds are deleted. @default kept forever */
  ttlSeconds?: number;
}

/** The embedded, file-backed {@linkcode MemoryStore}. */
export class FileStore implements MemoryStore {
  readonly kind = "file" as const;
  readonly dir: string;
  readonly #ttlMs: number | undefined;
  readonly #open = new Map<string, Promise<SessionTail>>();

  /** One `<id>.lease` file beside each open conversation's file. */
  readonly leases: FileLeases;
  /** The tasks patchbay started, in the folder above the sessions (`task_registry_file.ts`). */
  readonly tasks: FileTaskRegistry;

  constructor(options: FileStoreOptions) {
    this.dir = options.dir;
    this.leases = new FileLeases(options.dir);
    this.tasks = new FileTaskRegistry(dirname(options.dir));
    this.#ttlMs = options.ttlSeconds === undefined ? undefined : options.ttlSeconds * 1000;
  }

  get location(): string {
    return this.dir;
  }

  /** The file holding a session. */
  pathOf(sessionId: string): string {
    if (!isSessionId(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    return join(this.dir, `${sessionId}.jsonl`);
  }

  async append(sessionId: string, record: MessageRecord): Promise<AppendStatus> {
    const path = this.pathOf(sessionId);
    try {
      const tail = await this.#tail(sessionId);
      const turns = tail.turns + (record.message.role === "user" ? 1 : 0);
      const model = record.message.model ?? tail.model;
      const line: FileRecord = {
        id: record.id,
        seq: record.seq,
        turns,
        ...(model === undefined ? {} : { model }),
        message: record.message,
      };
      await tail.file.append([line]);
      tail.turns = turns;
      tail.model = model;
      return "written";
    } catch (error) {
      // Reopen next time: the file may have been deleted or repaired meanwhile.
      await this.#forget(sessionId);
      throw fileError("save the conversation to", path, error);
    }
  }

  async load(sessionId: string): Promise<MessageRecord[] | undefined> {
    const path = this.pathOf(sessionId);
    if (await this.#expired(sessionId)) return undefined;
    let parsed;
    try {
      parsed = await readJsonLines(path, RECORD_START);
    } catch (error) {
      throw fileError("read the conversation from", path, error);
    }
    if (parsed === undefined) return undefined;
    const seen = new Set<string>();
    const records: MessageRecord[] = [];
    for (const value of parsed.values) {
      if (!isFileRecord(value) || seen.has(value.id)) continue;
      seen.add(value.id);
      records.push({ id: value.id, seq: records.length, message: value.message });
    }
    return records;
  }

  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const files = await this.#sessionFiles();
    // Newest files first, so a limited listing reads only the files it shows.
    files.sort((a, b) => b.mtime - a.mtime);
    const summaries: SessionSummary[] = [];
    const want = options.limit ?? files.length;
    let next = 0;
    while (summaries.length < want && next < files.length) {
      options.signal?.throwIfAborted();
      // Files written within the same clock tick have equal times, which do not say which
      // is newer: take all of them, and let the messages' own times decide below.
      let end = Math.min(files.length, next + want - summaries.length);
      while (end < files.length && files[end].mtime === files[end - 1].mtime) end++;
      const batch = files.slice(next, end);
      next = end;
      const read = await Promise.all(batch.map(({ id }) => this.summary(id)));
      for (const summary of read) if (summary) summaries.push(summary);
    }
    return summaries.sort((a, b) => b.lastMessageAt.localeCompare(a.lastMessageAt))
      .slice(0, want);
  }

  async summary(sessionId: string): Promise<SessionSummary | undefined> {
    const path = this.pathOf(sessionId);
    if (await this.#expired(sessionId)) return undefined;
    try {
      const last = await readLastLine(path, isFileRecord) as FileRecord | undefined;
      if (!last) return undefined;
      const head = await readHeadLines(path, HEAD_BYTES);
      const header = head.find(isFileHeader);
      const firstUser = head.find((v): v is FileRecord =>
        isFileRecord(v) && v.message.role === "user"
      );
      const first = head.find(isFileRecord);
      return {
        id: sessionId,
        started: header?.created ?? first?.message.timestamp ?? last.message.timestamp,
        lastMessageAt: last.message.timestamp,
        messages: last.seq + 1,
        turns: last.turns,
        ...(last.model ? { model: last.model } : {}),
        ...(firstUser && titleOf(firstUser.message) ? { title: titleOf(firstUser.message) } : {}),
        ...(firstUser?.message.folder ? { folder: firstUser.message.folder } : {}),
      };
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw fileError("read the conversation from", path, error);
    }
  }

  async findIds(prefix: string): Promise<string[]> {
    const files = await this.#sessionFiles();
    return files.map((f) => f.id).filter((id) => id.startsWith(prefix));
  }

  async delete(sessionId: string): Promise<boolean> {
    const path = this.pathOf(sessionId);
    await this.#forget(sessionId);
    try {
      await Deno.remove(path);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw fileError("delete", path, error);
    }
  }

  async close(): Promise<void> {
    const ids = [...this.#open.keys()];
    await Promise.all(ids.map((id) => this.#forget(id)));
  }

  /** Opens a session's file for appending and reads its running totals. */
  #tail(sessionId: string): Promise<SessionTail> {
    let tail = this.#open.get(sessionId);
    if (!tail) {
      tail = this.#openTail(sessionId);
      this.#open.set(sessionId, tail);
      // A failed open is not cached: the next append tries again.
      tail.catch(() => this.#open.delete(sessionId));
    }
    return tail;
  }

  async #openTail(sessionId: string): Promise<SessionTail> {
    const path = this.pathOf(sessionId);
    // Without a held lock, opening never reports the file as taken.
    const { file, created } = (await JsonLinesFile.open(path))!;
    try {
      if (created) {
        const header: FileHeader = {
          type: "session",
          schema: FILE_SCHEMA_VERSION,
          id: sessionId,
          created: new Date().toISOString(),
        };
        await file.append([header]);
        return { file, turns: 0 };
      }
      const last = await readLastLine(path, isFileRecord) as FileRecord | undefined;
      return { file, turns: last?.turns ?? 0, model: last?.model };
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  async #forget(sessionId: string): Promise<void> {
    const tail = this.#open.get(sessionId);
    this.#open.delete(sessionId);
    if (!tail) return;
    try {
      await (await tail).file.close();
    } catch {
      // It never opened; nothing to close.
    }
  }

  async #sessionFiles(): Promise<Array<{ id: string; mtime: number }>> {
    const ids: string[] = [];
    try {
      await ensurePrivateDir(this.dir);
      for await (const entry of Deno.readDir(this.dir)) {
        if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue;
        const id = entry.name.slice(0, -".jsonl".length);
        if (isSessionId(id)) ids.push(id);
      }
    } catch (error) {
      throw fileError("list the conversations in", this.dir, error);
    }
    const stats = await Promise.all(
      ids.map((id) => Deno.stat(this.pathOf(id)).catch(() => undefined)),
    );
    const files: Array<{ id: string; mtime: number }> = [];
    for (const [i, info] of stats.entries()) {
      if (!info) continue;
      const mtime = info.mtime?.getTime() ?? 0;
      if (this.#ttlMs !== undefined && Date.now() - mtime > this.#ttlMs) {
        await this.delete(ids[i]);
        continue;
      }
      files.push({ id: ids[i], mtime });
    }
    return files;
  }

  /** Deletes the session's file when it outlived the TTL; true if it did (or is gone). */
  async #expired(sessionId: string): Promise<boolean> {
    if (this.#ttlMs === undefined) return false;
    const info = await Deno.stat(this.pathOf(sessionId)).catch(() => undefined);
    if (!info) return false;
    if (Date.now() - (info.mtime?.getTime() ?? 0) <= this.#ttlMs) return false;
    await this.delete(sessionId);
    return true;
  }
}

function isFileHeader(value: unknown): value is FileHeader {
  return typeof value === "object" && value !== null && (value as FileHeader).type === "session";
}

function isFileRecord(value: unknown): value is FileRecord {
  if (typeof value !== "object" || value === null) return false;
  const record = value as FileRecord;
  return typeof record.id === "string" && typeof record.seq === "number" &&
    typeof record.message === "object" && record.message !== null &&
    typeof record.message.timestamp === "string";
}

/** A file-system failure as the error a person can act on. */
export function fileError(action: string, path: string, error: unknown): PatchbayError {
  const flag = denoPermissionFlag(error);
  if (flag) return new DenoPermissionError(flag, `${action} ${path}`, error);
  if (error instanceof Deno.errors.PermissionDenied) {
    return new PermissionDeniedError(
      `could not ${action} ${path}`,
      (error as Error).message,
      MEMORY_STEPS.ownFiles(path),
    );
  }
  const message = messageOf(error);
  const full = /ENOSPC|No space left/i.test(message);
  return new StoreFailedError(`Could not ${action} ${path}`, {
    reason: full ? "the disk is full" : message,
    remedy: full ? MEMORY_STEPS.diskFull : MEMORY_STEPS.writableFolder,
    cause: error,
  });
}
