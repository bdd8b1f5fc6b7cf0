/**
 * The lines the interactive client prints unprompted, around the prompt: a server that
 * connects, fails, is lost or comes back, changes its tools, updates a resource or logs
 * loudly, and what memory has to say. Only the wording lives here; `event_notices.ts`
 * decides when each is due (it keeps the servers' states and knows whether start-up or a
 * refresh is running). Names and texts from servers are untrusted: terminal escapes are
 * stripped.
 *
 * @module
 */

import type { ConnectionEvent, ServerStatus } from "../connections/types.ts";
import { attemptOf, seconds } from "../connections/progress.ts";
import type { PatchbayError } from "../errors.ts";
import type { MemoryEvent } from "../memory/mod.ts";
import type { Style } from "../terminal/style.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { plural } from "../text/text.ts";

/** Server log levels shown in the terminal outside debug mode. */
export const LOUD_LOG_LEVELS: ReadonlySet<string> = new Set([
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
]);

/** `⟳ notes: connection lost — why; reconnecting, attempt 2 of 5 in 3 s` */
export function reconnectingNotice(
  style: Style,
  server: string,
  error: PatchbayError | undefined,
  status: ServerStatus | undefined,
): string {
  const why = error ? ` — ${stripTerminalEscapes(error.reason)}` : "";
  const next = status?.retry?.nextAt
    ? `, ${attemptOf(status)} in ${seconds(status.retry.nextAt.getTime() - Date.now())}`
    : "";
  return style.yellow(`⟳ ${server}: connection lost${why}; reconnecting${next}\n`);
}

/** `✓ notes: reconnected · 3 tools, …` (or `connected`, after a failure). */
export function connectedNotice(
  style: Style,
  server: string,
  reconnected: boolean,
  status: ServerStatus | undefined,
): string {
  const what = reconnected ? "reconnected" : "connected";
  return style.green(`✓ ${server}: ${what}${offers(status)}\n`);
}

/** `↻ notes: tools changed (+new -old)` */
export function toolsChangedNotice(style: Style, server: string, change: string): string {
  return style.dim(`↻ ${server}: tools changed (${stripTerminalEscapes(change)})\n`);
}

/** A server's log message, or `undefined` when it is too quiet to interrupt for. */
export function serverLogNotice(
  style: Style,
  server: string,
  event: Extract<ConnectionEvent, { type: "log" }>,
  debugMode: boolean,
): string | undefined {
  if (!LOUD_LOG_LEVELS.has(event.level) && !debugMode) return undefined;
  const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
  return style.dim(`[${server}] ${event.level}: ${stripTerminalEscapes(data)}\n`);
}

/** `↻ notes: file:///a updated` */
export function resourceUpdatedNotice(style: Style, server: string, uri: string): string {
  return style.dim(`↻ ${server}: ${stripTerminalEscapes(uri)} updated\n`);
}

/**
 * A server of the start-up that connected or failed while others are still connecting
 * (`still`), or `undefined` when there is nothing to say.
 */
export function startupNotice(
  style: Style,
  server: string,
  status: ServerStatus | undefined,
  still: readonly string[],
): string | undefined {
  const rest = still.length > 0 ? style.dim(` · still connecting: ${names(still)}`) : "";
  if (status?.state === "connected") {
    return `${style.green(`✓ ${server} connected`)}${offers(status)}${rest}\n`;
  }
  if (status?.error) {
    const reason = stripTerminalEscapes(status.error.reason);
    return `${style.red(`✗ ${server} failed`)}: ${reason}${rest}\n`;
  }
  return undefined;
}

/** What memory reports (an outage, a recovery), with the error presented when there is one. */
export function memoryNotices(
  style: Style,
  event: MemoryEvent,
  presentError: (error: unknown) => string,
): string[] {
  const error = "error" in event ? event.error : undefined;
  const quiet = event.type === "restored" || event.type === "replayed" ||
    event.type === "write-recovered";
  // What failed first, in the contract's words with cause and remedy; then what patchbay
  // does about it.
  const lines = error ? [`${presentError(error)}\n`] : [];
  lines.push(quiet ? style.dim(`${event.message}\n`) : style.yellow(`${event.message}\n`));
  return lines;
}

/** Server names for a sentence: `a`, `a and b`, `a, b and c`. */
export function names(servers: readonly string[]): string {
  const clean = servers.map((s) => stripTerminalEscapes(s));
  return clean.length <= 1
    ? clean.join("")
    : `${clean.slice(0, -1).join(", ")} and ${clean.at(-1)}`;
}

/** ` · 15 tools, 4 prompts, 7 resources` for a connected server. */
function offers(status: ServerStatus | undefined): string {
  if (status?.state !== "connected") return "";
  const { tools, prompts, resources } = status.counts;
  return ` · ${plural(tools, "tool")}, ${plural(prompts, "prompt")}, ${
    plural(resources, "resource")
  }`;
}
