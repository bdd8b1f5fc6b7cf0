/**
 * patchbay's conversation and tools in the shapes Anthropic's Messages API takes
 * ({@linkcode toMessagesParams}): the system prompt as `system` text blocks; messages whose
 * roles alternate, starting with `user`; tool calls as `tool_use` blocks and their results
 * as `tool_result` blocks, first in the user message after the call; images as `image`
 * blocks with a base64 source. Pure: no I/O.
 *
 * @module
 */

import type { ChatMessage, ContentPart, ToolDefinition } from "./provider.ts";
import {
  type ContentBlock,
  type MessageParam,
  MESSAGES_IMAGE_TYPES,
  type MessagesTool,
  type TextBlock,
} from "./messages_wire.ts";

/**
 * Said in place of a message with no text: the API refuses empty text blocks, and a turn
 * must not vanish (the roles would no longer alternate).
 */
export const EMPTY_TEXT = "(empty)";

/**
 * Opens a conversation that starts with the model's turn (a server's sampling request may):
 * the API's first message is the user's.
 */
export const OPENING_TEXT = "(The conversation so far follows.)";

/** The request's conversation and tools as the Messages API takes them. */
export interface MessagesParams {
  /** The system messages' text, one block each; absent without any. */
  system: TextBlock[] | undefined;
  messages: MessageParam[];
  /** Absent without tools. */
  tools: MessagesTool[] | undefined;
}

/** `messages` and `tools` as the Messages API's `system`, `messages` and `tools`. */
export function toMessagesParams(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
): MessagesParams {
  const system: TextBlock[] = [];
  const out: MessageParam[] = [];
  const add = (role: MessageParam["role"], content: ContentBlock[]) => {
    const last = out.at(-1);
    // Consecutive messages of one role are one turn: the API wants the roles to alternate.
    if (last?.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content.trim() !== "") system.push({ type: "text", text: message.content });
        break;
      case "user":
        add("user", userBlocks(message.content));
        break;
      case "assistant":
        add("assistant", assistantBlocks(message));
        break;
      case "tool":
        add("user", [{
          type: "tool_result",
          tool_use_id: toolUseId(message.toolCallId),
          content: message.content,
        }]);
        break;
    }
  }
  if (out[0]?.role === "assistant") {
    out.unshift({ role: "user", content: [{ type: "text", text: OPENING_TEXT }] });
  }
  for (const message of out) {
    // Tool results come first in their message (the API refuses text before them).
    message.content.sort((a, b) => rank(a) - rank(b));
  }
  const last = out.at(-1);
  if (last?.role === "assistant") trimTrailingWhitespace(last);
  return {
    system: system.length > 0 ? system : undefined,
    messages: out,
    tools: tools.length > 0 ? tools.map(toMessagesTool) : undefined,
  };
}

/** One tool as the API's `tools` entry (its JSON Schema passed on untouched). */
export function toMessagesTool(tool: ToolDefinition): MessagesTool {
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    input_schema: tool.parameters,
  };
}

/**
 * A tool call's id as the API accepts it (letters, digits, `_` and `-`): ids another
 * provider made (a conversation resumed under Claude) may hold other characters. The
 * same id always maps to the same text, so a call and its result still match.
 */
export function toolUseId(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9_-]/g, "_");
  return safe === "" ? "toolu_unnamed" : safe;
}

function userBlocks(content: string | ContentPart[]): ContentBlock[] {
  if (typeof content === "string") return [text(content)];
  const blocks = content.flatMap((part): ContentBlock[] => {
    if (part.type === "text") return part.text.trim() === "" ? [] : [text(part.text)];
    if (!MESSAGES_IMAGE_TYPES.includes(part.mimeType)) {
      return [text(
        `[An image of type ${part.mimeType} was not sent: the model takes JPEG, PNG, GIF and ` +
          "WebP images.]",
      )];
    }
    return [{
      type: "image",
      source: { type: "base64", media_type: part.mimeType, data: part.data },
    }];
  });
  return blocks.length > 0 ? blocks : [text("")];
}

function assistantBlocks(message: Extract<ChatMessage, { role: "assistant" }>): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (message.content !== null && message.content.trim() !== "") {
    blocks.push({ type: "text", text: message.content });
  }
  for (const call of message.toolCalls ?? []) {
    blocks.push({
      type: "tool_use",
      id: toolUseId(call.id),
      name: call.name,
      input: toolInput(call.arguments),
    });
  }
  return blocks.length > 0 ? blocks : [text("")];
}

/**
 * A call's arguments as the object the API wants. Arguments that are not a JSON object
 * (the model's own mistake, answered as such by the tool result) go as `{}`: the result
 * that follows quotes what was sent.
 */
function toolInput(argumentsJson: string): Record<string, unknown> {
  try {
    const value = JSON.parse(argumentsJson || "{}");
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

function text(value: string): TextBlock {
  return { type: "text", text: value.trim() === "" ? EMPTY_TEXT : value };
}

function rank(block: ContentBlock): number {
  return block.type === "tool_result" ? 0 : 1;
}

/** The API refuses a final assistant turn (a prefill) that ends in whitespace. */
function trimTrailingWhitespace(message: MessageParam): void {
  const block = message.content.at(-1);
  if (block?.type !== "text") return;
  const trimmed = block.text.trimEnd();
  block.text = trimmed === "" ? EMPTY_TEXT : trimmed;
}
