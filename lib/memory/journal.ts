/**
 * The outage journal: messages that could not reach Redis wait here, on local disk, until
 * they can be delivered.
 *
 * Each process writes its own file (`<dir>/<pid>-<random>.jsonl`) and holds an exclusive
 * lock on it while it runs, so the lock says whether the owner is alive. A journal whose
 * lock is free belonged to a process that exited or crashed: the next process to reach the
 * same store claims it and delivers its messages. Delivery is idempotent (every record has
 * a unique id), so a journal replayed twice, or after a partial replay, duplicates nothing.
 *
 * @module
 */

import { join } from "node:path";
import { newSessionId } from "./ids.ts";
import { ensurePrivateDir, JsonLinesFile, readJsonLines } from "./json_lines.ts";
import type { MessageRecord, StoredMessage } from "./types.ts";

/** One message waiting for the store. */
export interface JournalEntry {
  sessionId: string;
  record: MessageRecord;
}

/** A journal line: record fields first, so a torn line can be salvaged like a session's. */
interface JournalLine {
  id: string;
  seq: number;
  session: string;
  message: StoredMessage;
}

interface JournalHeader {
  type: "journal";
  store: string;
  pid: number;
  created: string;
}

const RECORD_START = '{"id":"';

/** A journal left by a process that is gone, claimed (locked) by this one. */
export interface ClaimedJournal {
  path: string;
  entries: JournalEntry[];
  /** Deletes the file once its entries are delivered. */
  discard(): Promise<void>;
  /** Keeps the file for a later process (releasing the lock). */
  release(): Promise<void>;
}

/** This process's journal for one store. */
export class Journal {
  readonly dir: string;
  readonly #store: string;
  #file: JsonLinesFile | undefined;
  #path: string | undefined;
  #written = 0;

  /** `dir` is specific to one store; `store` describes it in the header. */
  constructor(dir: string, store: string) {
    this.dir = dir;
    this.#store = store;
  }

  /** The file, once something was journaled. */
  get path(): string | undefined {
    return this.#path;
  }

  /** Appends entries; resolves once they are on the disk. */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    const file = await this.#open();
    await file.append(entries.map(toLine));
    this.#written += entries.length;
  }

  /** Everything journaled was delivered: empty the file (it stays locked and reusable). */
  async clear(): Promise<void> {
    if (!this.#file || this.#written === 0) return;
    await this.#file.truncate();
    await this.#file.append([this.#header()]);
    this.#written = 0;
  }

  /**
   * Claims the journals of processes that are gone. Files still locked by a live process
   * are left alone.
   */
  async claimOrphans(): Promise<ClaimedJournal[]> {
    const claimed: ClaimedJournal[] = [];
    let names: string[];
    try {
      names = [];
      for await (const entry of Deno.readDir(this.dir)) {
        if (entry.isFile && entry.name.endsWith(".jsonl")) names.push(entry.name);
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    for (const name of names.sort()) {
      const path = join(this.dir, name);
      if (path === this.#path) continue;
      const opened = await JsonLinesFile.open(path, "hold").catch(() => undefined);
      if (!opened) continue;
      const parsed = await readJsonLines(path, RECORD_START);
      const entries = (parsed?.values ?? []).filter(isJournalLine).map(fromLine);
      claimed.push({
        path,
        entries,
        discard: async () => {
          await Deno.remove(path).catch(() => {});
          await opened.file.close();
        },
        release: () => opened.file.close(),
      });
    }
    return claimed;
  }

  /** Closes the file; removes it when nothing in it is still waiting. */
  async close(): Promise<void> {
    if (!this.#file) return;
    const file = this.#file;
    this.#file = undefined;
    if (this.#written === 0) await Deno.remove(file.path).catch(() => {});
    await file.close();
  }

  #header(): JournalHeader {
    return {
      type: "journal",
      store: this.#store,
      pid: Deno.pid,
      created: new Date().toISOString(),
    };
  }

  async #open(): Promise<JsonLinesFile> {
    if (this.#file) return this.#file;
    await ensurePrivateDir(this.dir);
    const path = join(this.dir, `${Deno.pid}-${newSessionId()}.jsonl`);
    const opened = await JsonLinesFile.open(path, "hold");
    if (!opened) throw new Error(`journal ${path} is locked by another process`);
    await opened.file.append([this.#header()]);
    this.#file = opened.file;
    this.#path = path;
    return opened.file;
  }
}

function toLine(entry: JournalEntry): JournalLine {
  return {
    id: entry.record.id,
    seq: entry.record.seq,
    session: entry.sessionId,
    message: entry.record.message,
  };
}

function fromLine(line: JournalLine): JournalEntry {
  return { sessionId: line.session, record: { id: line.id, seq: line.seq, message: line.message } };
}

function isJournalLine(value: unknown): value is JournalLine {
  if (typeof value !== "object" || value === null) return false;
  const line = value as JournalLine;
  return typeof line.id === "string" && typeof line.seq === "number" &&
    typeof line.session === "string" && typeof line.message === "object" &&
    line.message !== null;
}
