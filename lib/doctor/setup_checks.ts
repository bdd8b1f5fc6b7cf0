/**
 * The doctor's first checks: the environment file, the configuration file and the log
 * file. Each loads its part with the same code the client uses, so a finding here is what
 * the client would meet.
 *
 * @module
 */

import { resolve } from "node:path";
import { describeWarning, locateSources } from "../config/load.ts";
import { loadScopedConfig } from "../config/scoped.ts";
import type { Config } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import {
  createEnvironment,
  type EnvFileStatus,
  type Environment,
  loadEnvironment,
  readProcessVariables,
} from "../env.ts";
import { DenoPermissionError } from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import type { Logger } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { keychainReader } from "../secrets/keychain.ts";
import { PROVIDERS } from "../providers.ts";
import { plural } from "../text/text.ts";
import { type CheckResult, failure, pass, warn } from "./check.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/** The environment, and how reading .env went. */
export interface EnvOutcome {
  env: Environment;
  result: CheckResult;
}

/**
 * Loads `.env` under the process environment. When the file cannot be read the process
 * environment alone is used, as far as the remaining checks are concerned.
 */
export async function checkEnvFile(
  path: string | undefined,
  processEnv = readProcessVariables(),
  besideConfig = false,
  under: readonly string[] = [],
): Promise<EnvOutcome> {
  const file = path ?? DEFAULTS.envFile;
  try {
    const env = await loadEnvironment({
      path: file,
      required: path !== undefined && !besideConfig,
      processEnv,
      under,
    });
    // The user's .env, read under the project's, is said when it holds anything.
    const result = envFileResult(env.file, besideConfig);
    const lower = env.files.slice(0, -1).filter((f) => f.loaded);
    return {
      env,
      result: {
        ...result,
        details: [
          ...lower.map((f) => `also ${resolve(f.path)}, under it: ${plural(f.count, "variable")}`),
          ...result.details,
        ],
      },
    };
  } catch (error) {
    const env = createEnvironment(processEnv, new Map(), {
      path: file,
      loaded: false,
      count: 0,
      problems: [],
    });
    return { env, result: failure("env_file", error) };
  }
}

function envFileResult(file: EnvFileStatus, besideConfig = false): CheckResult {
  const where = resolve(file.path) +
    (besideConfig ? ` (beside the configuration file; there is no ${DEFAULTS.envFile} here)` : "");
  if (!file.loaded) {
    return pass(
      "env_file",
      `no environment file at ${where}; variables come from the process environment only`,
    );
  }
  const loaded = `${where} loaded: ${plural(file.count, "variable")}`;
  if (file.problems.length === 0) return pass("env_file", loaded);
  return warn(
    "env_file",
    `${loaded}; ${plural(file.problems.length, "line")} could not be read and ` +
      `${file.problems.length === 1 ? "was" : "were"} ignored`,
    DOCTOR_STEPS.envLines,
    file.problems.map((p) => `line ${p.line}: ${p.message}`),
  );
}

/** The configuration, and how reading it went. */
export interface ConfigOutcome {
  config?: Config;
  /** Where it was read from (or looked for). */
  path: string;
  result: CheckResult;
}

/** Locates, parses and validates the configuration as the client does. */
export async function checkConfig(
  explicit: string | undefined,
  env: Environment,
  projectDir: string,
  redactor: Redactor,
): Promise<ConfigOutcome> {
  const sources = locateSources(explicit, projectDir);
  const location = { path: sources.primary, usedExample: sources.usedExample };
  let config: Config;
  try {
    config = await loadScopedConfig(sources, env, { keychain: keychainReader(env, redactor) });
  } catch (error) {
    return { path: location.path, result: failure("config", error) };
  }
  const enabled = config.servers.filter((s) => !s.disabled).length;
  const refused = config.servers.filter((s) => s.refused).length;
  const disabled = config.servers.length - enabled - refused;
  const files = sources.files.map((file) => resolve(file.path)).join(" and ");
  const summary = `${files} ${sources.files.length > 1 ? "are" : "is"} valid: ` +
    plural(enabled, "server") +
    (disabled > 0 ? ` (and ${disabled} disabled)` : "") +
    (refused > 0 ? ` (and ${refused} refused by the administrator's policy)` : "") +
    `, model ${config.llm.model} from ${PROVIDERS[config.llm.provider].label}` +
    keychainSummary(config);
  const warnings = config.warnings.map(describeWarning);
  // How the files were read together, and what the administrator's policy does.
  const said = [...(config.notices ?? []), ...policyLines(config)];
  if (location.usedExample) {
    return {
      config,
      path: location.path,
      result: warn(
        "config",
        `no ${DEFAULTS.configFile} in ${Deno.cwd()}; using the example configuration: ${summary}`,
        DOCTOR_STEPS.copyExample(location.path, DEFAULTS.configFile),
        [...warnings, ...said],
      ),
    };
  }
  if (warnings.length > 0) {
    return {
      config,
      path: location.path,
      result: warn(
        "config",
        `${summary}, with ${plural(warnings.length, "warning")}`,
        DOCTOR_STEPS.seeWarnings,
        [...warnings, ...said],
      ),
    };
  }
  return { config, path: location.path, result: pass("config", summary, said) };
}

/** What the administrator's policy does to `config`, a line each (none without a policy). */
function policyLines(config: Config): string[] {
  const policy = config.policy;
  if (!policy) return [];
  return [
    `the administrator's policy ${policy.file} applies` +
    (policy.requireApproval ? "; it requires approval of every tool call" : "") +
    (policy.forced.length > 0 ? `; it forces ${policy.forced.join(", ")}` : ""),
  ];
}

/** Whether the log file could be opened for appending (the logger tried at creation). */
export function checkLogFile(logger: Logger, path: string): CheckResult {
  const error = logger.openError;
  if (!error) return pass("log_file", `writing to ${resolve(path)}`);
  const flag = denoPermissionFlag(error);
  if (flag) {
    return failure(
      "log_file",
      new DenoPermissionError(flag, `writing the log file ${resolve(path)}`, error),
    );
  }
  return {
    name: "log_file",
    status: "fail",
    finding: `Cannot write the log file ${resolve(path)} — ${describeFileError(error)}`,
    remedy: DOCTOR_STEPS.logFile,
    details: [],
  };
}

function describeFileError(error: Error): string {
  if (error instanceof Deno.errors.PermissionDenied) {
    return "the operating system refused to open it for writing (permission denied)";
  }
  if (error instanceof Deno.errors.IsADirectory) return "the path is a folder, not a file";
  if (error instanceof Deno.errors.NotADirectory || /not a directory/i.test(error.message)) {
    return "a part of the path that should be a folder is a file";
  }
  if (error instanceof Deno.errors.AlreadyExists) {
    return "a part of the path that should be a folder is a file";
  }
  return error.message;
}

/** The keychain entries read for the configuration: that they exist, never their values. */
function keychainSummary(config: Config): string {
  const entries = config.keychainEntries ?? [];
  if (entries.length === 0) return "";
  return `; keychain ${entries.length === 1 ? "entry" : "entries"} ${entries.join(", ")} ` +
    "read (values not shown)";
}
