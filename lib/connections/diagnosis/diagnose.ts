/**
 * Why a server did not connect, established by looking, never guessed: the evidence the
 * stdio transport collected (spawn error, exit status, stderr, stray stdout, listening
 * ports) and probes of the configured address (TCP, HTTP, MCP, OAuth metadata).
 *
 * The result is a {@linkcode ServerConnectError} carrying docs/troubleshooting.md's message,
 * `Failed to connect to server '<name>': Session terminated`, with the probable cause and
 * remedy (or `OAuth authentication failed` when a configured OAuth login did not
 * succeed); raw runtime texts ("fetch failed", an HTML page) never reach it.
 *
 * This file settles what applies to every transport (an error patchbay already typed, a
 * missing Deno permission, no common protocol revision) and hands the rest to the
 * diagnosis of the entry's transport: `diagnose_stdio.ts` or `diagnose_http.ts` (with
 * `diagnose_proxy.ts` for a server behind a proxy).
 *
 * @module
 */

import type { ServerConfig } from "../../config/types.ts";
import { PatchbayError, ServerConnectError, ServerProbeFailedError } from "../../errors.ts";
import { denoPermissionFlag } from "../../deno_permission/denial.ts";
import { negotiationFailure } from "../../protocol.ts";
import { denoPermissionRemedy } from "../../deno_permission/remedy.ts";
import type { ConnectFailure } from "./diagnosis_context.ts";
import { diagnoseHttp } from "./diagnose_http.ts";
import { diagnoseStdio, stderrDetails } from "./diagnose_stdio.ts";

export type { ConnectFailure } from "./diagnosis_context.ts";

/**
 * The diagnosed failure. An error already typed by patchbay is kept as it is (the OAuth
 * provider's, a refused bearer token), except a server found unusable by the request OAuth
 * sends before a login: that one is diagnosed like any other entry's.
 */
export async function diagnose(context: ConnectFailure): Promise<PatchbayError> {
  const typed = typedCause(context.error);
  if (typed) return typed;
  const flag = denoPermissionFlag(context.error) ??
    denoPermissionFlag(context.stdio?.spawnError);
  if (flag) return permissionDenied(context.server, flag, context.error);
  // The server answered, but no protocol revision suits both sides: say which each offered.
  const negotiation = negotiationFailure(context.error, context.server);
  if (negotiation) {
    return new ServerConnectError(context.server.name, {
      ...negotiation,
      details: context.stdio ? stderrDetails(context.stdio) : [],
      cause: context.error,
    });
  }
  return context.server.transport === "stdio"
    ? await diagnoseStdio(context.server, context)
    : await diagnoseHttp(context.server, context);
}

/**
 * The error patchbay typed itself (a refused bearer token, an OAuth failure), also when
 * the SDK wrapped it: its version probe reports what the first request threw as the
 * probe's failure, with the original as `cause`.
 */
function typedCause(error: unknown): PatchbayError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PatchbayError) {
      return current instanceof ServerProbeFailedError ? undefined : current;
    }
    current = current.cause;
  }
  return undefined;
}

function permissionDenied(server: ServerConfig, flag: string, cause: unknown): ServerConnectError {
  return new ServerConnectError(server.name, {
    reason: `Permission denied: patchbay runs under explicit Deno permissions and ${flag} ` +
      "was not granted",
    remedy: denoPermissionRemedy(flag),
    cause,
  });
}
