/**
 * How far a server that is on its way is, in words: how long it has been connecting, and
 * which restart comes next and when. Shared by `/connections`, `/tools`, the banner and
 * the notices, so they say it alike.
 *
 * @module
 */

import type { ServerStatus } from "./types.ts";

/** Whether a server has yet to finish connecting (start-up or `/refresh`). */
export function isPending(status: ServerStatus): boolean {
  return !status.disabled && (status.state === "connecting" || status.state === "disconnected");
}

/**
 * `connecting for 3.2 s`, `reconnecting: attempt 2 of 6 in 1.0 s (lost 1.5 s ago; /refresh
 * tries now)`, `reconnecting: attempt 2 running`; `undefined` for a server at rest.
 */
export function progressOf(status: ServerStatus, now = new Date()): string | undefined {
  const since = seconds(now.getTime() - status.since.getTime());
  if (isPending(status) && status.installing) return installingOf(status, ` for ${since}`);
  if (isPending(status)) return `connecting for ${since}`;
  const retry = status.retry;
  if (status.state !== "reconnecting" || !retry) return undefined;
  return retry.nextAt
    ? `reconnecting: ${attemptOf(status)} in ${seconds(retry.nextAt.getTime() - now.getTime())} ` +
      `(lost ${seconds(now.getTime() - status.since.getTime())} ago; /refresh tries now)`
    : `reconnecting: ${attemptOf(status)} running`;
}

/** `attempt 2 of 6`, or `attempt 7` when the attempts have no limit. */
export function attemptOf(status: ServerStatus): string {
  const retry = status.retry;
  if (!retry) return "attempt 1";
  return `attempt ${retry.attempt}${retry.maxAttempts ? ` of ${retry.maxAttempts}` : ""}`;
}

/** A duration as people read it: 0.4 s, 12 s. */
export function seconds(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/**
 * `installing @playwright/mcp@0.0.83 through npx; first connect allowed 122 s`, or for a
 * runner whose cache cannot tell, `starting through uvx, which may be installing
 * mcp-server-git first; first connect allowed 150 s`; `during` (` for 3.2 s`) goes before
 * the bound. `undefined` when not installing.
 */
export function installingOf(status: ServerStatus, during = ""): string | undefined {
  const install = status.installing;
  if (!install) return undefined;
  const bound = `; first connect allowed ${install.boundSeconds} s`;
  return install.cache === "missing"
    ? `installing ${install.package} through ${install.runner}${during}${bound}`
    : `starting through ${install.runner}${during}, which may be installing ${install.package} ` +
      `first${bound}`;
}
