/**
 * A look at JSON-RPC messages as they cross a transport, before the SDK parses them: what
 * the server wrote, key order included (the SDK's schemas rebuild objects).
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";

/** Told of every message a transport sends and receives; must not throw or modify them. */
export interface MessageObserver {
  sent?(message: JSONRPCMessage): void;
  received?(message: JSONRPCMessage): void;
}
