/**
 * What the slash commands share: printing a line, cleaning a server's text, the servers'
 * names and the errors for an unknown server or a missing argument.
 *
 * @module
 */

import { PatchbayError } from "../errors.ts";
import { stripTerminalEscapes, terminalColumns } from "../terminal/terminal.ts";
import { fitLines } from "../text/text.ts";
import type { ClientSession } from "../session/client_session.ts";
import { unknownServer as unknownServerNamed } from "./unknown_server.ts";

/**
 * Prints one line (or several) on the session's standard output, each fitted to the
 * terminal between words (a line too long goes on, indented, below it).
 */
export const out = (s: ClientSession, text: string) =>
  s.output.out(`${fitLines(text, terminalColumns(Deno.stdout))}\n`);
/**
 * Prints what a server sent (a resource, a tool's result, a prompt's messages) as it is:
 * the terminal wraps it, and it is copied without line breaks of ours.
 */
export const outVerbatim = (s: ClientSession, text: string) => s.output.out(`${text}\n`);
/** A server's or the model's text, stripped of terminal escapes. */
export const clean = (text: unknown) => stripTerminalEscapes(String(text ?? ""));

/** The names of the configured servers, connected or not. */
export function serverNames(s: ClientSession): string[] {
  return s.manager.states().map((st) => st.name);
}

/** A server name that is not configured: said with the names that are. */
export function unknownServer(s: ClientSession, name: string): PatchbayError {
  return unknownServerNamed(name, serverNames(s));
}

/** A command missing an argument: its synopsis and what to type. */
export function usage(synopsis: string, remedy: string): PatchbayError {
  return new PatchbayError("usage", `Usage: ${synopsis}`, {
    reason: "an argument is missing",
    remedy,
  });
}
