/**
 * The conversation as stored ({@linkcode StoredMessage}) and as sent to the model
 * ({@linkcode ChatMessage}): conversion, repair of histories cut short, and trimming to
 * the context budget.
 *
 * Tool output is wrapped, when it is sent, in a `<tool_output>` element naming its server
 * and marked untrusted; the system prompt tells the model what that means. The wrapping is
 * applied on the way out, so stored conversations hold the tool's text alone.
 *
 * @module
 */

import type { StoredAttachment, StoredMessage } from "../memory/types.ts";
import type { ChatMessage } from "../llm/provider.ts";
import { type TokenEstimator, TOKENS_PER_IMAGE } from "../llm/tokens.ts";
import {
  type ImagePolicy,
  imagesToSend,
  toolImagesMessage,
  unsentImagesNote,
  userContent,
} from "./attachments.ts";

/** Tool result recorded for a call whose result never arrived (the session ended first). */
export const MISSING_RESULT_TEXT =
  "No result was recorded for this tool call (the session ended before it finished).";

/**
 * What heads the text the session's hooks give the model (docs/hooks.md), after a prompt,
 * the system prompt or a tool's output (outside its untrusted element).
 */
export const HOOK_CONTEXT_HEADING = "[Context from the session's hooks]";

/** Wraps tool output as untrusted data from `server`. */
export function wrapToolOutput(
  server: string | undefined,
  tool: string | undefined,
  text: string,
): string {
  // A closing tag inside the output must not end the element early.
  const inner = text.replace(/<\/(tool_output)/gi, "<\\/$1");
  return `<tool_output server="${attribute(server ?? "unknown")}" tool="${
    attribute(tool ?? "unknown")
  }" trust="untrusted">\n${inner}\n</tool_output>`;
}

/**
 * A task's outcome as the model reads it: said by patchbay, not the person, with the
 * tool's output wrapped as untrusted like any tool result.
 */
function taskOutcomeText(message: StoredMessage): string {
  const task = message.task!;
  const call = task.toolCallId ? ` (tool call ${task.toolCallId})` : "";
  const how = task.state === "completed"
    ? `completed${task.isError ? " with an error" : ""}; its result`
    : `ended: ${task.state}; what the server said`;
  return `[patchbay, not the user: the task ${task.id} that ${task.server}/${task.tool} ` +
    `started earlier${call} ${how} follows]\n` +
    wrapToolOutput(task.server, task.tool, message.content ?? "");
}

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * The stored conversation as the model receives it: each message by
 * {@linkcode toChatMessage}, and after each step's tool results the user message that
 * carries their images to a vision model (see `attachments.ts`).
 */
export function toChatMessages(
  history: readonly StoredMessage[],
  policy: ImagePolicy = { vision: false },
): ChatMessage[] {
  const sent = imagesToSend(history, policy);
  const out: ChatMessage[] = [];
  let step: StoredMessage[] = [];
  const endStep = () => {
    const images = toolImagesMessage(step, sent);
    if (images) out.push(images);
    step = [];
  };
  for (const message of history) {
    if (message.role !== "tool") endStep();
    else step.push(message);
    out.push(toChatMessage(message, sent, policy.vision));
  }
  endStep();
  return out;
}

/**
 * One stored message as the model receives it. `sent`: the image attachments that go as
 * image parts (none by default: images are then described).
 */
export function toChatMessage(
  message: StoredMessage,
  sent: ReadonlySet<StoredAttachment> = new Set(),
  vision = false,
): ChatMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content ?? "" };
    case "user":
      if (message.task) return { role: "user", content: taskOutcomeText(message) };
      return {
        role: "user",
        content: message.attachments?.length
          ? userContent(message.content ?? "", message.attachments, sent)
          : message.content ?? "",
      };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? { toolCalls: message.toolCalls.map((c) => ({ ...c })) }
          : {}),
      };
    case "tool": {
      const note = unsentImagesNote(message.attachments ?? [], sent, vision);
      const text = message.content ?? "";
      return {
        role: "tool",
        toolCallId: message.toolCallId ?? "",
        content: wrapToolOutput(message.server, message.tool, note ? `${text}\n${note}` : text) +
          (message.hookContext ? `\n\n${HOOK_CONTEXT_HEADING}\n${message.hookContext}` : ""),
      };
    }
  }
}

