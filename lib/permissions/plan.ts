/**
 * The narrowest Deno permissions a configuration needs, each with the reason it is
 * needed. Pure: every fact about the machine (paths, the command lookup, stored OAuth
 * logins) comes in through {@linkcode PermissionInputs}, so the plan is testable and
 * `patchbay permissions` and `patchbay doctor` compute the same one.
 *
 * @module
 */

import { isAbsolute, relative } from "node:path";
import type { Config } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { Grant, NeedsSink, PermissionKind } from "../deno_permission/needs.ts";
import { LAUNCHER_VARIABLE, RESTART_FILE_VARIABLE } from "../deno_permission/launched.ts";
import type { Environment } from "../env.ts";
import type { TelemetryLaunch } from "../telemetry/settings.ts";
// Each subsystem's declaration of its needs, from its own folder.
import { httpServerNeeds, stdioFolderNeeds, stdioNeeds } from "../connections/needs.ts";
import { hookNeeds } from "../hooks/needs.ts";
import { providerNeeds } from "../llm/needs.ts";
import { memoryNeeds } from "../memory/needs.ts";
import { oauthNeeds, oauthServers } from "../oauth/needs.ts";
import { scopeNeeds } from "../policy/needs.ts";
import { secretNeeds } from "../secrets/needs.ts";
import { telemetryNeeds } from "../telemetry/needs.ts";
import { traceNeeds } from "../trace/needs.ts";
import { outputNeeds } from "../ui/needs.ts";

export type { Grant, PermissionKind } from "../deno_permission/needs.ts";
export { hostPort } from "../proxy.ts";

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

/** One declaration of needs, as the plan calls it (each names the inputs it reads). */
type Needs = (plan: PlanBuilder, inputs: PermissionInputs) => void;

/**
 * Every declaration of needs, in the order the flags list their values (so keep it: a new
 * subsystem goes before patchbay's own variables). Each subsystem's lives in its folder's
 * `needs.ts`; tests/permissions/needs_list_test.ts checks that none is left out.
 */
export const NEEDS: readonly Needs[] = [
  ownFileNeeds,
  stdioFolderNeeds,
  scopeNeeds,
  providerNeeds,
  httpServerNeeds,
  oauthNeeds,
  memoryNeeds,
  stdioNeeds,
  traceNeeds,
  // Hooks' commands are granted like stdio servers' (lib/hooks/needs.ts).
  hookNeeds,
  telemetryNeeds,
  secretNeeds,
  folderVariableNeeds,
  outputNeeds,
  ownVariableNeeds,
];

/** Computes the plan: what every declaration in {@linkcode NEEDS} adds. */
export function planPermissions(inputs: PermissionInputs): PermissionPlan {
  const plan = new PlanBuilder();
  for (const needs of NEEDS) needs(plan, inputs);
  return plan.build();
}

/** The files patchbay itself reads and writes: configuration, log, history, conversations. */
function ownFileNeeds(plan: NeedsSink, inputs: PermissionInputs): void {
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
  const logins = oauthServers(inputs.config).length > 0
    ? "OAuth logins"
    : "stored OAuth logins (patchbay auth list, logout)";
  plan.add("read", dirs.config, logins);
  plan.add("write", dirs.config, logins);
}

/** The variables that choose patchbay's folders. */
function folderVariableNeeds(plan: NeedsSink, inputs: Pick<PermissionInputs, "os">): void {
  const os = inputs.os ?? Deno.build.os;
  for (const name of FOLDER_VARIABLES[os === "windows" ? "windows" : "unix"]) {
    plan.add("env", name, "where patchbay's folders are");
  }
}

/** The variables patchbay itself reads: the launcher's, and those the configuration names. */
function ownVariableNeeds(plan: NeedsSink, inputs: PermissionInputs): void {
  plan.add("env", LAUNCHER_VARIABLE, "how the launcher started this session (/status)");
  plan.add(
    "env",
    RESTART_FILE_VARIABLE,
    "where to ask the launcher for a restart under an extended plan",
  );
  for (const name of inputs.configVariables) {
    plan.add("env", name, `\${${name}} in ${inputs.configFile}`);
  }
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Collects grants without duplicates, with every reason given for each. */
class PlanBuilder implements NeedsSink {
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
