/**
 * The session's keeper of MCP tasks ({@linkcode TaskTracker}): records every task a tool
 * call starts (before the call waits for it), keeps its record up to date, and follows
 * the tasks still running when their calls stopped waiting, as well as those an earlier
 * process left pending, until they end. Each task that ends while followed is told to
 * the listeners (`onEnded`), which put its result into the conversation it belongs to.
 *
 * A followed task whose session is lost is followed again once its server is connected;
 * one whose server no longer knows it ends `unknown`, with the server's words, and is
 * told like any other: nothing is dropped silently.
 *
 * @module
 */

import type { ConnectionManager } from "../connections/manager.ts";
import type {
  LiveTask,
  StartedTask,
  TaskEnd,
  TaskStatusUpdate,
  TaskTracking,
} from "../connections/tasks/task_types.ts";
import { messageOf, PatchbayError } from "../errors.ts";
import type { Surface } from "../errors/failure_table.ts";
import type { Log } from "../log/log.ts";
import {
  hasOutcome,
  SETTLED_STATES,
  taskKey,
  type TaskRecord,
  type TaskRegistry,
} from "../memory/task_registry.ts";
import type { Redactor } from "../redact/redact.ts";
import { MAX_FOLLOWED_TASKS } from "./bounds.ts";
import { setTimer } from "../async/timers.ts";
import { pendingResult } from "./notes.ts";
import { endedRecord, startedRecord, startedTaskOf, withStatus } from "./records.ts";

/** Why a task past the time it is followed is no longer asked for. */
function pastTtl(record: TaskRecord): string {
  return `${NOT_FOLLOWED} (${record.followUntil}): its ttl, or patchbay's bound on following ` +
    "a task, passed";
}

/** How a task no longer followed is recorded. */
export const NOT_FOLLOWED = "patchbay stopped following it";

/** How a task whose server left the configuration is recorded: `${NOT_CONFIGURED} '<name>' …`. */
export const NOT_CONFIGURED = "no server named";

/** Least time between two writes of a task's record for a new status message alone. */
const STATUS_WRITE_INTERVAL_MS = 2000;

/** Options of {@linkcode TaskTracker}. */
export interface TaskTrackerOptions {
  registry: TaskRegistry;
  manager: ConnectionManager;
  redactor: Redactor;
  log: Log;
  /** Where results are fetched from, which decides the commands the notes name. */
  surface: Surface;
  /**
   * Tasks still running when their calls stop waiting are followed until they end (the
   * interactive client, `run`); `false` for a command that ends right after (`call`).
   * @default true
   */
  follows?: boolean;
}

/** Records and follows the tasks of one session (see the module's description). */
export class TaskTracker implements TaskTracking {
  readonly registry: TaskRegistry;
  readonly #options: TaskTrackerOptions;
  readonly #records = new Map<string, TaskRecord>();
  readonly #written = new Map<string, number>();
  readonly #followed = new Set<string>();
  /** Recorded tasks waiting for their server to connect. */
  readonly #waiting = new Map<string, TaskRecord>();
  readonly #listeners = new Set<(record: TaskRecord) => unknown>();
  #writes: Promise<unknown> = Promise.resolve();
  #stopListening?: () => void;
  #closed = false;

  constructor(options: TaskTrackerOptions) {
    this.#options = options;
    this.registry = options.registry;
  }

  /**
   * Calls `listener` with each task that ends while followed (awaited when it returns a
   * promise); returns the function that stops it.
   */
  onEnded(listener: (record: TaskRecord) => unknown): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The record of a task this process knows, as it stands. */
  known(server: string, id: string): TaskRecord | undefined {
    return this.#records.get(taskKey({ server, id }));
  }

