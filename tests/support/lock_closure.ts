/**
 * What a first `deno task start` fetches: `deno task` installs every package of deno.lock
 * before it runs the task, so deno.lock must hold the client's packages and as little else
 * as possible. This computes the client's share of it: the npm packages its own module
 * graph (main.ts, launch.ts, dynamic imports included) reaches, closed over their
 * dependencies as deno.lock resolved them.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

/** The parts of a lock file (format 5) this reads. */
export interface LockFile {
  version: string;
  specifiers: Record<string, string>;
  npm: Record<string, { dependencies?: string[]; optionalDependencies?: string[] }>;
  [key: string]: unknown;
}

/** The npm specifiers (`npm:name@version`) the client's module graph imports. */
export async function runtimeSpecifiers(): Promise<string[]> {
  const specifiers = new Set<string>();
  for (const entry of ["main.ts", "launch.ts"]) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "info",
        "--json",
        "--config",
        join(PROJECT, "deno.json"),
        "--lock=" + join(PROJECT, "deno.lock"),
        join(PROJECT, entry),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`deno info ${entry} failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    const info = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      modules: { kind?: string; specifier: string }[];
    };
    for (const module of info.modules) {
      if (module.kind !== "npm") continue;
      // A subpath (`…/client@2.4.0/ext/skills`) is of the package the lock names without it.
      const specifier = module.specifier.replace(/^npm:\/?/, "npm:");
      specifiers.add(packageOf(specifier));
    }
  }
  return [...specifiers].sort();
}

/** The package an npm specifier names, without a subpath: `npm:@scope/name@1.2.3`. */
export function packageOf(specifier: string): string {
  return specifier.replace(/^(npm:(?:@[^/]+\/)?[^@/]+@[^/]+)\/.*$/, "$1");
}

/** The package key a lock's dependency entry names (`name`, `name@version`, peers). */
function packageKey(lock: LockFile, entry: string): string {
  if (lock.npm[entry]) return entry;
  const keys = Object.keys(lock.npm).filter((key) => key.startsWith(`${entry}@`));
  if (keys.length === 1) return keys[0];
  const exact = keys.find((key) => key.split("_")[0] === entry);
  if (exact) return exact;
  throw new Error(`deno.lock: cannot tell which package '${entry}' is (${keys.join(", ")})`);
}

/** `full` cut down to the packages `roots` (npm specifiers) reach. */
export function pruneLock(full: LockFile, roots: readonly string[]): LockFile {
  const specifiers: Record<string, string> = {};
  const keep = new Set<string>();
  const queue: string[] = [];
  for (const root of roots) {
    const resolved = full.specifiers[root];
    if (resolved === undefined) throw new Error(`deno.lock has no entry for ${root}`);
    specifiers[root] = resolved;
    const name = root.slice("npm:".length).replace(/^(@?[^@]+)@.*$/, "$1");
    queue.push(packageKey(full, `${name}@${resolved}`));
  }
  while (queue.length > 0) {
    const key = queue.pop()!;
    if (keep.has(key)) continue;
    keep.add(key);
    const pkg = full.npm[key];
    if (!pkg) throw new Error(`deno.lock has no package ${key}`);
    for (const dep of [...(pkg.dependencies ?? []), ...(pkg.optionalDependencies ?? [])]) {
      queue.push(packageKey(full, dep));
    }
  }
  const npm = Object.fromEntries(
    Object.entries(full.npm).filter(([key]) => keep.has(key)),
  );
  return { ...full, specifiers, npm };
}

/** deno.lock as it is now. */
export async function projectLock(): Promise<LockFile> {
  return JSON.parse(await Deno.readTextFile(join(PROJECT, "deno.lock"))) as LockFile;
}
