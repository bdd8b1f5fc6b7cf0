/**
 * What an approval covers of the server a tool comes from: everything in its entry that
 * decides what runs. For a local process that is its command, arguments, working folder
 * and environment (names and values: `NODE_OPTIONS=--require inject.js` is code too); for
 * a server at a URL, the URL and the names of the headers sent (their values are tokens,
 * which are renewed without the server becoming another one). Each part is kept as a
 * digest, so approvals.json never holds a value of the environment, and a change can be
 * named part by part when the person is asked again.
 *
 * @module
 */

import { createHash } from "node:crypto";

/** The parts of an entry an approval covers, in the order they are named. */
export const LAUNCH_PARTS = [
  "transport",
  "command",
  "args",
  "cwd",
  "env",
  "url",
  "headers",
] as const;

export type LaunchPart = (typeof LAUNCH_PARTS)[number];

/**
 * Tags the digest's layout: an approval remembered under another layout (before `env` and
 * `headers` were covered) never matches, so it is asked about again.
 */
const LAYOUT = "launch/2";

/** Characters of each part's digest kept: enough to tell a change, shorter to store. */
const PART_DIGEST_CHARS = 16;

/** How an entry starts its server, as the configuration has it (values expanded). */
export interface ServerLaunch {
  transport?: string;
  command?: string;
  args?: readonly string[];
  cwd?: string;
  env?: Readonly<Record<string, string>>;
  url?: string;
  headers?: Readonly<Record<string, string>>;
}

/** One digest of everything that decides what runs, and one per part. */
export interface LaunchIdentity {
  /** SHA-256 (hex) of every part: what an approval must match. */
  digest: string;
  /** A short digest of each part, to say which changed. */
  parts: Record<LaunchPart, string>;
}

/** The identity of what `server`'s entry runs. */
export function launchIdentity(server: ServerLaunch): LaunchIdentity {
  const values: Record<LaunchPart, unknown> = {
    transport: server.transport ?? null,
    command: server.command ?? null,
    args: server.args ?? [],
    cwd: server.cwd ?? null,
    // Sorted: the order variables are written in changes nothing that runs.
    env: Object.entries(server.env ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
    url: server.url ?? null,
    // Names only, as HTTP compares them (case-insensitive), sorted.
    headers: [...new Set(Object.keys(server.headers ?? {}).map((h) => h.toLowerCase()))].sort(),
  };
  const parts = Object.fromEntries(
    LAUNCH_PARTS.map((
      part,
    ) => [part, sha256(JSON.stringify(values[part])).slice(0, PART_DIGEST_CHARS)]),
  ) as Record<LaunchPart, string>;
  const digest = sha256(JSON.stringify([LAYOUT, LAUNCH_PARTS.map((part) => values[part])]));
  return { digest, parts };
}

/**
 * The parts of `now` that differ from `approved`; `"unrecorded"` when the approval holds no
 * parts to compare (remembered before they were recorded, or recorded otherwise).
 */
export function changedParts(
  approved: Readonly<Record<string, string>> | undefined,
  now: LaunchIdentity,
): LaunchPart[] | "unrecorded" {
  if (!approved || LAUNCH_PARTS.some((part) => typeof approved[part] !== "string")) {
    return "unrecorded";
  }
  return LAUNCH_PARTS.filter((part) =>
    approved[part].slice(0, PART_DIGEST_CHARS) !== now.parts[part]
  );
}

/** Each part in the words of the approval question. */
const PART_WORDS: Readonly<Record<LaunchPart, string>> = {
  transport: "transport",
  command: "command",
  args: "arguments",
  cwd: "working folder",
  env: "environment",
  url: "URL",
  headers: "header names",
};

/** Why a tool approved before is asked about again, its server's entry having changed. */
export function describeLaunchChange(change: readonly LaunchPart[] | "unrecorded"): string {
  if (change === "unrecorded") {
    return "approved before patchbay bound approvals to the server's environment and " +
      "headers, so asked once more";
  }
  if (change.length === 0) return "how its server is started changed since you approved it";
  const words = change.map((part) => PART_WORDS[part]);
  const list = words.length === 1
    ? words[0]
    : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
  return `its server's ${list} changed since you approved it`;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
