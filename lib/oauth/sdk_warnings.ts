/**
 * The SDK's OAuth code reports some recoveries with `console.warn("[mcp-sdk] …")` (an
 * expired refresh token being discarded, a refresh falling back to a new login). In a
 * terminal session those lines would land in the middle of the prompt, so while patchbay
 * runs the SDK's auth functions they go to the log instead; every other warning passes
 * through untouched.
 *
 * @module
 */

import type { Log } from "../log/log.ts";

const SDK_PREFIX = "[mcp-sdk]";

let original: typeof console.warn | undefined;
/** The logs of the SDK calls running now, oldest first; one entry a call (a log may repeat). */
const sinks: Log[] = [];

/**
 * Runs `work` with the SDK's warnings written to `log` (at warn level) instead of stderr.
 * The console is patched only while such work runs, and a log receives lines only while
 * its own work runs: a finished login's log is taken off at once, not when the last
 * concurrent login ends.
 */
export async function withSdkWarningsLogged<T>(log: Log, work: () => Promise<T>): Promise<T> {
  if (sinks.length === 0) {
    original = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].startsWith(SDK_PREFIX)) {
        // Concurrent logins share the one console; the newest log still running gets it.
        sinks.at(-1)?.warn(args.map(String).join(" "));
        return;
      }
      original!(...args);
    };
  }
  sinks.push(log);
  try {
    return await work();
  } finally {
    sinks.splice(sinks.lastIndexOf(log), 1);
    if (sinks.length === 0) {
      console.warn = original!;
      original = undefined;
    }
  }
}
