/**
 * Servers started through a package runner (`npx`, `npm exec`, `uvx`, `uv tool run`,
 * `bunx`, `bun x`, `pnpm dlx`, `yarn dlx`): on the first start the runner downloads the
 * package before the server exists, which can take longer than the server's `timeout`
 * (five servers started cold through `npx` took 29.9 s against the 30 s default). A server
 * still installing is not a slow server: its first connect gets
 * {@linkcode FIRST_INSTALL_ALLOWANCE_SECONDS} more, and its status says it is installing.
 *
 * How it is told: the command is a package runner, and the package is not in the
 * runner's cache. npm's is read (`<npm cache>/_npx/<hash>/node_modules/<package>`, with
 * the version when the entry pins an exact one); the other runners' caches are not laid
 * out by package name, so for them it is unknown, and the status says the server may be
 * installing. Used by the launcher's permission plan too: no npm import here.
 *
 * @module
 */

import { basename, join } from "node:path";
import type { ServerConfig } from "../config/types.ts";
import type { InstallStatus } from "./types.ts";
import { childEnvironment } from "../transports/process.ts";

/**
 * Time a server's first connect gets beyond its `timeout` while its package runner may
 * be installing it: room for a package of tens of megabytes (with its dependencies) on an
 * ordinary connection, without making a server that never answers wait for minutes.
 */
export const FIRST_INSTALL_ALLOWANCE_SECONDS = 120;

/** A server started through a package runner. */
export interface PackageRun {
  /** As a person writes it: `npx`, `npm exec`, `uvx`, `pnpm dlx`, … */
  runner: string;
  /** The package's name: `@playwright/mcp`, `mcp-server-git`. */
  name: string;
  /** The version or range asked for, when the entry names one. */
  version?: string;
}

/** Whether the runner has the package: `unknown` when its cache cannot be read by name. */
export type CacheState = "installed" | "missing" | "unknown";

/** Options of each runner that take a value (the next word is not the package). */
const VALUE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  npm: ["-p", "--package", "-c", "--call", "--cache", "--registry", "-w", "--workspace"],
  uv: [
    "--from",
    "--with",
    "--with-editable",
    "--with-requirements",
    "-p",
    "--python",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--directory",
    "--project",
    "--config-file",
    "--cache-dir",
  ],
  bun: ["-p", "--package", "--cwd"],
  pnpm: ["--package", "-C", "--dir"],
  yarn: ["-p", "--package"],
};

/** Options that name the package the command comes from. */
const PACKAGE_OPTIONS = new Set(["-p", "--package", "--from"]);

/** The package runner and package of a stdio entry, or `undefined` for any other command. */
export function packageRunOf(command: string, args: readonly string[]): PackageRun | undefined {
  const program = basename(command).replace(/\.(cmd|exe|ps1)$/i, "").toLowerCase();
  const sub = args[0];
  if (program === "npx") return runOf("npx", "npm", args);
  if (program === "npm" && (sub === "exec" || sub === "x")) {
    return runOf(`npm ${sub}`, "npm", args.slice(1));
  }
  if (program === "uvx") return runOf("uvx", "uv", args);
  if (program === "uv" && sub === "tool" && args[1] === "run") {
    return runOf("uv tool run", "uv", args.slice(2));
  }
  if (program === "bunx") return runOf("bunx", "bun", args);
  if (program === "bun" && sub === "x") return runOf("bun x", "bun", args.slice(1));
  if (program === "pnpm" && sub === "dlx") return runOf("pnpm dlx", "pnpm", args.slice(1));
  if (program === "yarn" && sub === "dlx") return runOf("yarn dlx", "yarn", args.slice(1));
  return undefined;
}

