/**
 * The hooks of an interactive session or a `run` (docs/hooks.md): the {@linkcode Hooks}
 * its agent and `/call` run, what their input says about the session (`session_id`: the
 * conversation's id; `transcript_path`: its file when memory keeps one in files;
 * `permission_mode`: `bypassPermissions` under `--yes`), and the session's own events:
 * `SessionStart` when it starts (`startup`, `resume`) and after `/clear`, `SessionEnd` at
 * `/clear` and when it ends (`prompt_input_exit` when the person left, else `other`).
 *
 * @module
 */

import { join } from "node:path";
import type { Agent } from "../agent/agent.ts";
import { type HookNotice, hookNotices } from "../agent/hook_notices.ts";
import type { Surface } from "../errors.ts";
import { Hooks } from "../hooks/hooks.ts";
import {
  sessionEnd,
  type SessionEndReason,
  type SessionSource,
  sessionStart,
} from "../hooks/turn_hooks.ts";
import type { Memory } from "../memory/mod.ts";
import type { Runtime } from "../cli/startup.ts";

/** What {@linkcode SessionHooks} works with. */
export interface SessionHooksOptions {
  runtime: Runtime;
  /** The session's memory (its conversation's id and file). */
  memory: () => Memory | undefined;
  /** Tool calls are approved without asking (`--yes`). */
  yes: boolean;
  surface: Surface;
  /** Shows what the hooks leave for the person. */
  tell: (notice: HookNotice) => void;
}

/** The hooks of one session, and its start and end. */
export class SessionHooks {
  readonly hooks: Hooks;
  readonly #options: SessionHooksOptions;
  /** `SessionStart` ran: `SessionEnd` is owed. */
  #started = false;

  constructor(options: SessionHooksOptions) {
    this.#options = options;
    const { runtime } = options;
    this.hooks = new Hooks(runtime.config.hooks, {
      context: {
        sessionId: () => options.memory()?.session.id ?? "",
        transcriptPath: () => {
          const memory = options.memory();
          const store = memory?.enabled ? memory.store : undefined;
          return store?.kind === "file"
            ? join(store.location, `${memory!.session.id}.jsonl`)
            : undefined;
        },
        permissionMode: () => options.yes ? "bypassPermissions" : "default",
      },
      parentEnv: (name) => runtime.env.get(name),
      log: runtime.logger.child("hooks"),
      redact: (text) => runtime.logger.redactor.redact(text),
    });
  }

  /** Runs the `SessionStart` hooks; their context goes to `agent`'s system prompt. */
  async start(source: SessionSource, agent: Agent | undefined, signal?: AbortSignal) {
    this.#started = true;
    if (!this.hooks.has("SessionStart")) return agent?.setSessionContext([]);
    const model = this.#options.runtime.config.llm.model;
    const outcome = await sessionStart(this.hooks, { source, model }, signal);
    this.#tell(outcome, "SessionStart");
    agent?.setSessionContext(outcome.context);
  }

  /** Runs the `SessionEnd` hooks, once per start. */
  async end(reason: SessionEndReason, signal?: AbortSignal): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    if (!this.hooks.has("SessionEnd")) return;
    this.#tell(await sessionEnd(this.hooks, reason, signal), "SessionEnd");
  }

  #tell(result: Parameters<typeof hookNotices>[0], event: "SessionStart" | "SessionEnd") {
    for (const notice of hookNotices(result, event, this.#options.surface)) {
      this.#options.tell(notice);
    }
  }
}
