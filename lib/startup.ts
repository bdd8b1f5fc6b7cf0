/**
 * What every command that talks to servers needs first: the environment (.env), the
 * log, and the validated configuration, with every secret registered for redaction
 * before anything is logged.
 *
 * @module
 */

import { argSecrets } from "./config/arg_secrets.ts";
import { describeWarning, loadConfig, locateConfig } from "./config/load.ts";
import type { Config } from "./config/types.ts";
import { DEFAULTS } from "./defaults.ts";
import { chooseEnvFile, type Environment, isSecretName, loadEnvironment } from "./env.ts";
import { denoPermissionFlag } from "./deno_permission/denial.ts";
import { compiledBinary } from "./deno_permission/launched.ts";
import { binaryRemedy } from "./deno_permission/remedy.ts";
import { Logger } from "./log.ts";
import { privateKeySecrets } from "./oauth/private_key.ts";
import { PROJECT_DIR } from "./project_dir.ts";
import { configDir, dataDir, defaultLogFile, stateDir } from "./paths.ts";
import { refuseSharedWritable } from "./shared_writable.ts";
import { type Redactor, sessionRedactor } from "./redact.ts";
import { replaceSessionLogger } from "./session_log.ts";
import { VERSION } from "./version.ts";

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
}

/** The loaded pieces a command works with. */
export interface Runtime {
  env: Environment;
  logger: Logger;
  config: Config;
  /** Path the configuration was read from. */
  configPath: string;
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
export { PROJECT_DIR } from "./project_dir.ts";

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
export { sessionLogger } from "./session_log.ts";

/**
 * Loads the environment, then opens the log, then reads the configuration. The log stays
 * open until the process ends (`main.ts` closes it), so errors that end a command are
 * logged too.
 */
export async function startUp(options: GlobalOptions): Promise<Runtime> {
  const notices: string[] = [];
  const location = locateConfig(options.config, PROJECT_DIR);
  // The user's own configuration keeps its .env beside it, as one named by --config does.
  const configFile = options.config ?? (location.userScope ? location.path : undefined);
  const envChoice = chooseEnvFile(options.envFile, configFile, DEFAULTS.envFile);
  const env = await loadEnvironment({ path: envChoice.path, required: envChoice.required });
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
  if (env.file.loaded) {
    log.info(`read ${env.file.count} variables from ${env.file.path}`);
  } else {
    log.info(`no environment file at ${env.file.path}`);
  }
  if (envChoice.besideConfig && env.file.loaded) {
    notices.push(
      `No ${DEFAULTS.envFile} here; read the environment from ${env.file.path}, beside the ` +
        "configuration file (--env-file names another)",
    );
  }
  for (const problem of env.file.problems) {
    notices.push(`${env.file.path} line ${problem.line}: ${problem.message} (line ignored)`);
  }

  const exampleNotice = location.usedExample
    ? `No ${DEFAULTS.configFile} here; using the example configuration ${location.path}. ` +
      `Copy it to ./${DEFAULTS.configFile} to make it your own.`
    : undefined;
  if (exampleNotice) notices.push(exampleNotice);
  const config = await loadConfig(location.path, env);
  registerConfigSecrets(config, redactor);
  log.info(`configuration ${location.path}: ${config.servers.length} servers`);
  notices.push(...config.warnings.map(describeWarning));
  return {
    env,
    logger,
    config,
    configPath: location.path,
    logFile,
    notices,
    ...(exampleNotice ? { exampleNotice } : {}),
  };
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
      for (const secret of privateKeySecrets(server.auth?.privateKey)) redactor.addSecret(secret);
    }
  }
}
