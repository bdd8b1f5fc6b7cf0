/**
 * Answers to the requests servers send to patchbay: sampling (the server asks the
 * model), elicitation (the server asks the person) and roots (the folders the session
 * works in).
 *
 * The client declares all three capabilities from the start, so servers enable the
 * features that depend on them; the sampling and elicitation answers come from
 * {@linkcode ServerRequestHandlers} supplied later by the agent or the REPL. Until then,
 * or when the entry says `sampling: deny`, the server gets a clear refusal instead of a
 * request that hangs.
 *
 * @module
 */

import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type Client,
  type ClientCapabilities,
  ProtocolError,
  type Root,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import type { Log } from "../log.ts";
import type { ServerRequestHandlers } from "./types.ts";

/** JSON-RPC error code of a refusal (the code MCP's examples use for a rejected request). */
export const REFUSAL_CODE = -1;

/** What patchbay declares to every server. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {} },
  roots: { listChanged: true },
};

/** The roots of a session: folders as `file://` URLs. */
export function rootsOf(directories: readonly string[]): Root[] {
  return directories.map((dir) => ({ uri: pathToFileURL(dir).href, name: basename(dir) || dir }));
}

/** What the handlers need to know about the session. */
export interface RequestContext {
  server: ServerConfig;
  /** The current handlers (they may be set after connecting). */
  handlers: () => ServerRequestHandlers;
  roots: () => Root[];
  log: Log;
}

/** Registers the answers to server requests on `client`. */
export function installRequestHandlers(client: Client, context: RequestContext): void {
  const { server, log } = context;
  // Answered at once and without I/O: some servers ask right after initialize and
  // wait for the answer before they will shut down (see NOTES.md).
  client.setRequestHandler("roots/list", () => ({ roots: context.roots() }));

  client.setRequestHandler("sampling/createMessage", async (request, ctx) => {
    if (server.sampling === "deny") {
      log.info("refused a sampling request (sampling: deny)");
      throw new ProtocolError(
        REFUSAL_CODE,
        `patchbay refused the sampling request: the entry for server '${server.name}' ` +
          'has "sampling": "deny"',
      );
    }
    const handler = context.handlers().sampling;
    if (!handler) {
      log.info("refused a sampling request (no model is attached to this session)");
      throw new ProtocolError(
        REFUSAL_CODE,
        "patchbay refused the sampling request: no language model is attached to answer " +
          "server requests in this session",
      );
    }
    return await handler(server.name, request.params, ctx.mcpReq.signal);
  });

  client.setRequestHandler("elicitation/create", async (request, ctx) => {
    const handler = context.handlers().elicitation;
    if (!handler) {
      log.info("refused an elicitation request (no interactive prompt in this session)");
      throw new ProtocolError(
        REFUSAL_CODE,
        "patchbay refused the elicitation request: no one can be asked for input in this " +
          "session (it is not interactive)",
      );
    }
    return await handler(server.name, request.params, ctx.mcpReq.signal);
  });
}
