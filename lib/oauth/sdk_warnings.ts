/**
 * The SDK's OAuth code reports some recoveries with `console.warn("[mcp-sdk] …")` (an
 * expired refresh token being discarded, a refresh falling back to a new login). In a
 * terminal session those lines would land in the middle of the prompt, so while patchbay
 * runs the SDK's auth functions they go to the log instead; every other warning passes
 * through untouched.
 *
 * @module
 */

import type { Log } from "../log.ts";

const SDK_PREFIX = "[mcp-sdk]";

let active = 0;
let original: typeof console.warn | undefined;
const sinks = new Set<Log>();

/** Runs `work` with the SDK's warnings written to `log` (at warn level) instead of stderr. */
export async function withSdkWarningsLogged<T>(log: Log, work: () => Promise<T>): Promise<T> {
  if (active++ === 0) {
    original = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].startsWith(SDK_PREFIX)) {
        // Concurrent logins share the one console; the newest log gets the line.
        [...sinks].at(-1)?.warn(args.map(String).join(" "));
        return;
      }
      original!(...args);
    };
  }
  sinks.add(log);
  try {
    return await work();
  } finally {
    if (--active === 0) {
      console.warn = original!;
      original = undefined;
      sinks.clear();
    }
  }
}
