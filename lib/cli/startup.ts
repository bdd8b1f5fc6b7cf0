/**
 * What every command that talks to servers needs first: the environment (.env), the
 * log, and the validated configuration, with every secret registered for redaction
 * before anything is logged.
 *
 * @module
 */

import { join } from "node:path";
import { argSecrets } from "../config/arg_secrets.ts";
import { describeWarning, locateSources } from "../config/load.ts";
import type { ConfigSources } from "../config/locate.ts";
import { loadScopedConfig } from "../config/scoped.ts";
import type { Config } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { chooseEnvFile, type Environment, isSecretName, loadEnvironment } from "../env.ts";
import { PolicyRefusedError } from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { compiledBinary } from "../deno_permission/launched.ts";
import { binaryRemedy } from "../deno_permission/remedy.ts";
import { Logger } from "../log/log.ts";
import { privateKeySecrets } from "../oauth/private_key.ts";
import { PROJECT_DIR } from "../project_dir.ts";
import { configDir, dataDir, defaultLogFile, stateDir } from "../paths.ts";
import { refuseSharedWritable } from "../files/shared_writable.ts";
import { type Redactor, sessionRedactor } from "../redact/redact.ts";
import { replaceSessionLogger } from "../log/session_log.ts";
import { keychainReader } from "../secrets/keychain.ts";
import { startTelemetry } from "../telemetry/start.ts";
import { VERSION } from "../version.ts";

/** Options every command accepts (the root command's flags). */
export interface GlobalOptions {
  /** Path of servers_config.json. */
  config?: string;
  /** Path of the .env file. @default "./.env" */
  envFile?: string;
  /** Path of the log file. @default "~/.local/state/patchbay/patchbay.log" */
  logFile?: string;
  /** Verbose logging mirrored to stderr. @default false */
  debug?: boolean;
  /** Record the wire trace in this file (docs/trace.md). */
  trace?: string;
  /** Include model requests in the wire trace. @default false */
  traceModel?: boolean;
  /** Run tool calls and sampling requests without asking. @default false */
  yes?: boolean;
}

/** What {@linkcode startUp} reads beyond the files. */
export interface StartUpReading {
  /**
   * Read the `${keychain:NAME}` entries the configuration uses. A command that uses none
   * of its values (`permissions`, `sessions`, `mcp list`) passes false, and never asks
   * the keychain (nor makes it ask to be unlocked). @default true
   */
  keychain?: boolean;
}

/** The loaded pieces a command works with. */
export interface Runtime {
  env: Environment;
  logger: Logger;
  config: Config;
  /** The configuration file messages name: the project's, else the only one read. */
  configPath: string;
  /** Every configuration file read (the user's and the project's, or `--config`'s). */
  sources: ConfigSources;
  /** The session's log file (--log-file, else the default), whether it could be opened or not. */
  logFile: string;
  /** Things to tell the user once at start (fallbacks taken, files skipped). */
  notices: string[];
  /**
   * The notice among `notices` that the example configuration stands in for a missing one:
   * a command that uses no server nor model (`sessions`) leaves it out.
   */
  exampleNotice?: string;
}

/** The folder holding patchbay's own files (main.ts, the example configuration). */
export { PROJECT_DIR } from "../project_dir.ts";

/** Opens the log `options` ask for (default file, level, mirror), hiding `redactor`'s secrets. */
export function openLog(
  options: Pick<GlobalOptions, "logFile" | "debug">,
  redactor: Redactor,
): { logger: Logger; logFile: string } {
  const logFile = options.logFile ?? defaultLogFile();
  const logger = new Logger({
    file: logFile,
    level: options.debug ? "debug" : "info",
    mirror: options.debug ?? false,
    redactor,
  });
  return { logger, logFile };
}

const OWN_FOLDERS = [
  [stateDir, "the state folder"],
  [dataDir, "the conversation folder"],
  [configDir, "the settings folder"],
] as const;

/** The log opened by the last {@linkcode startUp}: the command boundary logs errors to it. */
export { sessionLogger } from "../log/session_log.ts";

/**
 * Loads the environment, then opens the log, then reads the configuration. The log stays
 * open until the process ends (`main.ts` closes it), so errors that end a command are
 * logged too.
 */
