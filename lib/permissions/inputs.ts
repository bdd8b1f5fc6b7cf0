/**
 * Gathers what {@linkcode planPermissions} needs from the machine: absolute paths, the
 * variables the configuration file refers to, where commands are, and the authorization
 * servers of stored OAuth logins.
 *
 * @module
 */

import { resolve } from "node:path";
import { referencedVariables } from "../config/expand.ts";
import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
// The stores and the predicate from their own modules: oauth/mod.ts would load the SDK.
import { tokenStoreFor } from "../oauth/redis_token_store.ts";
import type { ServerCredentials, TokenStore } from "../oauth/token_store.ts";
import { usesOAuth } from "../oauth/uses_oauth.ts";
import { configDir, dataDir, stateDir } from "../paths.ts";
import { managedFile } from "../policy/place.ts";
import { resolveCommandPath } from "./command_path.ts";
import { hostPort, type PermissionInputs } from "./plan.ts";
import { MAX_CONFIG_BYTES, readBoundedText } from "../files/bounded_read.ts";

/** Options of {@linkcode gatherInputs}. */
export interface GatherOptions {
  config: Config;
  env: Environment;
  /** As given (relative paths are resolved against `cwd`). */
  configPath: string;
  envFile: string;
  /** Every .env file read, lowest precedence first. @default [envFile] */
  envFiles?: readonly string[];
  logFile: string;
  /** `--trace FILE`, as given. */
  traceFile?: string;
  /** @default Deno.cwd() */
  cwd?: string;
  /** Stored OAuth logins. @default files, or Redis for `Memory.backend: redis` (`tokenStoreFor`) */
  tokenStore?: TokenStore;
  signal?: AbortSignal;
}

/** The inputs of the plan for a loaded configuration. */
export async function gatherInputs(options: GatherOptions): Promise<PermissionInputs> {
  const cwd = options.cwd ?? Deno.cwd();
  const configFile = resolve(cwd, options.configPath);
  // Every file the configuration was read from (the user's and the project's, the
  // administrator's policy), and the policy's place even when it holds none.
  const configFiles = [
    ...new Set([
      ...(options.config.sources ?? []).map((source) => resolve(cwd, source.path)),
      configFile,
      managedFile(),
    ]),
  ];
  const variables: string[] = [];
  for (const file of configFiles) {
    try {
      const text = await readBoundedText(file, {
        what: "the configuration file",
        maxBytes: MAX_CONFIG_BYTES,
      });
      variables.push(...referencedVariables(text));
    } catch {
      // Just loaded from here (or no policy): a vanished file only loses variables.
    }
  }
  return {
    config: options.config,
    configFile,
    configFiles,
    envFile: resolve(cwd, options.envFile),
    envFiles: (options.envFiles ?? [options.envFile]).map((file) => resolve(cwd, file)),
    logFile: resolve(cwd, options.logFile),
    dirs: { state: stateDir(), data: dataDir(), config: configDir() },
    env: options.env,
    configVariables: [...new Set(variables)],
    resolveCommand: (command, searchPath, dir) => resolveCommandPath(command, searchPath, dir),
    cwd,
    oauthHosts: await authorizationHosts(options),
    ...(options.traceFile ? { traceFile: resolve(cwd, options.traceFile) } : {}),
  };
}

/** From the caller's token store, or from the configuration's own, closed when done. */
async function authorizationHosts(options: GatherOptions): Promise<Map<string, string[]>> {
  const own = options.tokenStore ? undefined : tokenStoreFor(options.config.memory, options.env);
  try {
    return await storedAuthorizationHosts(
      options.config,
      options.tokenStore ?? own!,
      options.signal,
    );
  } finally {
    await own?.close();
  }
}

/**
 * `host:port` of the authorization-server endpoints patchbay talks to (metadata, token,
 * registration, revocation), from each OAuth server's stored login. The authorization
 * page itself is opened by the browser, not by patchbay.
 */
export async function storedAuthorizationHosts(
  config: Config,
  store: TokenStore,
  signal?: AbortSignal,
): Promise<Map<string, string[]>> {
  const hosts = new Map<string, string[]>();
  const servers = config.servers.filter(usesOAuth);
  if (servers.length === 0) return hosts;
  let records: ServerCredentials[];
  try {
    records = await store.list(signal);
  } catch {
    return hosts; // Unreadable logins: the plan then says the hosts are unknown.
  }
  for (const server of servers) {
    const record = records.find((r) => r.server === server.name && r.serverUrl === server.url);
    const discovery = record?.discovery;
    if (!discovery) continue;
    const metadata = discovery.authorizationServerMetadata;
    const urls = [
      discovery.authorizationServerUrl,
      metadata?.issuer,
      metadata?.token_endpoint,
      metadata?.registration_endpoint,
      // OpenID metadata has no revocation endpoint; RFC 8414 metadata may.
      (metadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint,
    ];
    const found = new Set<string>();
    for (const url of urls) {
      if (!url) continue;
      try {
        found.add(hostPort(url));
      } catch {
        // Not a URL: nothing to allow.
      }
    }
    hosts.set(server.name, [...found]);
  }
  return hosts;
}
