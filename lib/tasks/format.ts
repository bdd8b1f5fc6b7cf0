/**
 * Task records as `patchbay tasks` and `/tasks` show them: one line each in a list, the
 * whole record for one task, and as JSON. What came from a server (ids, names, status
 * messages, results) has its terminal escapes removed and its controls made visible.
 *
 * @module
 */

import { SETTLED_STATES, type TaskRecord } from "../memory/task_registry.ts";
import { showControls, stripTerminalEscapes } from "../terminal/terminal.ts";
import { abridge, plural } from "../text/text.ts";

/** Characters of a status message shown in a list. */
const LIST_MESSAGE_CHARS = 60;

/** How long ago `iso` was, in words. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

function shown(text: string): string {
  return showControls(stripTerminalEscapes(text));
}

/** One line of a list of tasks. */
export function taskLine(record: TaskRecord, now = Date.now()): string {
  const message = record.statusMessage
    ? `  · ${abridge(shown(record.statusMessage), LIST_MESSAGE_CHARS)}`
    : "";
  const where = record.conversation ? `  (conversation ${record.conversation})` : "";
  return `${shown(record.id)}  ${shown(record.server)}/${shown(record.tool)}  ` +
    `${record.state.replace("_", " ")}, started ${ago(record.createdAt, now)}${message}${where}`;
}

/** A heading for a list of tasks: how many are running and how many are over. */
export function listHeading(records: readonly TaskRecord[], location: string): string {
  const running = records.filter((r) => !SETTLED_STATES.has(r.state)).length;
  return `Tasks in ${location}: ${plural(running, "running task")}, ` +
    `${records.length - running} over`;
}

/** Every field of a record worth reading, one per line (its result apart). */
export function taskDetail(record: TaskRecord, now = Date.now()): string[] {
  const lines = [
    `task:       ${shown(record.id)}`,
    `server:     ${shown(record.server)} (tool ${shown(record.tool)})`,
    `state:      ${record.state.replace("_", " ")}`,
    ...(record.statusMessage ? [`message:    ${shown(record.statusMessage)}`] : []),
    ...(record.error ? [`error:      ${shown(record.error)}`] : []),
    `arguments:  ${shown(record.arguments)}`,
    `started:    ${record.createdAt} (${ago(record.createdAt, now)})`,
    `updated:    ${record.updatedAt}`,
    ...(record.ttlMs !== undefined
      ? [`kept by the server: ${record.ttlMs === null ? "without limit" : `${record.ttlMs} ms`}`]
      : []),
    ...(record.conversation ? [`conversation: ${record.conversation}`] : []),
    ...(record.deliveredAt ? [`delivered:  ${record.deliveredAt}`] : []),
  ];
  return lines;
}

/** The record as `--json` prints it. */
export function taskJson(record: TaskRecord): Record<string, unknown> {
  return { ...record };
}
