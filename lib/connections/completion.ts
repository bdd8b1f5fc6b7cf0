/**
 * A server's completion of a prompt or resource-template argument (MCP
 * `completion/complete`), bounded by {@linkcode COMPLETION_WAIT_MS}: it serves a Tab, which
 * must never fail loudly nor hold the person.
 *
 * @module
 */

import type { CompleteRequest, CompleteResult } from "@modelcontextprotocol/client";
import type { ServerConnection } from "./connection.ts";
import type { RequestSignalOptions } from "./manager_types.ts";

/**
 * Longest wait for a server's completion of a value (`complete`): it serves a Tab, and the
 * prompt takes no keys while a completion is pending, so a server that never answers
 * would otherwise hold the person for the whole request `timeout`.
 */
export const COMPLETION_WAIT_MS = 3000;

/**
 * The values `connection`'s server completes `params` with. A server without the
 * completions capability, or slower than {@linkcode COMPLETION_WAIT_MS}, yields none
 * rather than an error.
 */
export async function completeOn(
  connection: ServerConnection,
  params: CompleteRequest["params"],
  options: RequestSignalOptions = {},
): Promise<CompleteResult["completion"]> {
  if (!connection.session?.capabilities.completions) return { values: [] };
  // The person waits on a Tab: a server slow to answer one offers nothing this time.
  const deadline = AbortSignal.timeout(COMPLETION_WAIT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const result = await connection.request(
      "completion/complete",
      (session, request) => session.client.complete(params, request),
      { ...options, signal },
    );
    return result.completion;
  } catch (error) {
    if (deadline.aborted && !options.signal?.aborted) return { values: [] };
    throw error;
  }
}
