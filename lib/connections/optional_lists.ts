/**
 * The lists a server may offer without serving them well: prompts, resources and resource
 * templates. A server whose capabilities declare one but that answers its list request
 * with an error (mcp-fetch-server 1.1.2 declares `resources: {}` and answers
 * `resources/list` with -32601) is still a working server: what it really does counts, so
 * that list is empty and a warning says why, instead of the whole connection failing.
 *
 * Only the server's own answer is forgiven (an error response, or a result that does not
 * parse); a lost connection or a deadline still fails the listing as before.
 *
 * @module
 */

import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { cleanText } from "./request_errors.ts";

/** A list a server may fail to serve without failing its connection. */
export type OptionalList = "prompts" | "resources" | "resource templates";

/** The request that fetches each list. */
const METHODS: Readonly<Record<OptionalList, string>> = {
  prompts: "prompts/list",
  resources: "resources/list",
  "resource templates": "resources/templates/list",
};

/** The capability that made patchbay ask for each list. */
const CAPABILITIES: Readonly<Record<OptionalList, string>> = {
  prompts: "prompts",
  resources: "resources",
  "resource templates": "resources",
};

/**
 * Whether `error` is the server's own answer to a request (an error response, or a result
 * that does not parse) rather than a lost connection, a deadline or a cancellation.
 */
export function answeredBadly(error: unknown): boolean {
  return error instanceof ProtocolError ||
    (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult);
}

/** How the server answered a list request it failed: `an error (Method not found, code -32601)`. */
export function badAnswer(error: unknown): string {
  return error instanceof ProtocolError
    ? `an error (${cleanText(error)}, code ${error.code})`
    : `a result patchbay cannot read (${cleanText(error)})`;
}

/**
 * The warnings of `failed` (each list with how the server answered it), in words; lists of
 * one capability answered alike share a line: `the server declares resources but answered
 * resources/list and resources/templates/list with an error (…): it is treated as having no
 * resources and no resource templates`.
 */
export function listWarnings(failed: ReadonlyMap<OptionalList, string>): string[] {
  const groups = new Map<string, OptionalList[]>();
  for (const [list, answer] of failed) {
    const key = `${CAPABILITIES[list]}\n${answer}`;
    groups.set(key, [...groups.get(key) ?? [], list]);
  }
  return [...groups].map(([key, lists]) => {
    const [capability, answer] = key.split("\n");
    return `the server declares ${capability} but answered ` +
      `${lists.map((list) => METHODS[list]).join(" and ")} with ${answer}: it is treated as ` +
      `having no ${lists.join(" and no ")}`;
  });
}

/**
 * The items `request` lists; when the server answers it badly, none, with how it answered
 * kept in `failed` under `list` (a later successful listing removes it).
 */
export async function optionalList<T>(
  list: OptionalList,
  request: Promise<T[]>,
  failed: Map<OptionalList, string>,
): Promise<T[]> {
  try {
    const items = await request;
    failed.delete(list);
    return items;
  } catch (error) {
    if (!answeredBadly(error)) throw error;
    failed.set(list, badAnswer(error));
    return [];
  }
}

/**
 * The warnings of what `session` failed to list, masked, for the connection to keep in
 * place of `before`; each one not in `before` is logged.
 */
export function adoptWarnings(
  session: { failedLists: ReadonlyMap<OptionalList, string> },
  before: readonly string[],
  redactor: Redactor,
  log: Log,
): string[] {
  const warnings = redactor.redactValue(listWarnings(session.failedLists));
  for (const warning of warnings) {
    if (!before.includes(warning)) log.warn(warning);
  }
  return warnings;
}