export async function startUp(
  options: GlobalOptions,
  reading: StartUpReading = {},
): Promise<Runtime> {
  const notices: string[] = [];
  const sources = locateSources(options.config, PROJECT_DIR);
  const envChoice = chooseEnvFile(options.envFile, options.config, DEFAULTS.envFile, userEnvFile());
  const env = await loadEnvironment({
    path: envChoice.path,
    required: envChoice.required,
    under: envChoice.under,
  });
  // What patchbay's own folders hold is trusted (history, conversations, tokens).
  for (const [folder, what] of OWN_FOLDERS) {
    refuseSharedWritable(folder(), what, { ownFolder: true });
  }
  // The session's one redactor: the log, the connections and any other layer mask alike.
  const redactor = sessionRedactor;
  registerEnvironmentSecrets(env, redactor);
  const { logger, logFile } = openLog(options, redactor);
  replaceSessionLogger(logger);
  if (logger.openError) notices.push(logFileNotice(logFile, logger.openError));
  else if (options.debug) notices.push(`Debug logging on; log file ${logFile}`);
  const log = logger.child("startup");
  log.info(`patchbay ${VERSION} starting`, { deno: Deno.version.deno });
  for (const file of env.files) {
    if (file.loaded) log.info(`read ${file.count} variables from ${file.path}`);
    else log.info(`no environment file at ${file.path}`);
  }
  if (envChoice.besideConfig && env.file.loaded) {
    notices.push(
      `No ${DEFAULTS.envFile} here; read the environment from ${env.file.path}, beside the ` +
        "configuration file (--env-file names another)",
    );
  }
  for (const file of env.files) {
    for (const problem of file.problems) {
      notices.push(`${file.path} line ${problem.line}: ${problem.message} (line ignored)`);
    }
  }

  const exampleNotice = sources.usedExample
    ? `No ${DEFAULTS.configFile} here; using the example configuration ${sources.primary}. ` +
      `Copy it to ./${DEFAULTS.configFile} to make it your own.`
    : undefined;
  if (exampleNotice) notices.push(exampleNotice);
  const config = await loadScopedConfig(sources, env, {
    keychain: reading.keychain === false ? undefined : keychainReader(env, redactor),
  });
  registerConfigSecrets(config, redactor);
  log.info(
    `configuration ${config.sources?.map((s) => `${s.path} (${s.scope})`).join(", ")}: ` +
      `${config.servers.length} servers`,
  );
  refuseUnapproved(options, config);
  notices.push(...config.notices ?? []);
  notices.push(...config.warnings.map(describeWarning));
  // Spans and metrics, when the launcher started this process with Deno's exporter on.
  await startTelemetry(config, redactor);
  return {
    env,
    logger,
    config,
    configPath: sources.primary,
    sources,
    logFile,
    notices,
    ...(exampleNotice ? { exampleNotice } : {}),
  };
}

/** The user scope's `.env`, beside its configuration (`~/.config/patchbay/.env`). */
export function userEnvFile(): string {
  return join(configDir(), DEFAULTS.envFile);
}

/** `--yes` under a policy that requires a person's answer to every tool call. */
function refuseUnapproved(options: GlobalOptions, config: Config): void {
  if (!options.yes || !config.policy?.requireApproval) return;
  throw new PolicyRefusedError(
    "--yes",
    config.policy.file,
    "its require_approval is true: every tool call and sampling request needs a person's " +
      "answer, so none may run without asking",
  );
}

function logFileNotice(path: string, error: Error): string {
  const flag = denoPermissionFlag(error);
  if (flag && compiledBinary()) {
    return `Cannot write the log file ${path}: patchbay runs without Deno write permission ` +
      `there; logging is off. To keep a log, ${binaryRemedy(flag)}.`;
  }
  if (flag) {
    return `Cannot write the log file ${path}: patchbay runs without Deno write permission ` +
      `there; logging is off. Add ${flag} to the deno command (\`patchbay permissions\` ` +
      "prints the flags for your configuration), or use a log file under " +
      "~/.local/state/patchbay.";
  }
  return `Cannot write the log file ${path} (${error.message}); logging is off. ` +
    "Pass --log-file with a writable path to keep a log.";
}

/** Values of secret-named variables (`*_KEY`, `*_TOKEN`, ...) are secrets. */
export function registerEnvironmentSecrets(env: Environment, redactor: Redactor): void {
  for (const name of env.names()) {
    if (isSecretName(name)) redactor.addSecret(env.get(name));
  }
  // Under a grant of named variables, names() holds only those read so far.
  redactor.addSecret(env.get("LLM_API_KEY"));
}

/**
 * Values variables put into headers, environments, arguments and URLs, header values,
 * OAuth client secrets and private keys, secret-named server variables, the values of
 * secret-bearing command arguments (`--api-key VALUE`) and
 * the credentials in configured URLs (`LLM.base_url`, `LLM.endpoint`, server `url`s) are
 * secrets.
 */
export function registerConfigSecrets(config: Config, redactor: Redactor): void {
  for (const value of config.secretValues ?? []) redactor.addSecret(value);
  redactor.addUrlSecrets(config.llm.baseUrl);
  redactor.addUrlSecrets(config.llm.endpoint);
  for (const server of config.servers) {
    if (server.transport !== "stdio") redactor.addUrlSecrets(server.url);
    if (server.transport === "stdio") {
      for (const [name, value] of Object.entries(server.env)) {
        if (isSecretName(name)) redactor.addSecret(value);
      }
      for (const secret of argSecrets(server.args)) redactor.addSecret(secret.value);
    } else {
      for (const value of Object.values(server.headers)) {
        redactor.addSecret(value.replace(/^(Bearer|Basic|Token)\s+/i, ""));
      }
      redactor.addSecret(server.auth?.clientSecret);
      redactor.addSecret(server.auth?.idp?.clientSecret);
      for (const secret of privateKeySecrets(server.auth?.privateKey)) redactor.addSecret(secret);
    }
  }
}
