/**
 * The launcher's memory of the last plan it computed for one command line in one folder,
 * with everything the plan was computed from: the configuration and .env (by content), the
 * variables patchbay reads, patchbay's own permission code, the stored OAuth logins and the
 * commands the plan allows (by modification time). A plan is reused only while every one
 * of them is unchanged, so an edit to the configuration or .env is in effect at the next
 * start without anyone running `patchbay permissions`.
 *
 * No npm imports: the launcher must stay cheap.
 *
 * @module
 */

import { join } from "node:path";
import {
  MAX_CONFIG_BYTES,
  MAX_STATE_FILE_BYTES,
  readBoundedFileSync,
  readBoundedTextSync,
} from "../bounded_read.ts";

/** The plan as `patchbay permissions --json` prints it (the parts the launcher uses). */
export interface PrintedPlan {
  flags: string[];
  grants: { kind: string; value: string; why: string }[];
  all_env: string | null;
  notes: string[];
}

/** What a plan was computed from; each value as it was then (`null`: absent). */
export interface PlanInputs {
  /** The {@linkcode fingerprint} of each file's content. */
  files: Record<string, string | null>;
  /** Modification time (ms) of each path. */
  stats: Record<string, number | null>;
  /** Each variable's value. */
  env: Record<string, string | null>;
}

/** One remembered plan. */
export interface CachedPlan {
  format: typeof CACHE_FORMAT;
  inputs: PlanInputs;
  plan: PrintedPlan;
}

/** Bumped whenever a cached plan's meaning changes. */
export const CACHE_FORMAT = 3;

/**
 * Variables the plan depends on whatever the configuration says: where files are, where
 * commands are found, the browser, and the variables that select Redis.
 */
const BASE_VARIABLES = [
  "PATH",
  "HOME",
  "USERPROFILE",
  "XDG_STATE_HOME",
  "XDG_DATA_HOME",
  "XDG_CONFIG_HOME",
  "LOCALAPPDATA",
  "APPDATA",
  "BROWSER",
  "REDIS_URL",
  "REDIS_HOST",
];

/**
 * A fingerprint of `data` (its length and two 53-bit cyrb53 hashes, hex) to notice an edit.
 * Not SHA-256: WebCrypto's first digest costs several milliseconds of every start, and the
 * cache guards against edits, not against someone who can write the files it compares.
 */
export function fingerprint(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const hex = (n: number) => n.toString(16).padStart(14, "0");
  return `${bytes.length.toString(16)}-${hex(cyrb53(bytes, 0))}${hex(cyrb53(bytes, 0x9e3779b9))}`;
}

/** cyrb53 (public domain): a fast 53-bit hash with good mixing, seeded. */
function cyrb53(bytes: Uint8Array, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < bytes.length; i++) {
    h1 = Math.imul(h1 ^ bytes[i], 2654435761);
    h2 = Math.imul(h2 ^ bytes[i], 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The files fingerprinted are configurations and .env files, read within their bound. */
const INPUT_BOUND = { what: "a file the plan depends on", maxBytes: MAX_CONFIG_BYTES };

function fileHash(path: string): string | null {
  try {
    return fingerprint(readBoundedFileSync(path, INPUT_BOUND));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    // A pipe, a device or an oversized file: never equal to a remembered fingerprint, and
    // the client that reads it says why it cannot.
    return "unreadable";
  }
}

function mtime(path: string): number | null {
  try {
    return Deno.statSync(path).mtime?.getTime() ?? 0;
  } catch {
    return null;
  }
}

function variable(name: string): string | null {
  try {
    return Deno.env.get(name) ?? null;
  } catch {
    return null;
  }
}

/** What to record: files by content, paths by time, variables by value. */
export interface InputNames {
  files: readonly string[];
  stats: readonly string[];
  env: readonly string[];
}

/** The current values of `names`. */
export function currentInputs(names: InputNames): PlanInputs {
  const files: PlanInputs["files"] = {};
  for (const path of names.files) files[path] = fileHash(path);
  const stats: PlanInputs["stats"] = {};
  for (const path of names.stats) stats[path] = mtime(path);
  const env: PlanInputs["env"] = {};
  for (const name of new Set([...BASE_VARIABLES, ...names.env])) env[name] = variable(name);
  return { files, stats, env };
}

/**
 * The names to record for `plan`: the variables it grants (every one patchbay reads), every
 * REDIS_* variable when it grants the whole environment for Redis, and the commands it
 * allows by path.
 */
export function namesFor(plan: PrintedPlan, base: InputNames): InputNames {
  const env = plan.grants.filter((g) => g.kind === "env").map((g) => g.value);
  if (plan.all_env !== null) {
    try {
      env.push(...Object.keys(Deno.env.toObject()).filter((name) => name.startsWith("REDIS_")));
    } catch {
      // Without the whole environment, the named variables are what can be compared.
    }
  }
  const commands = plan.grants.filter((g) => g.kind === "run" && g.value.startsWith("/"))
    .map((g) => g.value);
  return {
    files: base.files,
    stats: [...base.stats, ...commands],
    env: [...base.env, ...env],
  };
}

/** Whether `cached` was computed from the same inputs as now. */
export function stillValid(cached: CachedPlan): boolean {
  if (cached.format !== CACHE_FORMAT) return false;
  const names = {
    files: Object.keys(cached.inputs.files),
    stats: Object.keys(cached.inputs.stats),
    env: Object.keys(cached.inputs.env),
  };
  const now = currentInputs(names);
  return equalRecords(now.files, cached.inputs.files) &&
    equalRecords(now.stats, cached.inputs.stats) && equalRecords(now.env, cached.inputs.env);
}

function equalRecords<T>(a: Record<string, T>, b: Record<string, T>): boolean {
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

/** The file remembering the plan for `key` (the command line and folder) in `dir`. */
export function cacheFile(dir: string, key: string): string {
  return join(dir, `${fingerprint(key)}.json`);
}

/** The remembered plan in `path`, if it is there and readable. */
export function readCachedPlan(path: string): CachedPlan | undefined {
  try {
    const parsed = JSON.parse(
      readBoundedTextSync(path, { what: "a remembered plan", maxBytes: MAX_STATE_FILE_BYTES }),
    );
    return parsed?.format === CACHE_FORMAT ? parsed as CachedPlan : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Remembers `cached` in `path`, replaced atomically. Returns false where it cannot be
 * written (a folder the launcher may not write): the plan is then computed at each start.
 */
export async function writeCachedPlan(path: string, cached: CachedPlan): Promise<boolean> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  const temporary = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(temporary, JSON.stringify(cached), { mode: 0o600 });
    await Deno.rename(temporary, path);
    return true;
  } catch {
    await Deno.remove(temporary).catch(() => {});
    return false;
  }
}
