/**
 * Changes to servers_config.json (and the .env beside it) made by `patchbay mcp`: which
 * file a scope means, the edit validated as `config check` validates the file before
 * anything is written, then written atomically with the file's mode kept. Secrets go to
 * the .env file, which is only ever written readable by its owner alone.
 *
 * The guide is docs/managing-servers.md.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import {
  MAX_CONFIG_BYTES,
  MAX_ENV_FILE_BYTES,
  type ReadBound,
  readBoundedText,
} from "../files/bounded_read.ts";
import { DEFAULTS } from "../defaults.ts";
import { chooseEnvFile, type Environment, loadEnvironment } from "../env.ts";
import { ConfigSyntaxError, ConfigValidationError, PatchbayError, UsageError } from "../errors.ts";
import { CONFIG_EDIT_STEPS } from "../errors/config_edit_steps.ts";
import { withFileLock } from "../files/file_lock.ts";
import { configDir, stateDir } from "../paths.ts";
import { EDIT_SUFFIX } from "./edit_suffix.ts";
import { chmodOwnerOnly } from "../files/private_file.ts";
import { Redactor } from "../redact/redact.ts";
import { refuseSharedDestination } from "../files/shared_writable.ts";
import type { ScopeFile } from "./locate.ts";
import { loadScopedConfig } from "./scoped.ts";
import type { Config } from "./types.ts";

/** Where an edit goes: the working folder's file, or the user's own one. */
export type EditScope = "project" | "user";

/** The files one edit may write. */
export interface EditTarget {
  file: string;
  envFile: string;
  scope: EditScope;
  /** The file is the one `--config` names: read alone, not with the user's. */
  explicit?: boolean;
}

/** The user-scope configuration: patchbay's config folder (`~/.config/patchbay`). */
export function userConfigFile(): string {
  return join(configDir(), DEFAULTS.configFile);
}

/** The files `scope` (with `--config` and `--env-file`) names. */
export function editTarget(
  options: { config?: string; envFile?: string; scope?: string },
): EditTarget {
  const scope = options.scope ?? "project";
  if (scope !== "project" && scope !== "user") {
    throw new UsageError(
      `unknown scope '${scope}'`,
      CONFIG_EDIT_STEPS.scope(userConfigFile()),
    );
  }
  if (scope === "user") {
    if (options.config !== undefined) {
      throw new UsageError(
        "--scope user and --config name two different files",
        CONFIG_EDIT_STEPS.scopeOrConfig(userConfigFile()),
      );
    }
    return { file: userConfigFile(), envFile: join(configDir(), DEFAULTS.envFile), scope };
  }
  const file = options.config ?? DEFAULTS.configFile;
  return {
    file,
    envFile: chooseEnvFile(options.envFile, options.config, DEFAULTS.envFile).path,
    scope,
    ...(options.config !== undefined ? { explicit: true } : {}),
  };
}

/** How the configuration an edit changes is read. */
const CONFIG_BOUND: ReadBound = {
  what: "the configuration file",
  maxBytes: MAX_CONFIG_BYTES,
  remedy: CONFIG_EDIT_STEPS.otherConfig,
};

/** How the .env an edit adds to is read. */
const ENV_BOUND: ReadBound = {
  what: "the environment file",
  maxBytes: MAX_ENV_FILE_BYTES,
  remedy: CONFIG_EDIT_STEPS.otherEnvFile,
};

/** The file's text and mode; `undefined` text when it does not exist yet. */
export async function readTarget(
  file: string,
  bound: ReadBound = CONFIG_BOUND,
): Promise<{ text?: string; mode?: number }> {
  try {
    const text = await readBoundedText(file, bound);
    const info = await Deno.stat(file);
    return { text, mode: info.mode === null ? undefined : info.mode & 0o777 };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return {};
    if (error instanceof PatchbayError) throw error;
    throw new PatchbayError("config_not_found", `Could not read ${file}`, {
      reason: (error as Error).message,
      remedy: CONFIG_EDIT_STEPS.unreadable,
      cause: error,
    });
  }
}

/**
 * Runs `work` (a read, change and write of the target's files) holding the locks of its
 * configuration and .env, in that order (every edit takes them in the same order, so two
 * edits never wait on each other): two `patchbay mcp add` at once both land, one after
 * the other, and a command that cannot take them within the bounded wait changes nothing.
 */
export function withEditLock<T>(
  target: EditTarget,
  doing: string,
  work: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  return withFileLock(
    lockFileFor(target.file),
    { what: `the configuration ${target.file}`, doing, signal },
    () =>
      withFileLock(
        lockFileFor(target.envFile),
        { what: `the environment file ${target.envFile}`, doing, signal },
        work,
      ),
  );
}

