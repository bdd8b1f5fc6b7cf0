/**
 * patchbay's conversation and tools in the shapes an OpenAI-compatible chat API takes:
 * {@linkcode toMessageParam} for one message (images as `data:` URLs), and
 * {@linkcode toToolParam} for one tool (its JSON Schema passed on untouched).
 *
 * @module
 */

import type { ChatMessage, ToolDefinition } from "./provider.ts";
import type { ChatMessageParam, ChatToolParam } from "./chat_wire.ts";

/** One message of the conversation as the chat API's `messages` entry. */
export function toMessageParam(message: ChatMessage): ChatMessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return {
        role: "user",
        content: typeof message.content === "string"
          ? message.content
          : message.content.map((part) =>
            part.type === "text" ? { type: "text" as const, text: part.text } : {
              type: "image_url" as const,
              image_url: { url: `data:${part.mimeType};base64,${part.data}` },
            }
          ),
      };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      return {
        role: "assistant",
        content: message.content ?? (calls.length > 0 ? null : ""),
        ...(calls.length > 0
          ? {
            tool_calls: calls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          }
          : {}),
      };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

/** One tool as the chat API's `tools` entry. */
export function toToolParam(tool: ToolDefinition): ChatToolParam {
  // The server's JSON Schema exactly as it sent it ($schema, $defs, $anchor, allOf,
  // if/then/else, additionalProperties: 2020-12 keywords carry meaning the model needs).
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters,
    },
  };
}
