/**
 * Tool input schemas exactly as the server wrote them. The SDK validates `tools/list`
 * with its own schemas, which rebuild each object (known keys first), so what it returns
 * is equal but not the server's document; the model must get the server's schema
 * untouched (JSON Schema 2020-12: `$schema`, `$defs`, `$anchor`, `allOf`, `if`/`then`/
 * `else`, `additionalProperties`, in the server's order). This observer keeps the raw
 * `inputSchema` of every tool from the answers to `tools/list` on the wire.
 *
 * @module
 */

import type { JSONRPCMessage, Tool } from "@modelcontextprotocol/client";
import type { MessageObserver } from "../transports/observer.ts";

/** Records the raw schemas of one session's `tools/list` answers. */
export class RawToolSchemas implements MessageObserver {
  /** Ids of `tools/list` requests awaiting their answer. */
  readonly #listing = new Set<string | number>();
  readonly #schemas = new Map<string, unknown>();

  sent(message: JSONRPCMessage): void {
    if ("method" in message && message.method === "tools/list" && "id" in message) {
      this.#listing.add(message.id);
    }
  }

  received(message: JSONRPCMessage): void {
    if (!("id" in message) || !this.#listing.delete(message.id as string | number)) return;
    if (!("result" in message)) return;
    const tools = (message.result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (tool && typeof tool === "object" && typeof tool.name === "string") {
        this.#schemas.set(tool.name, tool.inputSchema);
      }
    }
  }

  /** `tools` with each input schema as the server wrote it (when it was seen). */
  apply(tools: Tool[]): Tool[] {
    return tools.map((tool) => {
      const raw = this.#schemas.get(tool.name);
      return raw && typeof raw === "object"
        ? { ...tool, inputSchema: raw as Tool["inputSchema"] }
        : tool;
    });
  }
}
