/**
 * A request on one server's connection: refused when the server cannot take requests now,
 * else run on the live session under its one deadline (`request_deadline.ts`), with the
 * session's secrets masked in the answer and in any error.
 *
 * @module
 */

import type { RequestOptions } from "@modelcontextprotocol/client";
import type { PatchbayError } from "../errors.ts";
import type { Redactor } from "../redact/redact.ts";
import {
  type ConnectionRequestOptions,
  type RequestHost,
  requestWithDeadline,
} from "./request_deadline.ts";
import type { ServerSession } from "./session/server_session.ts";

/** The connection a request is made on. */
export interface RequestConnection {
  /** The live session, when connected. */
  session: ServerSession | undefined;
  /** Why requests cannot be made now, as an error naming the server. */
  unavailable: () => PatchbayError;
  /** The connection as the request's deadline sees it. */
  host: () => RequestHost;
  /** The session's secrets. */
  redactor: Redactor;
}

/**
 * Runs one request on `connection`'s live session, with the caller's signal and progress,
 * mapping failures to typed errors that name the server. A server that cannot take
 * requests now rejects (never throws at the call).
 */
export async function connectionRequest<T>(
  connection: RequestConnection,
  what: string,
  run: (session: ServerSession, options: RequestOptions) => Promise<T>,
  options: ConnectionRequestOptions = {},
): Promise<T> {
  const session = connection.session;
  if (!session) throw connection.unavailable();
  let result: T;
  try {
    result = await requestWithDeadline(connection.host(), session, what, run, options);
  } catch (error) {
    // What a server says in an error reaches the screen and the model as a cause.
    throw connection.redactor.redactError(error);
  }
  return options.unmasked ? result : connection.redactor.redactValue(result);
}
