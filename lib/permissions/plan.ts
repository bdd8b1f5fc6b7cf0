/**
 * The narrowest Deno permissions a configuration needs, each with the reason it is
 * needed. Pure: every fact about the machine (paths, the command lookup, stored OAuth
 * logins) comes in through {@linkcode PermissionInputs}, so the plan is testable and
 * `patchbay permissions` and `patchbay doctor` compute the same one.
 *
 * @module
 */

import { isAbsolute, relative } from "node:path";
import type { Config, HttpServerConfig, StdioServerConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";
import { API_KEY_VARIABLE } from "../llm/api_key.ts";
import { resolveBaseUrl } from "../llm/base_url.ts";
import { PROVIDERS } from "../providers.ts";
import { portOf, proxyFor } from "../proxy.ts";
import { redisConfigured, resolveRedisSettings } from "../redis/settings.ts";
import { browserCommands } from "../oauth/browser.ts";
import { hookGrants } from "./hook_grants.ts";
import { usesOAuth } from "../oauth/uses_oauth.ts";
import { planOrganisationGrant } from "./grant_plan.ts";
import { chooseTrace, TRACE_VARIABLE } from "../trace/choice.ts";
import { childEnvironment, INHERITED_ENV_NAMES, KILL_PROGRAM } from "../transports/process.ts";
import { npxCacheDir, packageRunOf } from "../connections/package_runner.ts";
import { TERMINAL_VARIABLES } from "../terminal/terminal.ts";
import { DENO_SWITCH, type TelemetryLaunch, telemetryLaunch } from "../telemetry/settings.ts";
import { planSecrets } from "./secrets_plan.ts";
import { managedFile } from "../policy/place.ts";

/** The permission kinds patchbay can need, as Deno names them. */
export type PermissionKind = "read" | "write" | "net" | "run" | "env" | "sys";

/** One value of one permission (a path, `host:port`, a command, a variable). */
export interface Grant {
  kind: PermissionKind;
  value: string;
  /** Why patchbay needs it, for the listing and the doctor's findings. */
  why: string;
}

/** Everything a configuration needs, narrowest first. */
export interface PermissionPlan {
  grants: Grant[];
  /**
   * The whole environment rather than named variables (ioredis enumerates it on import);
   * `why` says so. `undefined`: the named `env` grants suffice.
   */
  allEnv?: { why: string };
  /** What cannot be known in advance, and what to do about it. */
  notes: string[];
  /** Telemetry, when the session exports it: what the launcher sets for the client. */
  telemetry?: TelemetryLaunch;
}

/** What the plan is computed from. */
export interface PermissionInputs {
  config: Config;
  /** Absolute paths of the files patchbay reads and writes. */
  configFile: string;
  envFile: string;
  /**
   * Every configuration file read (the user's, the project's, the administrator's policy
   * file, whose place is read even when it holds none). @default [configFile]
   */
  configFiles?: readonly string[];
  /** Every .env file read. @default [envFile] */
  envFiles?: readonly string[];
  logFile: string;
  /** patchbay's own folders (`lib/paths.ts`). */
  dirs: { state: string; data: string; config: string };
  /** Process environment over .env: proxies, REDIS_*, $BROWSER, the servers' PATH. */
  env: Environment;
  /** @default Deno.build.os */
  os?: typeof Deno.build.os;
  /** Names written as `${NAME}` in the configuration file. */
  configVariables: readonly string[];
  /**
   * The path Deno checks for a stdio server's command: found on `searchPath` (the PATH
   * the server process gets), relative paths against `cwd`. `undefined`: not found.
   */
  resolveCommand(command: string, searchPath: string | undefined, cwd: string): string | undefined;
  /** The working directory, for relative commands of entries without `cwd`. */
  cwd: string;
  /** Authorization-server addresses from stored OAuth logins, by server name. */
  oauthHosts?: ReadonlyMap<string, readonly string[]>;
  /** `--trace FILE`, absolute. */
  traceFile?: string;
}

/** Variables that choose patchbay's folders on each platform (`lib/paths.ts`). */
const FOLDER_VARIABLES: Readonly<Record<"unix" | "windows", readonly string[]>> = {
  unix: ["HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"],
  windows: ["USERPROFILE", "LOCALAPPDATA", "APPDATA"],
};

/** Proxy variables consulted per scheme, for the model and HTTP servers (`lib/proxy.ts`). */
const PROXY_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  "https:": ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"],
  "http:": ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"],
};

