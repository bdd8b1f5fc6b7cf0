/**
 * The bounds patchbay keeps on everything a server controls about its MCP tasks: how
 * often it is polled, how long a task is waited for and followed, what of its status
 * message reaches a screen, how many tasks are remembered and followed at once. A server
 * is untrusted: a `pollInterval` of 0 must not make patchbay poll in a hot loop, a `ttl`
 * of a year (or none) must not make it wait forever, a status message must not rewrite
 * the screen or carry a secret into the log.
 *
 * @module
 */

import type { Redactor } from "../redact/redact.ts";
import { showControls, stripTerminalEscapes } from "../terminal/terminal.ts";
import { abridge } from "../text/text.ts";

/**
 * Shortest wait between two polls of a task, whatever the server suggests: a suggestion
 * of 0 ms would otherwise be a busy loop of `tasks/get` requests.
 */
export const MIN_POLL_INTERVAL_MS = 250;

/**
 * Longest wait between two polls: a server suggesting an hour would otherwise leave a
 * finished task unnoticed for that long.
 */
export const MAX_POLL_INTERVAL_MS = 30_000;

/**
 * The lifetime patchbay asks for each task it starts (`task.ttl`, milliseconds from its
 * creation): long enough that a result survives a night with the client closed. The
 * server may grant less (server-everything keeps tasks 5 minutes).
 */
export const REQUESTED_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Longest patchbay follows a task after its creation, whatever its `ttl` (a server may
 * grant none: unlimited). Past it the task is reported as no longer followed, with how
 * to ask for it by hand.
 */
export const MAX_FOLLOW_MS = 7 * 24 * 60 * 60 * 1000;

/** Characters of a status message shown or stored (one line, controls made visible). */
export const MAX_STATUS_MESSAGE_CHARS = 200;

/** A task id longer than this, or holding control characters, is refused as unusable. */
export const MAX_TASK_ID_CHARS = 256;

/** Characters of a task's arguments kept in the task registry (masked, then abridged). */
export const MAX_ARGUMENTS_CHARS = 2000;

/** Task records the registry keeps; past it the oldest settled ones are forgotten first. */
export const MAX_TASK_RECORDS = 500;

/** Tasks one session follows at once in the background; the rest wait their turn. */
export const MAX_FOLLOWED_TASKS = 32;

/** Tasks (task-backed sampling and elicitation) patchbay keeps for servers at once. */
export const RECEIVER_MAX_TASKS = 16;

/** How long patchbay keeps the result of a task a server started on it (milliseconds). */
export const RECEIVER_TTL_MS = 10 * 60 * 1000;

/** The poll interval patchbay suggests to servers polling its tasks (milliseconds). */
export const RECEIVER_POLL_INTERVAL_MS = 1000;

/** A server's suggested poll interval held within the bounds; absent: one second. */
export function boundedPollInterval(suggestedMs: unknown): number {
  if (typeof suggestedMs !== "number" || !Number.isFinite(suggestedMs)) return 1000;
  return Math.min(MAX_POLL_INTERVAL_MS, Math.max(MIN_POLL_INTERVAL_MS, Math.round(suggestedMs)));
}

/**
 * When patchbay stops following a task created at `createdAtMs` with the server's `ttl`
 * (`null`: unlimited; absent: unknown): its ttl, and never past {@linkcode MAX_FOLLOW_MS}.
 */
export function followUntil(createdAtMs: number, ttlMs: number | null | undefined): number {
  const ttl = typeof ttlMs === "number" && Number.isFinite(ttlMs) && ttlMs >= 0
    ? ttlMs
    : MAX_FOLLOW_MS;
  return createdAtMs + Math.min(ttl, MAX_FOLLOW_MS);
}

/**
 * A status message as it may be shown and stored: secrets masked, terminal escapes
 * removed, other controls written visibly, on one line of at most
 * {@linkcode MAX_STATUS_MESSAGE_CHARS} characters.
 */
export function boundedStatusMessage(
  message: unknown,
  redactor: Redactor,
): string | undefined {
  if (typeof message !== "string" || message.trim() === "") return undefined;
  // Cut long before masking: a megabyte of status is not worth scanning for secrets.
  const head = message.slice(0, MAX_STATUS_MESSAGE_CHARS * 4);
  const shown = showControls(stripTerminalEscapes(redactor.redact(head)).replace(/\s+/g, " "));
  return abridge(shown.trim(), MAX_STATUS_MESSAGE_CHARS);
}

/** Whether a server's task id is one patchbay can keep and show. */
export function usableTaskId(id: unknown): id is string {
  return typeof id === "string" && id.length > 0 && id.length <= MAX_TASK_ID_CHARS &&
    // deno-lint-ignore no-control-regex
    !/[\u0000-\u001f\u007f-\u009f\s]/.test(id);
}

/** A tool call's arguments as the registry keeps them: masked, as JSON, abridged. */
export function maskedArguments(args: unknown, redactor: Redactor): string {
  let text: string;
  try {
    text = JSON.stringify(redactor.redactValue(args)) ?? "{}";
  } catch {
    text = "{}";
  }
  return abridge(text, MAX_ARGUMENTS_CHARS);
}
