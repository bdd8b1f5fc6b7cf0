/**
 * The events around the conversation (docs/hooks.md): `UserPromptSubmit` before a message
 * goes to the model, `Stop` when the model answers without calling a tool, `SessionStart`
 * and `SessionEnd` around the interactive client and `run`.
 *
 * As in Claude Code, a failed hook of these events does not stop anything: it is reported
 * and the session goes on (only `PreToolUse` decides whether something runs, and fails
 * closed: `tool_hooks.ts`).
 *
 * @module
 */

import { HookBlockedError } from "../errors.ts";
import { abridge } from "../text/text.ts";
import { shownCommand } from "./failure.ts";
import type { HookEventResult, Hooks } from "./hooks.ts";
import { matchesValue } from "./matcher.ts";
import { MAX_HOOK_REASON_CHARS } from "./tool_hooks.ts";

/** How a session started, for `SessionStart` (`source`). */
export type SessionSource = "startup" | "resume" | "clear";

/** Why a session ended, for `SessionEnd` (`reason`), in Claude Code's words. */
export type SessionEndReason = "clear" | "prompt_input_exit" | "other";

/** What the `UserPromptSubmit` hooks said. */
export interface PromptOutcome extends HookEventResult {
  /** The prompt is not sent: why (exit code 2, `decision: "block"`, `"continue": false`). */
  blocked?: HookBlockedError;
  /** For the model, with the prompt: `additionalContext`, or plain stdout. */
  context: string[];
}

/** What the `Stop` hooks said. */
export interface StopOutcome extends HookEventResult {
  /** The turn goes on: what the model is told (exit code 2, `decision: "block"`). */
  continueWith?: string;
}

/** What the `SessionStart` hooks gave the model. */
export interface SessionStartOutcome extends HookEventResult {
  context: string[];
}

function reasonOf(text: string | undefined): string {
  const trimmed = text?.trim() ?? "";
  return trimmed === "" ? "(the hook gave no reason)" : abridge(trimmed, MAX_HOOK_REASON_CHARS);
}

/** Runs the `UserPromptSubmit` hooks of `prompt`. */
export async function userPromptSubmit(
  hooks: Hooks,
  prompt: string,
  signal?: AbortSignal,
): Promise<PromptOutcome> {
  const context: string[] = [];
  let blocked: HookBlockedError | undefined;
  const result = await hooks.run({
    event: "UserPromptSubmit",
    input: () => ({ prompt }),
    select: () => true,
    what: "the prompt",
    signal,
    each: (step) => {
      if ("error" in step) return true;
      const { answer } = step;
      const shown = shownCommand(step.hook);
      if (answer.stop) {
        blocked = new HookBlockedError(
          "the prompt",
          `UserPromptSubmit hook '${shown}' ended the turn: ${reasonOf(answer.stop.reason)}`,
          { stopped: true },
        );
        return false;
      }
      if (answer.block !== undefined) {
        blocked = new HookBlockedError(
          "the prompt",
          `UserPromptSubmit hook '${shown}' refused it: ${reasonOf(answer.block)}`,
        );
        return false;
      }
      if (answer.context) context.push(abridge(answer.context, MAX_HOOK_REASON_CHARS));
      return true;
    },
  });
  return { ...result, context, ...(blocked ? { blocked } : {}) };
}

/**
 * Runs the `Stop` hooks: the model answered `lastMessage` without calling a tool; `active`
 * when the turn already goes on because of a `Stop` hook (`stop_hook_active`).
 */
export async function stopHooks(
  hooks: Hooks,
  options: { lastMessage: string | null; active: boolean },
  signal?: AbortSignal,
): Promise<StopOutcome> {
  let continueWith: string | undefined;
  const result = await hooks.run({
    event: "Stop",
    input: () => ({
      stop_hook_active: options.active,
      last_assistant_message: options.lastMessage ?? "",
    }),
    select: () => true,
    what: "the end of the turn",
    signal,
    each: (step) => {
      if ("error" in step || step.answer.block === undefined) return true;
      continueWith = reasonOf(step.answer.block);
      return false;
    },
  });
  return { ...result, ...(continueWith !== undefined ? { continueWith } : {}) };
}

/** Runs the `SessionStart` hooks; `model` is the configured model. */
export async function sessionStart(
  hooks: Hooks,
  options: { source: SessionSource; model: string },
  signal?: AbortSignal,
): Promise<SessionStartOutcome> {
  const context: string[] = [];
  const messages: string[] = [];
  const result = await hooks.run({
    event: "SessionStart",
    input: () => ({ source: options.source, model: options.model }),
    select: (matcher) => matchesValue(matcher, options.source),
    signal,
    each: (step) => {
      if ("error" in step) return true;
      const { answer } = step;
      if (answer.context) context.push(abridge(answer.context, MAX_HOOK_REASON_CHARS));
      // Exit code 2 cannot stop a session from starting: its words are for the person.
      if (answer.block?.trim()) messages.push(reasonOf(answer.block));
      return true;
    },
  });
  return { ...result, messages: [...result.messages, ...messages], context };
}

/** Runs the `SessionEnd` hooks. */
export async function sessionEnd(
  hooks: Hooks,
  reason: SessionEndReason,
  signal?: AbortSignal,
): Promise<HookEventResult> {
  const messages: string[] = [];
  const result = await hooks.run({
    event: "SessionEnd",
    input: () => ({ reason }),
    select: (matcher) => matchesValue(matcher, reason),
    signal,
    each: (step) => {
      if (!("error" in step) && step.answer.block?.trim()) {
        messages.push(reasonOf(step.answer.block));
      }
      return true;
    },
  });
  return { ...result, messages: [...result.messages, ...messages] };
}