function runOf(runner: string, family: string, args: readonly string[]): PackageRun | undefined {
  const takesValue = new Set(VALUE_OPTIONS[family] ?? []);
  let named: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      return specOf(runner, family, named ?? args[i + 1]);
    }
    if (arg.startsWith("-")) {
      const [flag, inline] = arg.split(/=(.*)/s, 2);
      const value = inline ?? (takesValue.has(flag) ? args[++i] : undefined);
      if (PACKAGE_OPTIONS.has(flag) && value !== undefined) named ??= value;
      continue;
    }
    return specOf(runner, family, named ?? arg);
  }
  return named === undefined ? undefined : specOf(runner, family, named);
}

/** `@scope/name@1.2.3`, `name@^1`, `name==1.2` (Python), `name[extra]`: name and version. */
function specOf(runner: string, family: string, spec: string | undefined): PackageRun | undefined {
  if (!spec) return undefined;
  if (family === "uv") {
    const match = /^([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?(?:(?:==|@)(.+))?$/.exec(spec);
    return match ? { runner, name: match[1], ...(match[2] ? { version: match[2] } : {}) } : {
      runner,
      name: spec,
    };
  }
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  return at > 0
    ? { runner, name: spec.slice(0, at), version: spec.slice(at + 1) }
    : { runner, name: spec };
}

/**
 * Where npm keeps what `npx` installed: `<cache>/_npx`, the cache being `npm_config_cache`
 * in `env` (the server's environment), else npm's default for the platform.
 */
export function npxCacheDir(
  env: (name: string) => string | undefined,
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  const explicit = env("npm_config_cache") ?? env("NPM_CONFIG_CACHE");
  if (explicit) return join(explicit, "_npx");
  if (os === "windows") {
    const local = env("LOCALAPPDATA");
    return local ? join(local, "npm-cache", "_npx") : undefined;
  }
  const home = env("HOME");
  return home ? join(home, ".npm", "_npx") : undefined;
}

/** An exact version (`1.1.2`, `0.0.83`, `1.64.0-alpha-1`), not a range or a tag. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:[-+][\w.-]+)?$/;

/**
 * Whether the runner already has `run`'s package (the version too, when pinned exactly).
 * Reads a few small folders; anything unreadable makes it `unknown`.
 */
export function cacheState(
  run: PackageRun,
  env: (name: string) => string | undefined,
): CacheState {
  if (run.runner !== "npx" && !run.runner.startsWith("npm ")) return "unknown";
  const dir = npxCacheDir(env);
  if (!dir) return "unknown";
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isDirectory) continue;
      const manifest = join(dir, entry.name, "node_modules", run.name, "package.json");
      let version: unknown;
      try {
        version = JSON.parse(Deno.readTextFileSync(manifest)).version;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound || error instanceof SyntaxError) continue;
        throw error;
      }
      if (!run.version || !EXACT_VERSION.test(run.version) || version === run.version) {
        return "installed";
      }
    }
    return "missing";
  } catch (error) {
    // No `_npx` folder yet: npx has installed nothing. Anything else (a folder Deno may not
    // read) leaves it open.
    return error instanceof Deno.errors.NotFound ? "missing" : "unknown";
  }
}

/**
 * The install a connect of `config`'s server may wait for: its package runner, the package,
 * and the longer bound; `undefined` when it is no package runner's, or the package is there.
 * `parentEnv` is patchbay's environment: the server's own is computed from it, as when it
 * is started (the cache folder is the one the runner it starts will use).
 */
export function firstInstall(
  config: ServerConfig,
  parentEnv: (name: string) => string | undefined,
): InstallStatus | undefined {
  if (config.transport !== "stdio") return undefined;
  const run = packageRunOf(config.command, config.args);
  if (!run) return undefined;
  const env = childEnvironment(config.env, parentEnv);
  const cache = cacheState(run, (name) => env[name]);
  if (cache === "installed") return undefined;
  return {
    runner: run.runner,
    package: run.version ? `${run.name}@${run.version}` : run.name,
    cache,
    boundSeconds: config.timeoutSeconds + FIRST_INSTALL_ALLOWANCE_SECONDS,
  };
}