/**
 * The lock file of `file`, in patchbay's state folder (a project folder gets no litter),
 * named by where the file really is, so two names of one file share one lock.
 *
 * @param stateFolder @default stateDir()
 */
export function lockFileFor(file: string, stateFolder: string = stateDir()): string {
  let real: string;
  try {
    real = Deno.realPathSync(file);
  } catch {
    // Not there yet: the folder it will be created in names it.
    try {
      real = join(Deno.realPathSync(dirname(resolve(file))), basename(file));
    } catch {
      real = resolve(file);
    }
  }
  const digest = createHash("sha256").update(real).digest("hex").slice(0, 24);
  return join(stateFolder, EDIT_LOCKS_FOLDER, `${basename(real).slice(0, 40)}-${digest}.lock`);
}

/** The folder of the editing commands' lock files, in the state folder. */
const EDIT_LOCKS_FOLDER = "locks";

/**
 * The environment an edited file is validated against: process over .env over additions
 * (over the user's .env, `under`, as a start reads it without `--config`).
 */
export async function editEnvironment(
  envFile: string,
  additions: ReadonlyMap<string, string> = new Map(),
  under: readonly string[] = [],
): Promise<Environment> {
  const env = await loadEnvironment({ path: envFile, under });
  if (additions.size === 0) return env;
  return {
    ...env,
    get: (name) => env.get(name) ?? additions.get(name),
    fileValue: (name) => env.fileValue(name) ?? additions.get(name),
    names: () => [...new Set([...env.names(), ...additions.keys()])],
  };
}

/** What {@linkcode commitEdit} writes. */
export interface Edit {
  target: EditTarget;
  /** The new text of the configuration file. */
  text: string;
  /** The mode of the file before the edit; a new file gets `newMode`. */
  mode?: number;
  /** @default 0o644, or 0o600 when the file holds secrets inline */
  newMode?: number;
  /** Variables to add to the .env file (secrets moved out of the configuration). */
  envAdditions?: ReadonlyMap<string, string>;
  /** Values the new text holds that a refusal must not print (secrets kept inline). */
  secrets?: readonly string[];
  /**
   * Called once the edit is validated, before anything is written, with the configuration
   * as the next start in this folder will read it (what the administrator's policy
   * refuses of it included): what to warn about is said first.
   */
  beforeWrite?: (config: Config) => void;
}

/**
 * `config check`'s located error for the text an edit would have written, said to be
 * that (the lines shown are not on disk) with the edit's secrets masked in it.
 */
function refusedEdit(error: unknown, secrets: readonly string[], target: EditTarget): unknown {
  if (!(error instanceof ConfigValidationError || error instanceof ConfigSyntaxError)) {
    return error;
  }
  const redactor = new Redactor();
  for (const secret of secrets) redactor.addSecret(secret);
  const mask = (text: string) => redactor.redact(text);
  // Problems only in the other file read with this one (the user's, the project's).
  const files = error.problems.map((p) => resolve(p.file ?? error.file));
  const elsewhere = files.length > 0 && files.every((file) => file !== resolve(target.file));
  return new PatchbayError(error.code, mask(error.message), {
    reason: mask(error.reason),
    remedy: elsewhere
      ? `nothing was written: ${error.file} is read together with ${target.file} and must ` +
        "be corrected first (`patchbay config check` lists its problems)"
      : "nothing was written: the lines shown are the file as the edit would leave it; " +
        "correct the entry (or the file) and run the command again",
    details: error.details.map(mask),
    exitCode: error.exitCode,
    cause: error,
  });
}

/**
 * Validates the new text (every problem, located, as `config check` reports them: nothing
 * is written when there is one), then writes the .env additions and the file.
 */
export async function commitEdit(edit: Edit): Promise<Config> {
  const { target } = edit;
  const additions = edit.envAdditions ?? new Map();
  let config: Config;
  try {
    config = await validateEdit(edit, additions);
  } catch (error) {
    throw refusedEdit(error, edit.secrets ?? [], target);
  }
  edit.beforeWrite?.(config);
  // Both files are checked before either is written: no .env change for a refused edit.
  const written = additions.size > 0 ? [target.file, target.envFile] : [target.file];
  for (const file of written) await refuseReadOnly(file, await existingRealPath(file));
  // Nor a file the next start would refuse to read (others may write it or its folder).
  refuseSharedDestination(target.file, "the configuration file");
  if (additions.size > 0) refuseSharedDestination(target.envFile, "the environment file");
  if (additions.size > 0) await appendPrivateEnv(target.envFile, additions);
  await ensureFolder(target.file);
  await replaceAtomically(target.file, edit.text, edit.mode ?? edit.newMode ?? 0o644);
  return config;
}

/**
 * The configuration the next start would read with the edit made: the edited file with
 * the other scope's (the user's with the project's; `--config`'s alone) and the
 * administrator's policy, each `${VAR}` from the .env files a start reads.
 */
