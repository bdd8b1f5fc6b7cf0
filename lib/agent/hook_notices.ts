/**
 * What the hooks of an event leave for the person (docs/hooks.md), as notices of the agent's
 * UI: each failed hook with its cause and the remedy of the surface (the same words as any
 * error), and each `systemMessage`. `run --json` writes them as `notice` events whose fields
 * say so for scripts (`kind: "hook_failed"` with the error, `kind: "hook_message"`).
 *
 * @module
 */

import { PatchbayError, remedyFor, type Surface } from "../errors.ts";
import type { HookEventResult } from "../hooks/hooks.ts";
import type { HookEvent } from "../hooks/types.ts";
import type { NoticeDetail, NoticeLevel } from "./ui.ts";

/** One notice of the agent's UI. */
export interface HookNotice {
  level: NoticeLevel;
  text: string;
  detail: NoticeDetail;
}

/** The notices `result` of `event`'s hooks calls for, on `surface`. */
export function hookNotices(
  result: Pick<HookEventResult, "failures" | "messages">,
  event: HookEvent,
  surface: Surface,
): HookNotice[] {
  return [
    ...result.failures.map((error): HookNotice => {
      const remedy = remedyFor(error, surface);
      return {
        level: "warning",
        text: `${error.message}\n  cause: ${error.reason}\n  remedy: ${remedy}`,
        detail: {
          kind: "hook_failed",
          event,
          error: { code: error.code, message: error.message, cause: error.reason, remedy },
        },
      };
    }),
    ...result.messages.map((message): HookNotice => ({
      level: "warning",
      text: `${event} hook: ${message}`,
      detail: { kind: "hook_message", event },
    })),
  ];
}

/**
 * `error` with the remedy of `surface` alone: a tool call's error reaches the tool line
 * and `--json` through its `remedy`, which is otherwise the interactive client's.
 */
export function onSurface(error: PatchbayError, surface: Surface): PatchbayError {
  if (surface === "repl") return error;
  return new PatchbayError(error.code, error.message, {
    reason: error.reason,
    remedy: remedyFor(error, surface),
    details: [...error.details],
    cause: error.cause,
    exitCode: error.exitCode,
  });
}
