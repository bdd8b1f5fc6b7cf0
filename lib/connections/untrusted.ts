/**
 * What a connection does to a server's output before the rest of patchbay sees it,
 * beyond masking answers (`connection.ts`): the server's own requests masked before they
 * reach the model or the screen, and look-alike names reported
 * (docs/security-hostile-servers.md).
 *
 * @module
 */

import type { Log } from "../log/log.ts";
import { lookalikeWarnings } from "../text/names.ts";
import type { Redactor } from "../redact/redact.ts";
import type { Lists } from "./session/server_session.ts";
import type { ServerRequestHandlers } from "./types.ts";

/**
 * `handlers`, given each request masked: a sampling request goes to the model provider,
 * an elicitation to the screen, and a server may have put in them what patchbay sent it.
 */
export function maskedHandlers(
  handlers: ServerRequestHandlers,
  redactor: Redactor,
): ServerRequestHandlers {
  const { sampling, elicitation } = handlers;
  const mask = <T>(value: T) => redactor.redactValue(value);
  return {
    ...handlers,
    sampling: sampling && ((server, params, signal) => sampling(server, mask(params), signal)),
    elicitation: elicitation &&
      ((server, params, signal) => elicitation(server, mask(params), signal)),
  };
}

/** Logs the names in `lists` that differ only by invisible characters. */
export function warnLookalikes(lists: Lists, log: Log): void {
  const lines = [
    ...lookalikeWarnings("tools", lists.tools.map((t) => t.name)),
    ...lookalikeWarnings("prompts", lists.prompts.map((p) => p.name)),
    ...lookalikeWarnings("resources", lists.resources.map((r) => r.uri)),
  ];
  for (const line of lines) log.warn(line);
}
