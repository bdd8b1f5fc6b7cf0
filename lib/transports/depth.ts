/**
 * A bound on how deeply a server's message may nest. The SDK validates results with
 * recursive schemas, and a tool whose input schema nests 2,000 objects deep overflowed the
 * stack there: the whole server failed with a raw `RangeError` and a wrong remedy. Both
 * transports pass every message through {@linkcode DepthGuard} before the SDK sees it:
 *
 * - in a `tools/list` answer, a tool nested too deep is left out (the server's other
 *   tools stay usable) and a warning names it, delivered like a server's own warnings
 *   (the log, and the screen in an interactive session);
 * - any other answer nested too deep becomes an error answer that says why, so the
 *   request fails at once with a clear message instead of a crash or a timeout;
 * - a request from the server nested too deep is refused with a JSON-RPC error; a
 *   notification is dropped; both are logged.
 *
 * @module
 */

import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/client";
import type { Log } from "../log/log.ts";

/**
 * Deepest nesting of objects and arrays in one message from a server. Real tool schemas
 * nest a few dozen levels at most; the SDK's validation overflowed the stack at about a
 * thousand.
 */
export const MAX_MESSAGE_DEPTH = 128;

/** Levels a tool sits below the top of a `tools/list` answer (message, result, tools). */
const TOOL_LEVEL = 3;

/** JSON-RPC "Invalid Request", for a request from the server that is refused. */
const INVALID_REQUEST = -32600;
/** JSON-RPC "Internal error", for an answer patchbay could not accept. */
const INTERNAL_ERROR = -32603;

/** Nesting depth of `value` (a scalar is 0, `{}` is 1), walked without recursion. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > deepest) deepest = depth;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** What {@linkcode DepthGuard} needs from its transport. */
export interface DepthGuardOptions {
  /** The server's log. */
  log: Log;
  /** Sends an answer to the server (refusing one of its requests). */
  reply: (message: JSONRPCMessage) => Promise<void>;
  /** @default MAX_MESSAGE_DEPTH */
  maxDepth?: number;
}

/** Checks the depth of a server's messages (see the module doc). */
export class DepthGuard {
  readonly maxDepth: number;
  readonly #log: Log;
  readonly #reply: (message: JSONRPCMessage) => Promise<void>;
  /** Methods of the requests sent and not yet answered, by id. */
  readonly #pending = new Map<string | number, string>();

  constructor(options: DepthGuardOptions) {
    this.maxDepth = options.maxDepth ?? MAX_MESSAGE_DEPTH;
    this.#log = options.log;
    this.#reply = options.reply;
  }

  /** Notes an outgoing message (which answers need a look at the tools they list). */
  sent(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) this.#pending.set(message.id, message.method);
    else if (
      isJSONRPCNotification(message) && message.method === "notifications/cancelled"
    ) {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) this.#pending.delete(id);
    }
  }

  /**
   * The messages to deliver in place of `message`: itself when within the bound, else
   * what the module doc describes (possibly nothing).
   */
  received(message: JSONRPCMessage): JSONRPCMessage[] {
    const isAnswer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const method = isAnswer && message.id !== undefined ? this.#pending.get(message.id) : undefined;
    if (isAnswer && message.id !== undefined) this.#pending.delete(message.id);
    const depth = jsonDepth(message);
    if (depth <= this.maxDepth) return [message];

    if (method === "tools/list" && isJSONRPCResultResponse(message)) {
      const notes: JSONRPCMessage[] = [];
      const trimmed = this.#trimTools(message, notes);
      if (jsonDepth(trimmed) <= this.maxDepth) return [...notes, trimmed];
    }
    const what = `nests ${depth} levels deep (patchbay accepts ${this.maxDepth})`;
    if (isAnswer) {
      this.#log.warn(`the answer to ${method ?? "a request"} ${what}; it was refused`);
      return [{
        jsonrpc: "2.0",
        id: message.id!,
        error: {
          code: INTERNAL_ERROR,
          message: `patchbay refused the server's answer: it ${what}`,
        },
      }];
    }
    if (isJSONRPCRequest(message)) {
      this.#log.warn(`the server's ${message.method} request ${what}; it was refused`);
      this.#reply({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: INVALID_REQUEST, message: `the request ${what}` },
      }).catch(() => {});
      return [];
    }
    const name = isJSONRPCNotification(message) ? message.method : "message";
    this.#log.warn(`the server's ${name} ${what}; it was dropped`);
    return [];
  }

  /** The answer without the tools nested too deep; a warning for each in `notes`. */
  #trimTools(message: JSONRPCMessage & { result: unknown }, notes: JSONRPCMessage[]) {
    const result = message.result as { tools?: unknown };
    if (!Array.isArray(result.tools)) return message;
    const kept = result.tools.filter((tool: unknown) => {
      const depth = jsonDepth(tool);
      if (depth + TOOL_LEVEL <= this.maxDepth) return true;
      const raw = (tool as { name?: unknown } | null)?.name;
      const name = typeof raw === "string" ? `'${raw.slice(0, 100)}'` : "(without a name)";
      const text = `patchbay left out this server's tool ${name}: its definition nests ` +
        `${depth} levels deep (patchbay accepts ${this.maxDepth - TOOL_LEVEL}); the ` +
        "server's authors can flatten its input schema (e.g. with $ref/$defs)";
      // Delivered the way a server's own warnings reach the person (the log, and the
      // screen in a session); the text says it is patchbay speaking.
      notes.push({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "warning", data: text },
      });
      return false;
    });
    return { ...message, result: { ...result, tools: kept } };
  }
}