/** Variables `Memory.backend: auto` (and `/memory` from `off`) read to choose the store. */
const REDIS_SELECTORS = ["REDIS_URL", "REDIS_HOST"] as const;

/** Computes the plan. */
export function planPermissions(inputs: PermissionInputs): PermissionPlan {
  const plan = new PlanBuilder();
  const { config } = inputs;
  const os = inputs.os ?? Deno.build.os;
  const servers = config.servers.filter((server) => !server.disabled);
  const stdio = servers.filter((s): s is StdioServerConfig => s.transport === "stdio");
  const http = servers.filter((s): s is HttpServerConfig => s.transport !== "stdio");
  const oauth = http.filter(usesOAuth);

  planFiles(plan, inputs, stdio, oauth.length > 0);
  planScopes(plan, inputs);
  planProvider(plan, inputs);
  for (const server of http) {
    const what = `MCP server '${server.name}' (${server.transport})`;
    plan.add("net", hostPort(server.url), what);
    planProxy(plan, inputs, server.url, `requests to ${what}`);
    if (server.auth?.privateKeyFile) {
      plan.add(
        "read",
        server.auth.privateKeyFile,
        `the private key of server '${server.name}' (auth.private_key_file)`,
      );
    }
    planOrganisationGrant(plan, inputs, server);
  }
  planOAuth(plan, inputs, oauth, os);
  planMemory(plan, inputs);
  planLeases(plan, inputs);
  planStdio(plan, inputs, stdio);
  planTrace(plan, inputs);
  // Hooks' commands are granted like stdio servers' (lib/permissions/hook_grants.ts).
  const hooks = hookGrants(config.hooks, inputs);
  for (const grant of hooks.grants) plan.add(grant.kind, grant.value, grant.why);
  for (const note of hooks.notes) plan.note(note);
  planTelemetry(plan, inputs);
  planSecrets(plan, inputs);

  for (const name of FOLDER_VARIABLES[os === "windows" ? "windows" : "unix"]) {
    plan.add("env", name, "where patchbay's folders are");
  }
  plan.add("env", "NO_COLOR", "turns colours off when set");
  // The variables `imageProtocol` (lib/ui/inline_image.ts) reads.
  for (const name of ["TERM", "TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID", "TMUX"]) {
    plan.add("env", name, "whether the terminal draws images (/image)");
  }
  for (const name of TERMINAL_VARIABLES.filter((name) => name !== "NO_COLOR")) {
    plan.add("env", name, "colours and links in the terminal");
  }
  plan.add("env", "PATCHBAY_LAUNCHER", "how the launcher started this session (/status)");
  plan.add(
    "env",
    "PATCHBAY_RESTART_FILE",
    "where to ask the launcher for a restart under an extended plan",
  );
  for (const name of inputs.configVariables) {
    plan.add("env", name, `\${${name}} in ${inputs.configFile}`);
  }
  return plan.build();
}

/**
 * Telemetry (docs/telemetry.md): Deno's exporter sends it from outside the permission
 * checks (measured: no --allow-net for the collector, no --allow-env for its variables),
 * so the client needs only to read the switch that tells it Deno exports.
 */
function planTelemetry(plan: PlanBuilder, inputs: PermissionInputs): void {
  const telemetry = telemetryLaunch(inputs.config, inputs.env, inputs.envFile);
  if (!telemetry) return;
  plan.add("env", DENO_SWITCH, "whether Deno exports telemetry (docs/telemetry.md)");
  plan.telemetry(telemetry);
  plan.note(
    `Telemetry (${telemetry.from}): Deno exports spans and metrics to ${telemetry.endpoint} ` +
      `(${telemetry.protocol}, service ${telemetry.serviceName}); the launcher starts the ` +
      `client with ${DENO_SWITCH}=true. Deno's exporter works outside the permission checks, ` +
      "so the collector needs no --allow-net.",
  );
}