/**
 * A history fit to send: system messages dropped (the system prompt is built per request),
 * every assistant tool call followed by exactly one result (a missing one is recorded as
 * {@linkcode MISSING_RESULT_TEXT}), and results without their call dropped. Stored
 * conversations from a session that crashed mid-tool are repaired by this on load.
 */
export function repairHistory(
  messages: readonly StoredMessage[],
  now = new Date(),
): StoredMessage[] {
  const out: StoredMessage[] = [];
  let open: { ids: string[]; answered: Set<string> } | undefined;
  const closeOpen = () => {
    if (!open) return;
    for (const id of open.ids) {
      if (!open.answered.has(id)) {
        out.push({
          role: "tool",
          content: MISSING_RESULT_TEXT,
          toolCallId: id,
          isError: true,
          timestamp: now.toISOString(),
        });
      }
    }
    open = undefined;
  };
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "tool") {
      const id = message.toolCallId;
      if (open && id && open.ids.includes(id) && !open.answered.has(id)) {
        open.answered.add(id);
        out.push(message);
      }
      continue;
    }
    closeOpen();
    out.push(message);
    if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
      open = { ids: message.toolCalls.map((c) => c.id), answered: new Set() };
    }
  }
  closeOpen();
  return out;
}

/** What {@linkcode trimHistory} kept. */
export interface TrimResult {
  messages: StoredMessage[];
  /** Messages left out, oldest first. */
  dropped: number;
  /** Estimated tokens of what was kept. */
  tokens: number;
  /** Even the latest exchange alone exceeds the budget. */
  overBudget: boolean;
}

/**
 * The newest part of the history that fits `budget` tokens. Whole turns (a user message
 * and everything after it up to the next) go first, oldest first; if the current turn alone
 * is too long, its oldest steps go next, but never its user message or its latest step.
 * An assistant message with tool calls and its results stay or go together.
 */
export function trimHistory(
  history: readonly StoredMessage[],
  budget: number,
  estimator: TokenEstimator,
): TrimResult {
  // Images travel as parts (of the message or of the one after a step's results).
  const cost = history.map((m) =>
    estimator.scale(estimator.raw([toChatMessage(m)])) +
    (m.attachments ?? []).filter((a) => a.kind === "image" && a.data).length * TOKENS_PER_IMAGE
  );
  let total = cost.reduce((a, b) => a + b, 0);
  if (total <= budget) {
    return { messages: [...history], dropped: 0, tokens: total, overBudget: false };
  }
  const turns = splitAt(history.map((_, i) => i), (i) => history[i].role === "user");
  while (turns.length > 1 && total > budget) {
    for (const i of turns.shift()!) total -= cost[i];
  }
  let kept = turns.flat();
  if (total > budget && kept.length > 0) {
    // Within the current turn: steps are an assistant message and its tool results.
    const [first, ...rest] = splitAt(kept, (i) => history[i].role !== "tool");
    while (rest.length > 1 && total > budget) {
      for (const i of rest.shift()!) total -= cost[i];
    }
    kept = [...first, ...rest.flat()];
  }
  return {
    messages: kept.map((i) => history[i]),
    dropped: history.length - kept.length,
    tokens: total,
    overBudget: total > budget,
  };
}

/** Splits `items` into runs, starting a new run at each item `starts` accepts. */
function splitAt<T>(items: readonly T[], starts: (item: T) => boolean): T[][] {
  const runs: T[][] = [];
  for (const item of items) {
    if (runs.length === 0 || starts(item)) runs.push([]);
    runs[runs.length - 1].push(item);
  }
  return runs;
}
