/**
 * `patchbay doctor`'s checks in order. The quick ones run first; the ones that wait on
 * the network (the provider, DNS, the servers, the callback port, the memory store) then
 * run at the same time, and results are handed out in a fixed order as soon as each one,
 * and every one before it, is known.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import type { Config } from "../config/types.ts";
import { chooseEnvFile, type Environment } from "../env.ts";
import type { Log } from "../log/log.ts";
import { type TokenStore, tokenStoreFor } from "../oauth/mod.ts";
import { gatherInputs } from "../permissions/inputs.ts";
import { planPermissions } from "../permissions/plan.ts";
import { Redactor } from "../redact/redact.ts";
import {
  type GlobalOptions,
  openLog,
  PROJECT_DIR,
  registerConfigSecrets,
  registerEnvironmentSecrets,
  userEnvFile,
} from "../cli/startup.ts";
import { VERSION } from "../version.ts";
import { type CheckResult, failure, skip } from "./check.ts";
import { checkMemory } from "./memory_check.ts";
import { checkApiKeyPresent, checkProvider } from "./model_checks.ts";
import { checkDns, checkProxy } from "./network_checks.ts";
import { checkBrowser, checkCallbackPort } from "./oauth_checks.ts";
import { checkPermissions } from "./permission_check.ts";
import { checkServers, serverCheckName } from "./server_checks.ts";
import { checkConfig, checkEnvFile, checkLogFile } from "./setup_checks.ts";

/** Options of {@linkcode runDoctor}. */
export interface DoctorOptions extends GlobalOptions {
  /** Skip the checks that need the internet: the provider request and DNS. @default false */
  offline?: boolean;
  /** Aborting stops the checks and closes what they opened. */
  signal?: AbortSignal;
  /** Tests only: the contract fixes the OAuth callback port at 3000. */
  callbackPort?: number;
  /** Stored OAuth logins. @default files, or Redis for `Memory.backend: redis` (`tokenStoreFor`) */
  tokenStore?: TokenStore;
}

/** Checks that need a valid configuration, skipped without one. */
const NEEDS_CONFIG = [
  "permissions",
  "api_key",
  "provider",
  "proxy",
  "dns",
  "oauth_port",
  "browser",
  "memory",
] as const;

/** What {@linkcode runDoctor} tells its caller before the first result. */
export interface DoctorStart {
  /** The configuration file checked (as found). */
  configPath: string;
  /** Names of the checks to come (for aligning columns). */
  checks: string[];
  logFile: string;
  version: string;
}

/**
 * Runs every check; `onStart` hears where the configuration is before any result. Every
 * result comes out redacted (API keys, `LLM.base_url` credentials, header values …), as
 * everything else patchbay prints does: the doctor is run to be pasted into bug reports.
 */
export async function* runDoctor(
  options: DoctorOptions,
  onStart?: (start: DoctorStart) => void,
): AsyncGenerator<CheckResult> {
  const redactor = new Redactor();
  for await (const result of checks(options, redactor, onStart)) {
    yield redactor.redactValue(result);
  }
}

async function* checks(
  options: DoctorOptions,
  redactor: Redactor,
  onStart?: (start: DoctorStart) => void,
): AsyncGenerator<CheckResult> {
  const envChoice = chooseEnvFile(
    options.envFile,
    options.config,
    DEFAULTS.envFile,
    userEnvFile(),
  );
  const envFile = envChoice.path;
  const { env, result: envResult } = await checkEnvFile(
    envChoice.required || envChoice.besideConfig ? envChoice.path : undefined,
    undefined,
    envChoice.besideConfig,
    envChoice.under,
  );
  registerEnvironmentSecrets(env, redactor);
  const { logger, logFile } = openLog(options, redactor);
  const log = logger.child("doctor");
  let tokenStore: TokenStore | undefined;
  try {
    log.info(`patchbay ${VERSION} doctor`, { offline: options.offline ?? false });
    const configOutcome = await checkConfig(options.config, env, PROJECT_DIR, redactor);
    // Before any result is out: the configuration names secrets of its own.
    if (configOutcome.config) registerConfigSecrets(configOutcome.config, redactor);
    onStart?.({
      configPath: configOutcome.path,
      checks: [
        "config",
        "env_file",
        "log_file",
        ...NEEDS_CONFIG,
        ...(configOutcome.config?.servers ?? []).map((s) => serverCheckName(s.name)),
      ],
      logFile,
      version: VERSION,
    });
    yield configOutcome.result;
    yield envResult;
    yield checkLogFile(logger, logFile);
    const config = configOutcome.config;
    if (!config) {
      for (const name of NEEDS_CONFIG) {
        yield skip(name, "not checked: the configuration is not valid");
      }
      return;
    }
    // One store for the permission plan and the servers, closed when the checks end.
    const logins = options.tokenStore ??
      tokenStoreFor(config.memory, env, { log: log.child("oauth"), redactor });
    tokenStore = logins;
    yield await settle("permissions", async () => {
      const inputs = await gatherInputs({
        config,
        env,
        configPath: configOutcome.path,
        envFile,
        envFiles: env.files.map((file) => file.path),
        logFile,
        tokenStore: logins,
        signal: options.signal,
      });
      return checkPermissions(planPermissions(inputs));
    });
    const key = checkApiKeyPresent(config, env);
    yield key;
    yield* networkChecks(config, { ...options, tokenStore: logins }, {
      env,
      keyUsable: key.status !== "fail",
      log,
      redactor,
    });
  } finally {
    await tokenStore?.close();
    logger.close();
  }
}

/** The slow checks, started together, reported in order. */
async function* networkChecks(
  config: Config,
  options: DoctorOptions,
  context: { env: Environment; keyUsable: boolean; log: Log; redactor: Redactor },
): AsyncGenerator<CheckResult> {
  const { env, log, redactor } = context;
  const signal = options.signal;
  const provider = settle("provider", () =>
    checkProvider(config, env, {
      keyUsable: context.keyUsable,
      offline: options.offline,
      log: log.child("llm"),
      redactor,
      signal,
    }));
  const dns = settle("dns", () => checkDns(config, env, { offline: options.offline, signal }));
  const servers = settleAll("servers", () =>
    checkServers(config, {
      env,
      log: log.child("connections"),
      redactor,
      tokenStore: options.tokenStore,
      signal,
    }));
  const port = settle(
    "oauth_port",
    () => checkCallbackPort(config, { port: options.callbackPort, signal }),
  );
  const memory = settle(
    "memory",
    () => checkMemory(config, env, { log: log.child("memory"), redactor, signal }),
  );
  yield await provider;
  yield checkProxy(config, env);
  yield await dns;
  yield* await servers;
  yield await port;
  yield checkBrowser(config, env);
  yield await memory;
}

/** A check's result; a check that throws after all becomes a failed result. */
async function settle(name: string, run: () => Promise<CheckResult>): Promise<CheckResult> {
  try {
    return await run();
  } catch (error) {
    return failure(name, error);
  }
}

async function settleAll(
  name: string,
  run: () => Promise<CheckResult[]>,
): Promise<CheckResult[]> {
  try {
    return await run();
  } catch (error) {
    return [failure(name, error)];
  }
}
