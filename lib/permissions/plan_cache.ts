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

/** The plan as `patchbay permissions --json` prints it (the parts the launcher uses). */
export interface PrintedPlan {
  flags: string[];
  grants: { kind: string; value: string; why: string }[];
  all_env: string | null;
  notes: string[];
}

/** What a plan was computed from; each value as it was then (`null`: absent). */
export interface PlanInputs {
  /** SHA-256 of each file's content. */
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
export const CACHE_FORMAT = 1;

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

/** SHA-256 of `data`, hex. */
export async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function fileHash(path: string): Promise<string | null> {
  try {
    return await sha256(await Deno.readFile(path));
  } catch {
    return null;
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
export async function currentInputs(names: InputNames): Promise<PlanInputs> {
  const files: PlanInputs["files"] = {};
  for (const path of names.files) files[path] = await fileHash(path);
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
export async function stillValid(cached: CachedPlan): Promise<boolean> {
  if (cached.format !== CACHE_FORMAT) return false;
  const names = {
    files: Object.keys(cached.inputs.files),
    stats: Object.keys(cached.inputs.stats),
    env: Object.keys(cached.inputs.env),
  };
  const now = await currentInputs(names);
  return equalRecords(now.files, cached.inputs.files) &&
    equalRecords(now.stats, cached.inputs.stats) && equalRecords(now.env, cached.inputs.env);
}

function equalRecords<T>(a: Record<string, T>, b: Record<string, T>): boolean {
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

/** The file remembering the plan for `key` (the command line and folder) in `dir`. */
export async function cacheFile(dir: string, key: string): Promise<string> {
  return join(dir, `${(await sha256(key)).slice(0, 32)}.json`);
}

/** The remembered plan in `path`, if it is there and readable. */
export async function readCachedPlan(path: string): Promise<CachedPlan | undefined> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(path));
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