/** The wire trace's file and its older generations, and the variable that can name it. */
function planTrace(plan: PlanBuilder, inputs: PermissionInputs): void {
  plan.add("env", TRACE_VARIABLE, "names a wire trace file (docs/trace.md)");
  const choice = chooseTrace({ trace: inputs.traceFile }, inputs.env, inputs.config, inputs.cwd);
  if (!choice) return;
  const what = `the wire trace (${choice.from})`;
  plan.add("read", choice.file, what);
  plan.add("write", choice.file, what);
  // Rotation renames it to .1, .2, …; `patchbay trace show` reads them back.
  for (let i = 1; i < DEFAULTS.trace.files; i++) {
    plan.add("read", `${choice.file}.${i}`, "the wire trace's older generations");
    plan.add("write", `${choice.file}.${i}`, "the wire trace's older generations");
  }
}

function planFiles(
  plan: PlanBuilder,
  inputs: PermissionInputs,
  stdio: readonly StdioServerConfig[],
  oauth: boolean,
): void {
  const { dirs } = inputs;
  plan.add("read", inputs.configFile, "the configuration");
  plan.add("read", inputs.envFile, "the environment file (read at start-up)");
  plan.add("read", dirs.state, "the log and the prompt history");
  plan.add("write", dirs.state, "the log and the prompt history");
  if (!isInside(inputs.logFile, dirs.state)) {
    plan.add("read", inputs.logFile, "the log file (--log-file)");
    plan.add("write", inputs.logFile, "the log file (--log-file)");
    // Rotation renames it to .1, .2, … (without these the file is emptied instead).
    for (let i = 1; i < DEFAULTS.log.files; i++) {
      plan.add("write", `${inputs.logFile}.${i}`, "the log file's older generations");
    }
  }
  plan.add("read", dirs.data, "stored conversations");
  plan.add("write", dirs.data, "stored conversations");
  // Stored logins outlive the servers that made them: `auth list` and `auth logout` reach
  // them whatever the configuration names now.
  const logins = oauth ? "OAuth logins" : "stored OAuth logins (patchbay auth list, logout)";
  plan.add("read", dirs.config, logins);
  plan.add("write", dirs.config, logins);
  for (const server of stdio) {
    if (server.cwd) {
      plan.add("read", server.cwd, `working directory of server '${server.name}'`);
    }
  }
}

/**
 * The configuration's other files (docs/configuration.md, "Scopes"; docs/policy.md): the
 * user's and the project's, each .env, and the administrator's policy, whose place is read
 * at every start (a policy that cannot be read stops patchbay). What the policy refuses is
 * granted nothing: its servers are disabled, and the grants above leave them out.
 */
function planScopes(plan: PlanBuilder, inputs: PermissionInputs): void {
  const policy = managedFile(inputs.os);
  for (const file of inputs.configFiles ?? []) {
    plan.add(
      "read",
      file,
      file === policy ? "the administrator's policy, if any (docs/policy.md)" : "the configuration",
    );
  }
  for (const file of inputs.envFiles ?? []) {
    plan.add("read", file, "the environment file (read at start-up)");
  }
  for (const server of inputs.config.servers.filter((s) => s.refused)) {
    plan.note(
      `server '${server.name}' is refused by the administrator's policy ` +
        `(${server.refused!.file}): nothing is granted for it.`,
    );
  }
}

function planProvider(plan: PlanBuilder, inputs: PermissionInputs): void {
  const { llm } = inputs.config;
  const preset = PROVIDERS[llm.provider];
  plan.add("env", API_KEY_VARIABLE, "the model provider's key");
  let base: string;
  try {
    base = resolveBaseUrl(llm);
  } catch {
    return; // No address configured: the configuration check reports it.
  }
  const label = `the model provider (${preset.label})`;
  plan.add("net", hostPort(base), label);
  planProxy(plan, inputs, base, "model requests");
}

/** The proxy variables read for requests to `target`, and the proxy they name, if any. */
function planProxy(plan: PlanBuilder, inputs: PermissionInputs, target: string, what: string) {
  for (const name of PROXY_VARIABLES[new URL(target).protocol] ?? []) {
    plan.add("env", name, `proxy settings for ${what}`);
  }
  try {
    const proxy = proxyFor(target, inputs.env);
    if (proxy) plan.add("net", hostPort(proxy.url), `the proxy for ${what} (${proxy.variable})`);
  } catch {
    // An unusable proxy variable is the doctor's finding, not a permission.
  }
}

