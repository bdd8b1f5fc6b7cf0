/**
 * The task registry in a file (`tasks.jsonl`, owner-only), for the embedded store and
 * for memory off: one JSON line per change of a record, appended (crash-safe like the
 * session files: a `kill -9` leaves at most one torn line, which readers skip); the last
 * line of a task wins. When the file holds several times the records it describes, it is
 * rewritten with one line per record kept (atomically: a reader sees the old file or the
 * new one).
 *
 * Several processes may write it (a session and `patchbay tasks cancel`): every write
 * holds an exclusive lock on `tasks.jsonl.lock` for its duration.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { replacePrivateFile } from "../files/private_file.ts";
import { ensurePrivateDir, JsonLinesFile, PRIVATE_FILE_MODE, readJsonLines } from "./json_lines.ts";
import {
  isTaskRecord,
  keptRecords,
  newestFirst,
  taskKey,
  type TaskRecord,
  type TaskRegistry,
} from "./task_registry.ts";

/** The registry's file name, in the folder it is kept in. */
export const TASKS_FILE = "tasks.jsonl";

/** Lines per kept record past which the file is rewritten. */
const LINES_PER_RECORD_BEFORE_COMPACTING = 4;

/** The {@linkcode TaskRegistry} in a JSON-lines file. */
export class FileTaskRegistry implements TaskRegistry {
  readonly path: string;
  readonly #max: number | undefined;

  /** `dir`: the folder of the file (made owner-only when first written). */
  constructor(dir: string, options: { maxRecords?: number } = {}) {
    this.path = join(dir, TASKS_FILE);
    this.#max = options.maxRecords;
  }

  get location(): string {
    return this.path;
  }

  async put(record: TaskRecord): Promise<void> {
    await this.#locked(async () => {
      const opened = await JsonLinesFile.open(this.path);
      try {
        await opened!.file.append([record]);
      } finally {
        await opened!.file.close();
      }
      const { records, lines } = await this.#read();
      if (lines > LINES_PER_RECORD_BEFORE_COMPACTING * Math.max(records.length, 16)) {
        await this.#rewrite(records);
      }
    });
  }

  async list(): Promise<TaskRecord[]> {
    return (await this.#read()).records;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** The records (the last line of each task), and how many lines the file has. */
  async #read(): Promise<{ records: TaskRecord[]; lines: number }> {
    const parsed = await readJsonLines(this.path, '{"id"');
    if (!parsed) return { records: [], lines: 0 };
    const byKey = new Map<string, TaskRecord>();
    for (const value of parsed.values) {
      if (isTaskRecord(value)) byKey.set(taskKey(value), value);
    }
    return {
      records: keptRecords(newestFirst(byKey.values()), this.#max),
      lines: parsed.values.length + parsed.damaged,
    };
  }

  async #rewrite(records: readonly TaskRecord[]): Promise<void> {
    const text = records.map((r) => JSON.stringify(r) + "\n").join("");
    await replacePrivateFile(this.path, text, PRIVATE_FILE_MODE);
  }

  /** Runs `work` holding the registry's write lock (other processes wait for it). */
  async #locked<T>(work: () => Promise<T>): Promise<T> {
    await ensurePrivateDir(dirname(this.path));
    const lock = await Deno.open(`${this.path}.lock`, {
      read: true,
      write: true,
      create: true,
      mode: PRIVATE_FILE_MODE,
    });
    try {
      await lock.lock(true);
      return await work();
    } finally {
      lock.close();
    }
  }
}
