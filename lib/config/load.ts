/**
 * Reads servers_config.json: strict JSON with positions, schema validation, rules per
 * transport, `${VAR}` expansion and defaults. Every problem in the file is collected
 * and reported in one error, each with its field path and line/column.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";
import {
  ConfigNotFoundError,
  type ConfigProblem,
  ConfigSyntaxError,
  ConfigValidationError,
  DenoPermissionError,
  PatchbayError,
  PermissionDeniedError,
} from "../errors.ts";
import { MAX_CONFIG_BYTES, readBoundedFile } from "../files/bounded_read.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { type JsonParseResult, parseJson } from "./json.ts";
import { renderProblems, sortProblems } from "./problems.ts";
import type { Config } from "./types.ts";
import { decodeUtf8 } from "./utf8.ts";
import { Validator } from "./validate.ts";

// Callers read the whole configuration story from here: where the file is and how its
// warnings read.
import { refuseSharedWritable } from "../files/shared_writable.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";
export { type ConfigLocation, type ConfigSources, locateConfig, locateSources } from "./locate.ts";
export { describeWarning } from "./problems.ts";

/** Options of {@linkcode loadConfig}. */
export interface LoadOptions {
  /**
   * Reads the values of the `${keychain:NAME}` entries the file uses (they are read only
   * once the file has no other problem). Without it, the references stay as written: a
   * command that uses no value (`permissions`, `mcp list`) never asks the keychain.
   */
  keychain?: (names: readonly string[]) => Promise<ReadonlyMap<string, string>>;
}

/** Reads and validates the configuration file. */
export async function loadConfig(
  path: string,
  env: Environment,
  options: LoadOptions = {},
): Promise<Config> {
  return await keychainPass(await readConfigText(path), path, env, options);
}

/**
 * `text` validated, its `${keychain:NAME}` values read through `options.keychain` once the
 * file has no other problem, then validated again with them.
 */
export async function keychainPass(
  text: string,
  file: string,
  env: Environment,
  options: LoadOptions,
  parse: (keychain?: (name: string) => string | undefined) => Config = (keychain) =>
    parseConfig(text, file, env, keychain),
): Promise<Config> {
  const config = parse();
  const entries = config.keychainEntries ?? [];
  if (!options.keychain || entries.length === 0) return config;
  const values = await options.keychain(entries);
  return parse((name) => values.get(name));
}

/**
 * The text of the configuration file at `path`: refused when others may write it, read
 * within its bound, UTF-8 (a fault is a located {@linkcode ConfigSyntaxError}).
 */
export async function readConfigText(path: string): Promise<string> {
  // A configuration others may write lets them choose the programs patchbay starts.
  refuseSharedWritable(path, "the configuration file");
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFile(path, {
      what: "the configuration file",
      maxBytes: MAX_CONFIG_BYTES,
      remedy: CONFIG_STEPS.otherConfig,
    });
  } catch (error) {
    throw readError(path, error);
  }
  const decoded = decodeUtf8(bytes);
  if ("fault" in decoded) {
    const { message, hint, position } = decoded.fault;
    const problems = [{ path: "", message, hint, position }];
    const shown = new TextDecoder().decode(bytes);
    throw new ConfigSyntaxError(path, problems, renderProblems(problems, shown));
  }
  return decoded.text;
}

export function readError(path: string, error: unknown): PatchbayError {
  // Not a regular file, or too large: said so by the bounded reader.
  if (error instanceof PatchbayError) return error;
  const flag = denoPermissionFlag(error);
  if (flag) return new DenoPermissionError(flag, `reading ${path}`, error);
  if (error instanceof Deno.errors.NotFound) {
    return new ConfigNotFoundError(
      path,
      `there is no file at ${resolve(path)}`,
      CONFIG_STEPS.createConfig(DEFAULTS.exampleConfigFile),
      error,
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new PermissionDeniedError(
      path,
      "the operating system refused to let patchbay read the configuration file",
      CONFIG_STEPS.readable(path),
    );
  }
  if (error instanceof Deno.errors.IsADirectory) {
    return new PatchbayError("config_not_found", `Invalid configuration: ${path} is a directory`, {
      reason: "--config must name a file",
      remedy: CONFIG_STEPS.fileInside(join(path, DEFAULTS.configFile)),
    });
  }
  return new PatchbayError("config_not_found", `Invalid configuration: could not read ${path}`, {
    reason: (error as Error).message,
    remedy: CONFIG_STEPS.unreadable,
    cause: error,
  });
}

/**
 * Validates configuration text. Pure apart from `env` (and `keychain`) lookups and a look
 * at each `roots` folder; throws on any problem.
 */
export function parseConfig(
  text: string,
  file: string,
  env: Environment,
  keychain?: (name: string) => string | undefined,
): Config {
  const parsed = parseStrict(text, file);
  const validator = new Validator(parsed, file, env, keychain);
  const config = validator.run(parsed.value!);
  if (validator.problems.length > 0) {
    const problems = sortProblems(validator.problems);
    throw new ConfigValidationError(file, problems, renderProblems(problems, text));
  }
  return config!;
}

/** `text` parsed as strict JSON; its faults are a located {@linkcode ConfigSyntaxError}. */
export function parseStrict(text: string, file: string): JsonParseResult {
  const parsed = parseJson(text);
  if (parsed.faults.length > 0) {
    const problems = parsed.faults.map((f): ConfigProblem => ({
      path: "",
      message: f.message,
      position: f.position,
      hint: f.hint,
    }));
    throw new ConfigSyntaxError(file, problems, renderProblems(problems, text));
  }
  return parsed;
}