/**
 * A program patchbay can do without (the browser opener, the port-3000 holder's namer):
 * granted by the file it resolves to on PATH. One that is not on PATH is left out with a
 * note: Deno cannot grant a name it cannot resolve (it says so on stderr at every start),
 * and starting it fails the same way granted or not.
 */
function addHelperProgram(
  plan: PlanBuilder,
  inputs: PermissionInputs,
  program: string,
  why: string,
  without: string,
): void {
  const path = inputs.resolveCommand(program, inputs.env.get("PATH"), inputs.cwd);
  if (path) plan.add("run", path, why);
  else plan.note(`'${program}' is not on PATH, so it is not granted (it ${why}): ${without}.`);
}

function planOAuth(
  plan: PlanBuilder,
  inputs: PermissionInputs,
  oauth: readonly HttpServerConfig[],
  os: typeof Deno.build.os,
): void {
  if (oauth.length === 0) return;
  const port = DEFAULTS.oauthCallback.port;
  const why = `the OAuth callback listener (always http://localhost:${port})`;
  plan.add("net", `127.0.0.1:${port}`, why);
  plan.add("net", `[::1]:${port}`, why);
  plan.add("net", `localhost:${port}`, why);
  plan.add("env", "BROWSER", "the command that opens the authorization page");
  for (const argv of browserCommands("https://example.invalid/", inputs.env.get("BROWSER"), os)) {
    addHelperProgram(
      plan,
      inputs,
      argv[0],
      "opens the OAuth authorization page in the browser",
      "the authorization URL is printed to open by hand",
    );
  }
  // lib/oauth/port_holder.ts: /proc needs --allow-all, so Linux names the holder with `ss`.
  const holderProgram = os === "darwin" ? "lsof" : os === "linux" ? "ss" : undefined;
  if (holderProgram) {
    addHelperProgram(
      plan,
      inputs,
      holderProgram,
      "names the process holding port 3000 when it is taken",
      "a taken port 3000 is reported without the name of its holder",
    );
  }
  const unknown: string[] = [];
  for (const server of oauth) {
    const hosts = inputs.oauthHosts?.get(server.name) ?? [];
    for (const host of hosts) {
      plan.add("net", host, `authorization server of '${server.name}' (from its stored login)`);
    }
    if (hosts.length === 0) unknown.push(server.name);
  }
  if (unknown.length > 0) {
    plan.note(
      `OAuth: the authorization server of ${unknown.map((n) => `'${n}'`).join(", ")} is ` +
        "known only after the first login, and may be on another host than the MCP server. " +
        "Log in once (`patchbay auth login <server>`), or run `patchbay doctor`, which " +
        "discovers it, then run `patchbay permissions` again to include it; or add its " +
        "host:port to --allow-net.",
    );
  }
}

function planMemory(plan: PlanBuilder, inputs: PermissionInputs): void {
  const { memory } = inputs.config;
  if (memory.backend === "file") return;
  for (const name of REDIS_SELECTORS) plan.add("env", name, "selects Redis for memory");
  const wantsRedis = memory.backend === "redis" || redisConfigured(memory, inputs.env);
  if (!wantsRedis) return;
  plan.allEnv(
    "memory is kept in Redis, and its client (ioredis) reads the whole environment when it " +
      "loads, which a list of variables does not allow",
  );
  let settings;
  try {
    settings = resolveRedisSettings(memory, inputs.env);
  } catch {
    return; // The doctor's memory check reports unusable REDIS_* values.
  }
  const topology = settings.topology;
  if (topology.mode === "standalone") {
    plan.add("net", address(topology.address), "the Redis memory store");
  } else if (topology.mode === "sentinel") {
    for (const sentinel of topology.sentinels) {
      plan.add("net", address(sentinel), "a Redis sentinel");
    }
    plan.note(
      "Redis Sentinel: the master's address comes from the sentinels at run time; add the " +
        "host:port of every server that can become master to --allow-net.",
    );
  } else {
    for (const node of topology.nodes) plan.add("net", address(node), "a Redis Cluster node");
    plan.note(
      "Redis Cluster: the other nodes are discovered at run time; add the host:port of " +
        "every node to --allow-net.",
    );
  }
  if (settings.tls?.caFile) {
    plan.add("read", settings.tls.caFile, "the CA certificate of Redis (REDIS_TLS_CA_FILE)");
  }
}