async function validateEdit(edit: Edit, additions: ReadonlyMap<string, string>): Promise<Config> {
  const { target } = edit;
  const edited = { scope: target.scope, path: target.file };
  const user = { scope: "user" as const, path: userConfigFile() };
  const project = { scope: "project" as const, path: DEFAULTS.configFile };
  const files: ScopeFile[] = target.explicit
    ? [{ scope: "explicit", path: target.file }]
    : target.scope === "project"
    ? [...(exists(user.path) ? [user] : []), edited]
    : [edited, ...(exists(project.path) ? [project] : [])];
  // As a start here reads them: ./.env over the user's (additions over both), or with
  // --config, its own.
  const userEnv = join(configDir(), DEFAULTS.envFile);
  const env = target.explicit
    ? await editEnvironment(target.envFile, additions)
    : target.scope === "user"
    ? await editEnvironment(DEFAULTS.envFile, additions, [target.envFile])
    : await editEnvironment(target.envFile, additions, [userEnv]);
  return await loadScopedConfig(
    { files, usedExample: false, primary: target.file },
    env,
    { texts: new Map([[target.file, edit.text]]) },
  );
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Adds `values` to the .env file at `path`, which ends readable by its owner only (a
 * wider file is narrowed: it is about to hold secrets).
 */
export async function appendPrivateEnv(
  path: string,
  values: ReadonlyMap<string, string>,
): Promise<void> {
  const { text = "" } = await readTarget(path, ENV_BOUND);
  const lines = [...values].map(([name, value]) => `${name}=${quoteDotenv(value)}`);
  const joined = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  await ensureFolder(path);
  await replaceAtomically(path, `${joined}${lines.join("\n")}\n`, 0o600);
}

/**
 * Creates the folder of `file` when it is missing (the user scope's, at its first edit).
 * Only then: Deno asks for write permission on a folder even to find it exists already.
 */
async function ensureFolder(file: string): Promise<void> {
  const folder = dirname(resolve(file));
  try {
    await Deno.stat(folder);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(folder, { recursive: true });
  }
}

/** A value as .env writes it: single-quoted (literal) when it can be, else escaped. */
export function quoteDotenv(value: string): string {
  if (!/['\n\r]/.test(value)) return `'${value}'`;
  return `"${
    value.replace(/[\\"$]/g, (c) => `\\${c}`).replace(/\n/g, "\\n").replace(/\r/g, "\\r")
  }"`;
}

/**
 * Replaces `path` with `text` through a file beside it (a reader never sees half a file,
 * and the text is on disk before the rename, so a crash leaves the old file or the new
 * one), then gives it `mode`. A symbolic link (a dotfiles repository's) is followed: the
 * file it points to is replaced and the link kept. A file its owner made read-only is
 * refused rather than replaced (renaming over it would succeed). The temporary name is
 * fixed, so two edits at once cannot both proceed: the second finds it and stops.
 */
async function replaceAtomically(path: string, text: string, mode: number): Promise<void> {
  const real = await existingRealPath(path);
  await refuseReadOnly(path, real);
  const temporary = `${real ?? path}${EDIT_SUFFIX}`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(temporary, { write: true, createNew: true, mode });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) {
      throw new PatchbayError("config_invalid", `Could not write ${path}`, {
        reason: `${temporary} exists: another edit is under way, or one was interrupted`,
        remedy: CONFIG_EDIT_STEPS.editUnderWay(temporary),
      });
    }
    throw writeError(path, error);
  }
  try {
    try {
      await writeAll(file, new TextEncoder().encode(text));
      await file.syncData();
    } finally {
      file.close();
    }
    await chmodOwnerOnly(temporary, mode);
    await Deno.rename(temporary, real ?? path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw writeError(path, error);
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/** The file `path` names, links followed; `undefined` when there is none yet. */
async function existingRealPath(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw writeError(path, error);
  }
}

async function refuseReadOnly(path: string, real: string | undefined): Promise<void> {
  if (real === undefined || Deno.build.os === "windows") return;
  const { mode } = await Deno.stat(real);
  if (mode === null || (mode & 0o200) !== 0) return;
  throw new PatchbayError("config_invalid", `Could not write ${path}`, {
    reason: `the file is read-only (mode ${(mode & 0o777).toString(8)}); patchbay does not ` +
      "replace a file its owner protected",
    remedy: CONFIG_EDIT_STEPS.readOnly(path),
  });
}

function writeError(path: string, error: unknown): PatchbayError {
  return new PatchbayError("config_invalid", `Could not write ${path}`, {
    reason: (error as Error).message,
    remedy: CONFIG_EDIT_STEPS.unwritable,
    cause: error,
  });
}
