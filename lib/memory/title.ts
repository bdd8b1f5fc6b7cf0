/**
 * What a session is about, for listings: its first user message on one line.
 *
 * @module
 */

import { abridge } from "../text/text.ts";
import type { StoredMessage } from "./types.ts";

/** Characters of the first user message kept as a session's title. */
export const TITLE_LENGTH = 72;

/** A session's title from its first user message; `undefined` for any other message. */
export function titleOf(message: StoredMessage): string | undefined {
  if (message.role !== "user" || !message.content) return undefined;
  const line = message.content.replace(/\s+/g, " ").trim();
  return line === "" ? undefined : abridge(line, TITLE_LENGTH);
}
