/**
 * The hooks of a session (docs/hooks.md): for one event, the commands whose matcher selects
 * it run one at a time, in the order the configuration writes them, each with the event's
 * input on stdin (`session_id`, `transcript_path`, `cwd`, `permission_mode`,
 * `hook_event_name` and the event's own fields, as Claude Code gives them). One at a time,
 * not all at once as in Claude Code: a hook sees the input as the hooks before it left it
 * (a rewritten tool input), and a refusal stops the hooks after it.
 *
 * What each answer means is the event's business (`tool_hooks.ts`, `turn_hooks.ts`); here
 * every run is logged (at debug level: the input, the exit, the output, so a failing hook
 * can be run again by hand) and a failed one becomes its {@linkcode HookFailedError}.
 *
 * @module
 */

import type { HookFailedError } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import { abridge } from "../text/text.ts";
import { type HookAnswer, readHookRun } from "./answer.ts";
import { hookFailedError } from "./failure.ts";
import { runHookCommand } from "./run_command.ts";
import type { HookCommand, HookEvent, HookGroup, HooksConfig } from "./types.ts";

/** Characters of a hook's input and output kept in one debug line. */
const LOGGED_CHARS = 4000;

/** What the hooks' input says about the session. */
export interface HookContext {
  /** `session_id`: the conversation's id. */
  sessionId(): string;
  /** `transcript_path`: the conversation's file, when memory keeps one. */
  transcriptPath?(): string | undefined;
  /** `permission_mode`: `bypassPermissions` when calls are approved without asking (--yes). */
  permissionMode?(): "default" | "bypassPermissions";
}

/** Options of {@linkcode Hooks}. */
export interface HooksOptions {
  context: HookContext;
  /** Where the inherited variables (`PATH`, `HOME`, …) come from. */
  parentEnv: (name: string) => string | undefined;
  /** @default silent */
  log?: Log;
  /**
   * Masks the session's secrets in what hooks say to the person and the model (stderr,
   * reasons, context, messages, failures' causes); a rewritten tool input is left as the
   * hook wrote it.
   * @default nothing masked
   */
  redact?: (text: string) => string;
}

/** How one hook of an event ended, as its event reads it. */
export type HookStep =
  | { hook: HookCommand; answer: HookAnswer }
  | { hook: HookCommand; error: HookFailedError };

/** What running an event's hooks left for the person beyond the event's own answers. */
export interface HookEventResult {
  /** Hooks that failed, each with its cause and remedy. */
  failures: HookFailedError[];
  /** `systemMessage`s: words of the hooks for the person. */
  messages: string[];
  /** The session's signal ended a hook: the rest were not run. */
  cancelled: boolean;
}

/** One run of an event's hooks. */
export interface EventRun {
  event: HookEvent;
  /** The event's own fields, asked for before each hook runs (an earlier hook may change them). */
  input: () => Record<string, unknown>;
  /** Which groups run, by their matcher. */
  select: (matcher: string | undefined) => boolean;
  /** Reads each hook's ending in turn; `false` stops the hooks after it. */
  each: (step: HookStep) => boolean | void | Promise<boolean | void>;
  /** What the hooks run for, in failures' causes (`everything/echo`). */
  what?: string;
  signal?: AbortSignal;
}

/** The hooks of one session, by event. */
export class Hooks {
  #config: HooksConfig | undefined;
  readonly #options: HooksOptions;
  readonly #log: Log;

  constructor(config: HooksConfig | undefined, options: HooksOptions) {
    this.#config = config;
    this.#options = options;
    this.#log = options.log ?? silentLog;
  }

  /** The hooks as the configuration now has them (`/refresh`). */
  setConfig(config: HooksConfig | undefined): void {
    this.#config = config;
  }

  /** Whether any hook is configured for `event`. */
  has(event: HookEvent): boolean {
    return (this.#config?.[event] ?? []).some((group) => group.hooks.length > 0);
  }

  /** Runs the hooks of `run.event` its matchers select, one at a time. */
  async run(run: EventRun): Promise<HookEventResult> {
    const result: HookEventResult = { failures: [], messages: [], cancelled: false };
    const groups: readonly HookGroup[] = this.#config?.[run.event] ?? [];
    for (const group of groups) {
      if (!run.select(group.matcher)) continue;
      for (const hook of group.hooks) {
        if (run.signal?.aborted) {
          result.cancelled = true;
          return result;
        }
        const step = await this.#runOne(run, hook);
        if (step === "cancelled") {
          result.cancelled = true;
          return result;
        }
        if ("error" in step) result.failures.push(step.error);
        else if (step.answer.systemMessage) result.messages.push(step.answer.systemMessage);
        if (await run.each(step) === false) return result;
      }
    }
    return result;
  }

  async #runOne(run: EventRun, hook: HookCommand): Promise<HookStep | "cancelled"> {
    const { context } = this.#options;
    const transcript = context.transcriptPath?.();
    const input = {
      session_id: context.sessionId(),
      ...(transcript ? { transcript_path: transcript } : {}),
      cwd: Deno.cwd(),
      permission_mode: context.permissionMode?.() ?? "default",
      hook_event_name: run.event,
      ...run.input(),
    };
    const ran = await runHookCommand(hook, input, {
      parentEnv: this.#options.parentEnv,
      signal: run.signal,
    });
    const mask = this.#options.redact ?? ((text: string) => text);
    const reading = readHookRun(
      run.event,
      ran.kind === "exited" || ran.kind === "timed_out"
        ? { ...ran, stderr: mask(ran.stderr) }
        : ran,
      hook.timeoutSeconds,
    );
    this.#log.debug("hook ran", {
      event: run.event,
      command: hook.command,
      folder: hook.folder,
      input: abridge(JSON.stringify(input), LOGGED_CHARS),
      ended: ran.kind,
      ms: Math.round(ran.durationMs),
      ...(ran.kind === "exited"
        ? {
          code: ran.code,
          ...(ran.signal ? { signal: ran.signal } : {}),
          ...(reading.kind === "answer" && reading.answer.suppressOutput
            ? {}
            : { stdout: abridge(ran.stdout, LOGGED_CHARS) }),
          stderr: abridge(ran.stderr, LOGGED_CHARS),
        }
        : {}),
    });
    if (reading.kind === "cancelled") return "cancelled";
    if (reading.kind === "failed") {
      // The cause quotes the hook's output (a broken JSON answer's values, the parser's
      // excerpt of it), which may hold a secret the hook was given.
      const failure = { ...reading.failure, cause: mask(reading.failure.cause) };
      const error = hookFailedError(run.event, hook, failure, run.what);
      this.#log.warn("hook failed", {
        event: run.event,
        command: hook.command,
        cause: error.reason,
      });
      return { hook, error };
    }
    return { hook, answer: maskAnswer(reading.answer, mask) };
  }
}

/** `answer` with `mask` applied to what is said to the person or the model. */
function maskAnswer(answer: HookAnswer, mask: (text: string) => string): HookAnswer {
  const masked: HookAnswer = { ...answer };
  for (const field of ["block", "decisionReason", "context", "systemMessage"] as const) {
    const text = answer[field];
    if (text !== undefined) masked[field] = mask(text);
  }
  if (answer.stop?.reason !== undefined) masked.stop = { reason: mask(answer.stop.reason) };
  return masked;
}
