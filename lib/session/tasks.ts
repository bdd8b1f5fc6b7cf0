/**
 * The MCP tasks of one interactive session (or `run`): the tracker that records and
 * follows them, and the delivery of each task's outcome into the conversation it belongs
 * to (docs/tasks.md):
 *
 * - this session's conversation: added to the model's history between turns (a turn
 *   running holds it until it ends), and saved with it;
 * - another stored conversation: appended to it while no other process has it open;
 *   else left for that process or the next `--resume` of it, which delivers it;
 * - none (a task `patchbay call` started): told, and kept with the task (`/tasks`).
 *
 * At start, the tasks earlier sessions left pending are followed again (the interactive
 * client: all of them; `run`: those of the conversation it resumes), and outcomes not yet
 * delivered are delivered.
 *
 * @module
 */

import type { Agent } from "../agent/agent.ts";
import type { ConnectionManager } from "../connections/manager.ts";
import type { Surface } from "../errors/failure_table.ts";
import type { Log } from "../log/log.ts";
import type { Memory } from "../memory/mod.ts";
import { appendToStored } from "../memory/stored_append.ts";
import type { TaskRecord } from "../memory/task_registry.ts";
import { openTaskRegistry } from "../memory/task_registry_open.ts";
import type { Redactor } from "../redact/redact.ts";
import { deliveryMessage, outcomeLine } from "../tasks/notes.ts";
import { TaskUnknownError } from "../errors.ts";
import { NOT_CONFIGURED, NOT_FOLLOWED } from "../tasks/tracker.ts";
import { TaskTracker } from "../tasks/tracker.ts";

/** Options of {@linkcode SessionTasks}. */
export interface SessionTasksOptions {
  manager: ConnectionManager;
  memory: Memory;
  redactor: Redactor;
  log: Log;
  surface: Surface;
  /** Says something to the person, around the prompt. */
  notify: (text: string) => void;
  /** An error as the person reads it: message, cause, remedy. */
  presentError: (error: unknown) => string;
  /** Whether a turn is running now. */
  busy: () => boolean;
}

/** The session's tasks (see the module's description). */
export class SessionTasks {
  readonly tracker: TaskTracker;
  readonly #options: SessionTasksOptions;
  #agent?: Agent;
  /** Outcomes for this conversation that arrived during a turn. */
  readonly #held: TaskRecord[] = [];
  #stop: () => void;

  constructor(options: SessionTasksOptions) {
    this.#options = options;
    const { memory, manager, redactor, log, surface } = options;
    this.tracker = new TaskTracker({
      registry: openTaskRegistry(memory.enabled ? memory.store : undefined, { log }),
      manager,
      redactor,
      log,
      surface,
    });
    manager.setTaskTracking(this.tracker);
    this.#stop = this.tracker.onEnded((record) => void this.#deliver(record));
  }

  /** The agent whose history this conversation's outcomes join. */
  set agent(agent: Agent | undefined) {
    this.#agent = agent;
  }

  /**
   * Delivers outcomes earlier sessions left undelivered and follows the tasks still
   * pending that `which` picks (`all`: every one; `conversation`: this conversation's).
   * Resolves once the tasks already over on their servers are delivered.
   */
  async start(which: "all" | "conversation"): Promise<void> {
    const current = this.#options.memory.session.id;
    const wanted = (r: TaskRecord) => which === "all" || r.conversation === current;
    try {
      for (const record of await this.tracker.undelivered(wanted)) await this.#deliver(record);
      await this.tracker.followRecorded(wanted);
    } catch (error) {
      this.#options.log.warn("could not read the recorded tasks", { error: String(error) });
    }
  }

  /** A turn ended: outcomes that arrived meanwhile join the conversation now. */
  async turnEnded(): Promise<void> {
    for (const record of this.#held.splice(0)) await this.#deliver(record);
  }

  /** Stops following (the tasks go on on their servers). */
  async close(): Promise<void> {
    this.#stop();
    await this.tracker.close();
    await this.tracker.registry.close();
  }

  async #deliver(record: TaskRecord): Promise<void> {
    const { memory, notify, redactor } = this.#options;
    const line = outcomeLine(record);
    if (record.state === "unknown") {
      // Not dropped silently: said with its cause and remedy, and delivered as an outcome.
      notify(this.#options.presentError(
        new TaskUnknownError(
          record.server,
          record.id,
          record.error ?? "the task is unknown",
          !record.error?.startsWith(NOT_CONFIGURED) && !record.error?.startsWith(NOT_FOLLOWED),
        ),
      ));
    }
    const conversation = record.conversation;
    if (!conversation) {
      notify(`${line}; ${this.#fetch(record)} shows it`);
      return;
    }
    try {
      if (conversation === memory.session.id) {
        if (this.#options.busy()) {
          this.#held.push(record);
          return;
        }
        const message = deliveryMessage(record);
        if (this.#agent) this.#agent.note(message);
        else await memory.session.append(message);
        await this.tracker.delivered(record);
        notify(`${line}; its outcome was added to this conversation`);
        return;
      }
      const store = memory.enabled ? memory.store : undefined;
      if (!store || store.kind === "off") {
        notify(`${line} (conversation ${conversation}); ${this.#fetch(record)} shows it`);
        return;
      }
      const written = await appendToStored(
        store,
        conversation,
        redactor.redactValue(deliveryMessage(record)),
      );
      if (written === "written") {
        await this.tracker.delivered(record);
        notify(`${line}; its outcome was added to conversation ${conversation}`);
      } else if (written === "held") {
        notify(
          `${line}; conversation ${conversation} is open in another process, which adds it ` +
            "(or the next --resume of it does)",
        );
      } else {
        notify(
          `${line}; conversation ${conversation} is not stored any more: ` +
            `${this.#fetch(record)} shows it`,
        );
      }
    } catch (error) {
      this.#options.log.warn(`could not deliver the outcome of task ${record.id}`, {
        error: String(error),
      });
      notify(`${line}; ${this.#fetch(record)} shows it`);
    }
  }

  #fetch(record: TaskRecord): string {
    return this.#options.surface === "repl"
      ? `/tasks result ${record.id}`
      : `\`patchbay tasks result ${record.id}\``;
  }
}
