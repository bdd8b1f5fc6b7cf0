/**
 * The client's modules, fetched before anything is drawn. Deno fetches npm packages when a
 * module first needs them, and the interactive client loads most of its modules after its
 * banner: on an empty Deno cache, Deno's download bar was drawn over the banner and the
 * prompt and stayed there. So when a package of the lock file is missing from Deno's cache,
 * the launcher has `deno cache` fetch the client's whole module graph (dynamic imports
 * included) before the plan and the client run, and the client starts on a clean screen.
 *
 * Checking costs a read of deno.lock and a `stat` per package (about 20), not a Deno start.
 *
 * @module
 */

import { join } from "node:path";
import { MAX_MANIFEST_BYTES, readBoundedText } from "../files/bounded_read.ts";
import { canRedraw } from "../terminal/terminal.ts";

/** Deno's cache folder, as Deno picks it: DENO_DIR, else the platform's cache folder. */
export function denoDir(
  get: (name: string) => string | undefined = safeEnv,
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  const explicit = get("DENO_DIR");
  if (explicit) return explicit;
  const home = get("HOME");
  if (os === "darwin") return home ? join(home, "Library", "Caches", "deno") : undefined;
  if (os === "windows") {
    const local = get("LOCALAPPDATA");
    return local ? join(local, "deno") : undefined;
  }
  const cache = get("XDG_CACHE_HOME") || (home ? join(home, ".cache") : undefined);
  return cache ? join(cache, "deno") : undefined;
}

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The npm packages of `lockText` (deno.lock, format 5) missing from the cache folder
 * `cache` (`<cache>/npm/registry.npmjs.org/<name>/<version>`, and the name's
 * `registry.json` for the `direct` ones, those deno.json's imports name), as `name@version`.
 */
export function missingPackages(
  lockText: string,
  cache: string,
  direct: ReadonlySet<string> = new Set(),
): string[] {
  let npm: Record<string, unknown>;
  try {
    npm = (JSON.parse(lockText) as { npm?: Record<string, unknown> }).npm ?? {};
  } catch {
    return []; // Unreadable: Deno itself says what is wrong with it.
  }
  const registry = join(cache, "npm", "registry.npmjs.org");
  return Object.keys(npm).filter((key) => {
    // `name@version`, or `name@version_peer@version` when peers decide the copy.
    const match = /^(@?[^@]+)@([^_]+)/.exec(key);
    if (!match) return false;
    // For the packages deno.json names, Deno needs their metadata (registry.json) too:
    // `deno task` installs files from the lock file alone, and the client then fetched it.
    try {
      return !Deno.statSync(join(registry, match[1], match[2])).isDirectory ||
        (direct.has(match[1]) &&
          !Deno.statSync(join(registry, match[1], "registry.json")).isFile);
    } catch {
      return true;
    }
  });
}

/** The npm package names deno.json's import map names (`npm:name@version`). */
export function directPackages(manifestText: string): Set<string> {
  const imports = (JSON.parse(manifestText) as { imports?: Record<string, string> }).imports;
  const names = Object.values(imports ?? {}).flatMap((target) => {
    const match = /^npm:\/?(@?[^@]+)@/.exec(target);
    return match ? [match[1]] : [];
  });
  return new Set(names);
}

/** Options of {@linkcode ensureModules}. */
export interface EnsureModulesOptions {
  /** The Deno that runs the client. */
  deno: string;
  /** deno.json of the project (deno.lock beside it). */
  manifest: string;
  /** The client's entry point. */
  main: string;
}

/**
 * Fetches the client's module graph when a package of deno.lock is not in Deno's cache,
 * saying so on one line of a terminal that is erased when done. Returns whether it
 * fetched.
 */
export async function ensureModules(options: EnsureModulesOptions): Promise<boolean> {
  const cache = denoDir();
  if (!cache) return false;
  let lockText: string;
  let direct: Set<string>;
  try {
    const bound = { what: "patchbay's own manifest", maxBytes: MAX_MANIFEST_BYTES };
    lockText = await readBoundedText(join(options.manifest, "..", "deno.lock"), bound);
    direct = directPackages(await readBoundedText(options.manifest, bound));
  } catch {
    return false;
  }
  const missing = missingPackages(lockText, cache, direct);
  if (missing.length === 0) return false;
  // A package whose files `deno task` installed from the lock file is not fetched again by
  // `deno cache`, nor its metadata saved, and every start of the client then fetched the
  // metadata anew; `--reload` of those packages saves it.
  const reload = missing.map((key) => /^(@?[^@]+)@/.exec(key)![1])
    .filter((name) => direct.has(name)).map((name) => `npm:${name}`);
  // Deno's own bar was seen to leave its last frames on the screen: one line of ours,
  // erased when done, says what the wait is for.
  const terminal = Deno.stderr.isTerminal();
  // A terminal that cannot erase (TERM=dumb) keeps the line, ended.
  const erase = canRedraw(Deno.stderr);
  const encoder = new TextEncoder();
  if (terminal) {
    Deno.stderr.writeSync(
      encoder.encode(`patchbay: fetching its modules (first run)…${erase ? "" : "\n"}`),
    );
  }
  const output = await new Deno.Command(options.deno, {
    args: [
      "cache",
      "--quiet",
      ...(reload.length > 0 ? [`--reload=${reload.join(",")}`] : []),
      "--config",
      options.manifest,
      options.main,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output().catch(() => undefined);
  if (erase) Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
  // A failure is the client's to report, in its words; Deno's own is kept for the person.
  if (output && !output.success) await Deno.stderr.write(output.stderr);
  return true;
}