  async started(task: StartedTask, update: TaskStatusUpdate): Promise<void> {
    const record = startedRecord(task, update, this.#options.redactor);
    await this.#put(record);
  }

  changed(task: StartedTask, update: TaskStatusUpdate): void {
    const key = taskKey({ server: task.server, id: task.taskId });
    const record = this.#records.get(key);
    if (!record) return;
    const next = withStatus(record, update);
    const statusChanged = next.state !== record.state;
    if (!statusChanged && next.statusMessage === record.statusMessage) return;
    this.#records.set(key, next);
    // A chatty server's every message is not worth a write; a new status always is.
    const last = this.#written.get(key) ?? 0;
    if (statusChanged || Date.now() - last >= STATUS_WRITE_INTERVAL_MS) void this.#put(next);
  }

  async ended(task: StartedTask, end: TaskEnd): Promise<void> {
    const record = this.#recordOf(task);
    // The call that waited for it carries its result into the conversation itself.
    const settled = endedRecord(record, end, this.#options.redactor);
    await this.#put(
      SETTLED_STATES.has(settled.state)
        ? { ...settled, deliveredAt: new Date().toISOString() }
        : settled,
    );
  }

  pending(live: LiveTask, waitedSeconds: number): ReturnType<TaskTracking["pending"]> {
    const record = this.#recordOf(live.task);
    const follows = this.#options.follows !== false && !this.#closed;
    // Not followed here: let go, so that whoever follows it later can (it goes on).
    if (follows) void this.#follow(live);
    else void live.stop();
    return pendingResult(record, waitedSeconds, {
      surface: this.#options.surface,
      followed: follows,
    });
  }

  /** Marks `record`'s outcome as put into its conversation. */
  async delivered(record: TaskRecord): Promise<TaskRecord> {
    const done = { ...record, deliveredAt: new Date().toISOString() };
    await this.#put(done);
    return done;
  }

  /**
   * Follows the recorded tasks `wanted` picks that are still pending (the newest
   * {@linkcode MAX_FOLLOWED_TASKS}), each once its server is connected. Returns them.
   */
  async followRecorded(wanted: (record: TaskRecord) => boolean): Promise<TaskRecord[]> {
    const all = (await this.registry.list()).filter((r) => !hasOutcome(r) && wanted(r));
    // Past its ttl (bounded), a task is not asked for again: said, with why.
    const now = Date.now();
    for (const record of all.filter((r) => Date.parse(r.followUntil) <= now)) {
      await this.#settle(record, { status: "unknown", error: pastTtl(record) });
    }
    const records = all.filter((r) => Date.parse(r.followUntil) > now);
    const chosen = records.slice(0, MAX_FOLLOWED_TASKS);
    for (const record of chosen) {
      const key = taskKey(record);
      if (this.#followed.has(key)) continue;
      this.#records.set(key, record);
      this.#waiting.set(key, record);
    }
    this.#listen();
    await Promise.all(chosen.map((record) => this.#tryResume(record)));
    return chosen;
  }

  /** Recorded tasks that ended while followed but are not in their conversation yet. */
  async undelivered(wanted: (record: TaskRecord) => boolean): Promise<TaskRecord[]> {
    return (await this.registry.list()).filter((r) =>
      hasOutcome(r) && !r.deliveredAt && r.conversation !== undefined && wanted(r)
    );
  }

  /** Stops following (the tasks go on on their servers) and waits for pending writes. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopListening?.();
    await this.#writes;
  }

  #recordOf(task: StartedTask): TaskRecord {
    const key = taskKey({ server: task.server, id: task.taskId });
    return this.#records.get(key) ??
      startedRecord(task, { status: "working" }, this.#options.redactor);
  }

  #put(record: TaskRecord): Promise<void> {
    const key = taskKey(record);
    this.#records.set(key, record);
    this.#written.set(key, Date.now());
    const write = this.#writes.then(() => this.registry.put(record));
    this.#writes = write.catch((error) =>
      this.#options.log.warn(`could not record task ${record.id}`, { error: messageOf(error) })
    );
    return write;
  }

  /**
   * Follows `live` until it ends; a lost session hands it to the next one. Resolves once
   * its end is recorded and told.
   */
  #follow(live: LiveTask): Promise<void> {
    const key = taskKey({ server: live.task.server, id: live.task.taskId });
    this.#followed.add(key);
    live.onStatus((update) => this.changed(live.task, update));
    // Never past the task's ttl (bounded): a server must not keep patchbay polling forever.
    let expired = false;
    const until = Date.parse(this.#recordOf(live.task).followUntil);
    const timer = setTimer(() => {
      expired = true;
      void live.stop();
    }, Math.max(0, until - Date.now()));
    Deno.unrefTimer(timer as unknown as number);
    return live.end.then(async (end) => {
      clearTimeout(timer);
      this.#followed.delete(key);
      if (this.#closed) return;
      const record = this.#recordOf(live.task);
      if (expired) {
        await this.#settle(record, { status: "unknown", error: pastTtl(record) });
        return;
      }
      if (end.status === "lost") {
        this.#options.log.info(`task ${record.id}: ${end.error}; followed again on reconnect`);
        this.#waiting.set(key, record);
        this.#listen();
        return;
      }
      await this.#settle(record, end);
    });
  }

  async #settle(record: TaskRecord, end: TaskEnd): Promise<void> {
    const settled = endedRecord(record, end, this.#options.redactor);
    await this.#put(settled).catch(() => {});
    await Promise.all([...this.#listeners].map(async (listener) => {
      try {
        await listener(settled);
      } catch (error) {
        this.#options.log.warn(`task ${settled.id}: telling its end failed`, {
          error: messageOf(error),
        });
      }
    }));
  }

  /** Listens for servers connecting, to resume the tasks waiting for them (once). */
  #listen(): void {
    if (this.#stopListening || this.#closed) return;
    this.#stopListening = this.#options.manager.on((event) => {
      if (event.type !== "state" || event.state !== "connected") return;
      for (const record of [...this.#waiting.values()]) {
        if (record.server === event.server) void this.#tryResume(record);
      }
    });
  }

  /** Resumes `record` if its server is connected; else it waits for the server. */
  async #tryResume(record: TaskRecord): Promise<void> {
    const key = taskKey(record);
    const { manager, log } = this.#options;
    if (this.#closed || this.#followed.has(key) || !this.#waiting.has(key)) return;
    if (manager.unavailable(record.server) !== undefined || !manager.status(record.server)) {
      if (!manager.status(record.server)) {
        // No server of that name in the configuration now: said, not dropped.
        this.#waiting.delete(key);
        await this.#settle(record, {
          status: "unknown",
          error: `${NOT_CONFIGURED} '${record.server}' is configured any more`,
        });
      }
      return;
    }
    this.#waiting.delete(key);
    this.#followed.add(key);
    try {
      const { resumeToolTask } = await import("../connections/tasks/tool_task.ts");
      const live = await resumeToolTask(
        manager.taskConnection(record.server),
        startedTaskOf(record),
      );
      const handled = this.#follow(live);
      // A task that ended while nobody followed it is told before this resolves.
      const first = await live.first;
      if (!first || SETTLED_STATES.has(first.status)) await handled;
    } catch (error) {
      this.#followed.delete(key);
      // Followed already, by this process (ext-tasks' TaskRecoveryOwnershipError).
      if ((error as Error)?.name === "TaskRecoveryOwnershipError") return;
      const code = (error as { code?: unknown }).code;
      if (code === -32602) {
        await this.#settle(record, { status: "unknown", error: messageOf(error) });
      } else if (/different endpoint|generation does not match/.test(messageOf(error))) {
        await this.#settle(record, {
          status: "unknown",
          error: `server '${record.server}' is now reached another way than when the task ` +
            `started (${messageOf(error)})`,
        });
      } else {
        // Not connected after all, or the request failed: wait for the next connection.
        log.info(`task ${record.id}: could not follow it yet (${messageOf(error)})`);
        if (!(error instanceof PatchbayError) || error.code !== "cancelled") {
          this.#waiting.set(key, record);
        }
      }
    }
  }
}