/**
 * lib/memory/lease_holder.ts: a conversation held by a process on this machine that has
 * ended is taken over at once; telling needs the machine's name and `kill -0 <pid>`.
 */
function planLeases(plan: PlanBuilder, inputs: PermissionInputs): void {
  if (inputs.config.memory.backend === "off") return;
  plan.add("sys", "hostname", "tells a conversation held on this machine from one held elsewhere");
  plan.add(
    "run",
    inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd) ?? KILL_PROGRAM,
    "asks whether the process holding a conversation on this machine still runs (kill -0)",
  );
}

function planStdio(
  plan: PlanBuilder,
  inputs: PermissionInputs,
  stdio: readonly StdioServerConfig[],
): void {
  // Granted whether or not a stdio server is configured yet: a server added later (by
  // /refresh) then needs only its own command, not a restart for variables every one gets.
  for (const name of INHERITED_ENV_NAMES) {
    plan.add("env", name, "passed on to stdio servers");
  }
  if (stdio.length === 0) return;
  // Deno.kill needs --allow-run for every program; the kill program is what lets shutdown
  // reach what a server started (`sh -c "worker & exec server"`) under narrow flags.
  const kill = inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd);
  if (kill) {
    plan.add(
      "run",
      kill,
      "ends what stdio servers started when they are closed (their process group)",
    );
  }
  for (const server of stdio) {
    const searchPath = server.env.PATH ?? inputs.env.get("PATH");
    const path = inputs.resolveCommand(server.command, searchPath, server.cwd ?? inputs.cwd);
    // A bare name not found on PATH is not granted: Deno would drop it with a notice of its
    // own (the configured text, raw), and starting it fails as "not found" whatever the
    // grant, which the connection's diagnosis reports. A path is granted as written.
    const granted = path ?? (isBareName(server.command) ? undefined : server.command);
    if (granted) plan.add("run", granted, `starts server '${server.name}'`);
    planNpxCache(plan, inputs, server);
    if (!path) {
      plan.note(
        `'${server.command}' (server '${server.name}') is not on the PATH the server gets, ` +
          "so it is not granted: Deno allows a command by the file it resolves to; install " +
          'it (or fix "command") and /refresh, or run `patchbay permissions` again.',
      );
    }
  }
}

/** A command Deno looks for on PATH (no directory in it), as opposed to a path. */
function isBareName(command: string): boolean {
  return !/[\\/]/.test(command);
}

/**
 * What `npx` has installed, read to tell a server still installing (its first connect gets
 * longer: lib/connections/package_runner.ts), in the cache the server's environment names.
 */
function planNpxCache(plan: PlanBuilder, inputs: PermissionInputs, server: StdioServerConfig) {
  const run = packageRunOf(server.command, server.args);
  if (!run || (run.runner !== "npx" && !run.runner.startsWith("npm "))) return;
  const env = childEnvironment(server.env, (name) => inputs.env.get(name));
  const dir = npxCacheDir((name) => env[name], inputs.os);
  if (dir) {
    plan.add("read", dir, `what npx has installed (is server '${server.name}' installing?)`);
  }
}

/** `host:port` of a URL as Deno's net permission names it (default ports filled in). */
export function hostPort(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${portOf(parsed)}`;
}

function address(address: { host: string; port: number }): string {
  return `${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`;
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Collects grants without duplicates, with every reason given for each. */
class PlanBuilder {
  #grants = new Map<string, Grant>();
  #notes: string[] = [];
  #allEnv?: { why: string };
  #telemetry?: TelemetryLaunch;

  add(kind: PermissionKind, value: string, why: string): void {
    const key = `${kind}\u0000${value}`;
    const existing = this.#grants.get(key);
    if (!existing) this.#grants.set(key, { kind, value, why });
    else if (!existing.why.split("; ").includes(why)) existing.why += `; ${why}`;
  }

  allEnv(why: string): void {
    this.#allEnv ??= { why };
  }

  note(text: string): void {
    this.#notes.push(text);
  }

  telemetry(telemetry: TelemetryLaunch): void {
    this.#telemetry = telemetry;
  }

  build(): PermissionPlan {
    return {
      grants: [...this.#grants.values()],
      ...(this.#allEnv ? { allEnv: this.#allEnv } : {}),
      notes: this.#notes,
      ...(this.#telemetry ? { telemetry: this.#telemetry } : {}),
    };
  }
}
