/**
 * Answers to the requests servers send to patchbay: sampling (the server asks the
 * model), elicitation (the server asks the person) and roots (the folders the server may
 * work in).
 *
 * Sampling and elicitation are declared to every server where someone can answer them
 * (sampling not in the commands that load no model, elicitation not where nobody can fill
 * in a form), so servers enable the features that depend on them; their answers come from
 * {@linkcode ServerRequestHandlers} supplied later by the agent or the REPL. Until then, or
 * when the entry says `sampling: deny`, the server gets a clear refusal instead of a
 * request that hangs, worded as patchbay's (`REFUSED`).
 *
 * Roots are declared only to a server whose entry lists `roots`. A server offered roots
 * uses them instead of its own settings (server-filesystem replaces the folders of its
 * arguments with them), so offering a folder nobody configured, such as the working
 * directory, would widen what the server can reach without anyone asking for it.
 *
 * @module
 */

import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type Client,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  ProtocolError,
  type Root,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import type { WaitClock } from "../async/wait_clock.ts";
import { REFUSED, SamplingRejectedError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import type { ServerRequestHandlers } from "./types.ts";

/** JSON-RPC error code of a refusal (the code MCP's examples use for a rejected request). */
export const REFUSAL_CODE = -1;

/**
 * What patchbay declares to a server: roots only when it has some to offer, elicitation
 * only when someone (or `--accept-form-defaults`) can answer a form, sampling only where a
 * model can answer (not in the commands that load none).
 */
export function clientCapabilities(
  offersRoots: boolean,
  offersElicitation = true,
  offersSampling = true,
): ClientCapabilities {
  return {
    ...(offersSampling ? { sampling: {} } : {}),
    ...(offersElicitation ? { elicitation: { form: {} } } : {}),
    ...(offersRoots ? { roots: { listChanged: true } } : {}),
  };
}

/** Folders as MCP roots: `file://` URLs named by their last segment. */
export function rootsOf(directories: readonly string[]): Root[] {
  return directories.map((dir) => ({ uri: pathToFileURL(dir).href, name: basename(dir) || dir }));
}

/** What the handlers need to know about the session. */
export interface RequestContext {
  server: ServerConfig;
  /** The current handlers (they may be set after connecting). */
  handlers: () => ServerRequestHandlers;
  /** The server's current roots; `undefined`: it is offered none (no capability). */
  roots: () => Root[] | undefined;
  /** Where the time the server waits on our answers is counted (its deadlines skip it). */
  waiting: WaitClock;
  log: Log;
}

/**
 * Registers the answers to server requests on `client`; `offersRoots`, `offersElicitation`
 * and `offersSampling` must match the capabilities the client was created with (the SDK
 * refuses a handler for an undeclared capability).
 */
export function installRequestHandlers(
  client: Client,
  context: RequestContext,
  offersRoots: boolean,
  offersElicitation = true,
  offersSampling = true,
): void {
  if (offersRoots) {
    // Answered at once and without I/O: some servers ask right after initialize and
    // wait for the answer before they will shut down.
    client.setRequestHandler("roots/list", () => ({ roots: context.roots() ?? [] }));
  }

  if (offersSampling) {
    client.setRequestHandler(
      "sampling/createMessage",
      (request, ctx) => answerSampling(context, request.params, ctx.mcpReq.signal),
    );
  }

  if (!offersElicitation) return;
  client.setRequestHandler(
    "elicitation/create",
    (request, ctx) => answerElicitation(context, request.params, ctx.mcpReq.signal),
  );
}

/**
 * A server's sampling request answered: refused for `sampling: deny` or when nothing can
 * answer, else by the session's handler (its approval and bounds), the server's clock
 * paused meanwhile. Task-backed requests (`task_receiver.ts`) are answered the same way.
 */
export async function answerSampling(
  context: RequestContext,
  params: CreateMessageRequest["params"],
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const { server, log } = context;
  if (server.sampling === "deny") {
    throw refusal(
      log,
      "a sampling request (sampling: deny)",
      `the sampling request: the entry for server '${server.name}' has "sampling": "deny"`,
    );
  }
  const handler = handlerFor(context, "sampling");
  return await answering(context, async () => {
    try {
      return await handler(server.name, params, signal);
    } catch (error) {
      // A refusal (the person declined) is answered as one, with its reason, like the
      // refusals above; the SDK would answer any other error as an internal error.
      // Worded like patchbay's other refusals, so that whoever reads the server's error
      // (a tool's failure) can tell the refusal was patchbay's (`refusalIn`).
      if (error instanceof SamplingRejectedError) {
        throw new ProtocolError(
          error.jsonRpcCode,
          `${REFUSED} the sampling request: ${error.reason}`,
        );
      }
      throw error;
    }
  });
}

/** A server's form (elicitation) answered by the session's handler, as for sampling. */
export async function answerElicitation(
  context: RequestContext,
  params: ElicitRequest["params"],
  signal: AbortSignal,
): Promise<ElicitResult> {
  const handler = handlerFor(context, "elicitation");
  return await answering(context, () => handler(context.server.name, params, signal));
}

/**
 * Answers the questions a 2026-07-28 task asks (its input requests) as the same requests
 * sent on their own are answered.
 */
export function inputAnswerer(context: RequestContext, offersElicitation: boolean) {
  return (
    kind: "sampling" | "elicitation" | "roots",
    params: Record<string, unknown>,
    signal: AbortSignal = new AbortController().signal,
  ): Promise<unknown> => {
    switch (kind) {
      case "sampling":
        return answerSampling(context, params as CreateMessageRequest["params"], signal);
      case "elicitation":
        if (!offersElicitation) {
          return Promise.reject(refusal(
            context.log,
            UNANSWERABLE.elicitation.logged,
            UNANSWERABLE.elicitation.told,
          ));
        }
        return answerElicitation(context, params as ElicitRequest["params"], signal);
      case "roots":
        return Promise.resolve({ roots: context.roots() ?? [] });
    }
  };
}

/**
 * A server's request refused: logged as `refused <logged>`, and answered with an error
 * that tells the server `patchbay refused <told>`.
 */
function refusal(log: Log, logged: string, told: string): ProtocolError {
  log.info(`refused ${logged}`);
  return new ProtocolError(REFUSAL_CODE, `${REFUSED} ${told}`);
}

/** Why a request of each kind is refused when nothing in this session can answer it. */
const UNANSWERABLE = {
  sampling: {
    logged: "a sampling request (no model is attached to this session)",
    told: "the sampling request: no language model is attached to answer server requests in " +
      "this session",
  },
  elicitation: {
    logged: "an elicitation request (no interactive prompt in this session)",
    told: "the elicitation request: no one can be asked for input in this session (it is not " +
      "interactive)",
  },
} as const;

/** The session's answer to requests of `kind`; without one, the request is refused. */
function handlerFor<K extends keyof typeof UNANSWERABLE>(
  context: RequestContext,
  kind: K,
): NonNullable<ServerRequestHandlers[K]> {
  const handler = context.handlers()[kind];
  if (handler) return handler;
  throw refusal(context.log, UNANSWERABLE[kind].logged, UNANSWERABLE[kind].told);
}

/** Runs a handler while the server's clock knows it is waiting on us. */
async function answering<T>(context: RequestContext, handle: () => Promise<T>): Promise<T> {
  const done = context.waiting.begin();
  try {
    return await handle();
  } finally {
    done();
  }
}
