/**
 * A task's progress in one line, as the spinner and the status lines show it: its status,
 * how long it has run, and the server's status message (bounded and escaped already by
 * the connections): `task 75a0248a… working 3 s · Gathering sources...`.
 *
 * @module
 */

import type { TaskProgress } from "../connections/tasks/task_types.ts";
import { abridge } from "../text/text.ts";

/** Characters of a task id shown in a progress line (the whole id is in `/tasks`). */
const SHOWN_ID_CHARS = 12;

/** Characters of the status message shown in a progress line. */
const SHOWN_MESSAGE_CHARS = 60;

/** `progress` in one line, its elapsed time as of `now`. */
export function progressLine(progress: TaskProgress, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - progress.startedAt) / 1000));
  const elapsed = seconds < 60
    ? `${seconds} s`
    : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const status = progress.status.replace("_", " ");
  const message = progress.statusMessage
    ? ` · ${abridge(progress.statusMessage, SHOWN_MESSAGE_CHARS)}`
    : "";
  return `task ${abridge(progress.taskId, SHOWN_ID_CHARS)} ${status} ${elapsed}${message}`;
}
