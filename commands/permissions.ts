/**
 * `patchbay permissions`: the narrowest Deno permission flags for a configuration, ready
 * to paste after `deno run` or `deno install`, with the reason for each grant.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { EXIT } from "../lib/errors.ts";
import { permissionFlags, shellQuote, unlistableValues } from "../lib/permissions/flags.ts";
import { gatherInputs } from "../lib/permissions/inputs.ts";
import { type PermissionPlan, planPermissions } from "../lib/permissions/plan.ts";
import { defaultLogFile } from "../lib/paths.ts";
import { usesOAuth } from "../lib/oauth/uses_oauth.ts";
import { type GlobalOptions, type Runtime, startUp } from "../lib/cli/startup.ts";
import { VERSION } from "../lib/version.ts";
import { wrapWords } from "../lib/text/text.ts";
import { CLIENT_V8_FLAGS } from "../lib/cli/v8_flags.ts";
import type { PrintedTelemetry } from "../lib/telemetry/launch_env.ts";

/** Options of `patchbay permissions`. */
export interface PermissionsOptions extends GlobalOptions {
  /** Print JSON (flags as separate arguments, grants with reasons). @default false */
  json?: boolean;
  /**
   * First discover the authorization server of each OAuth server without a stored login,
   * as the doctor does (no browser, no login), so the plan can name its hosts. The
   * launcher asks for this. @default false
   */
  discover?: boolean;
  /**
   * With `discover`: servers whose authorization server is discovered even when a stored
   * login names one (it moved: the launcher asks after a refused request). @default []
   */
  rediscover?: string[];
}

/** The entry point the flags are for: a local path, or the URL patchbay was run from. */
export const MAIN_MODULE: string = (() => {
  const url = new URL("../main.ts", import.meta.url);
  return url.protocol === "file:" ? fileURLToPath(url) : url.href;
})();

/** What the plan is computed from, as this start-up read it (discovery may add OAuth hosts). */
function inputsOf(runtime: Runtime, options: PermissionsOptions) {
  return gatherInputs({
    config: runtime.config,
    env: runtime.env,
    configPath: runtime.configPath,
    envFile: runtime.env.file.path,
    envFiles: runtime.env.files.map((file) => file.path),
    logFile: options.logFile ?? defaultLogFile(),
    traceFile: options.trace,
  });
}

/** Prints the plan for the configuration. */
export async function permissions(options: PermissionsOptions): Promise<number> {
  // The plan needs no secret: the keychain is not asked (its tool's grant is in the plan).
  const runtime = await startUp(options, { keychain: false });
  try {
    if (options.discover) await discoverAuthorizationServers(runtime, options);
    const inputs = await inputsOf(runtime, options);
    const plan = planPermissions(inputs);
    const flags = permissionFlags(plan);
    const notes = [...plan.notes, ...commaNotes(plan)];
    if (options.json) {
      console.log(JSON.stringify(
        {
          config: inputs.configFile,
          main: MAIN_MODULE,
          flags,
          grants: plan.grants,
          all_env: plan.allEnv?.why ?? null,
          notes,
          telemetry: printedTelemetry(plan),
        },
        null,
        2,
      ));
      return EXIT.ok;
    }
    for (const notice of runtime.notices) console.error(notice);
    console.log(renderPlan(plan, flags, notes, inputs.configFile, inputs.envFile));
    return EXIT.ok;
  } finally {
    runtime.logger.close();
  }
}

/**
 * Connects, without a browser, to each OAuth server whose authorization server no stored
 * login names: discovery (and client registration) is stored as the doctor stores it. A
 * server that cannot be reached keeps its note in the plan.
 */
async function discoverAuthorizationServers(
  runtime: Runtime,
  options: PermissionsOptions,
): Promise<void> {
  const oauth = runtime.config.servers.filter((s) => !s.disabled && usesOAuth(s));
  if (oauth.length === 0) return;
  const inputs = await inputsOf(runtime, options);
  const again = new Set(options.rediscover ?? []);
  const unknown = oauth.filter((s) =>
    again.has(s.name) || (inputs.oauthHosts?.get(s.name) ?? []).length === 0
  );
  if (unknown.length === 0) return;
  // The doctor's server checks (the SDK, OAuth) load only when there is something to discover.
  const { checkServers } = await import("../lib/doctor/server_checks.ts");
  await checkServers({ ...runtime.config, servers: unknown }, {
    env: runtime.env,
    log: runtime.logger.child("permissions"),
  });
}

/** What the launcher sets for the client when the session exports telemetry (`launch_env.ts`). */
function printedTelemetry(plan: PermissionPlan): PrintedTelemetry | null {
  const telemetry = plan.telemetry;
  if (!telemetry) return null;
  return {
    from: telemetry.from,
    endpoint: telemetry.endpoint,
    protocol: telemetry.protocol,
    service_name: telemetry.serviceName,
    variables: telemetry.variables,
    ...(telemetry.headers ? { headers: telemetry.headers } : {}),
    env_file: telemetry.envFile,
  };
}

/** The listing: every grant with its reason as comments, then the flags on one line. */
export function renderPlan(
  plan: PermissionPlan,
  flags: readonly string[],
  notes: readonly string[],
  configFile: string,
  envFile: string,
): string {
  const width = Math.max(0, ...plan.grants.map((grant) => grant.value.length));
  const lines = [
    `# Deno permissions for ${configFile} (patchbay ${VERSION})`,
    "#",
  ];
  if (plan.allEnv) {
    lines.push(`#   env    (all)${" ".repeat(Math.max(1, width - 3))}  ${plan.allEnv.why}`);
  }
  const order = ["env", "read", "write", "net", "run", "sys"];
  const sorted = [...plan.grants].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  for (const grant of sorted) {
    if (grant.kind === "env" && plan.allEnv) continue;
    lines.push(`#   ${grant.kind.padEnd(5)}  ${grant.value.padEnd(width)}  ${grant.why}`);
  }
  if (!plan.grants.some((grant) => grant.kind === "sys")) {
    lines.push("#", "#   sys    none: patchbay reads no system information");
  }
  for (const note of notes) {
    lines.push(
      "#",
      ...wrapWords(`note: ${note}`, 96, "  ").map((l) => `# ${l}`),
    );
  }
  const line = flags.map(shellQuote).join(" ");
  const main = shellQuote(MAIN_MODULE);
  const manifest = shellQuote(new URL("deno.json", new URL(".", toUrl(MAIN_MODULE))).href
    .replace(/^file:\/\//, ""));
  // A local checkout's deno.json is found next to main.ts when running, but `deno install`
  // ignores it unless named; from a URL it is the import map.
  const remote = !MAIN_MODULE.startsWith("/");
  const runConfig = remote ? `--import-map ${manifest} ` : "";
  const installConfig = remote ? `--import-map ${manifest}` : `--config ${manifest}`;
  // An explicit --env-file must exist; without one, .env is looked for wherever patchbay
  // runs, which the grant above does not cover.
  const baked = `-- --config ${shellQuote(configFile)}` +
    (fileExists(envFile) ? ` --env-file ${shellQuote(envFile)}` : "");
  lines.push(
    "",
    line,
    "",
    `# Run:     deno run ${runConfig}${CLIENT_V8_FLAGS} <the flags above> ${main}`,
    `# Install: deno install --global --force --name patchbay ${installConfig} ` +
      `${CLIENT_V8_FLAGS} <the flags above> ${main} ${baked}`,
    "#          (the grants are for this configuration and .env: the install keeps using them)",
    ...(fileExists(envFile) ? [] : [
      `#          (there is no ${envFile}: an installed patchbay then reads .env from the folder`,
      "#           it runs in, which needs --allow-read for it; create the file and run this again)",
    ]),
  );
  return lines.join("\n");
}

function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function toUrl(module: string): URL {
  return module.startsWith("/") ? new URL(`file://${module}`) : new URL(module);
}

function commaNotes(plan: PermissionPlan): string[] {
  return unlistableValues(plan).map((grant) =>
    `${grant.value} contains a comma, which Deno's --allow-${grant.kind} list cannot hold; ` +
    "move or rename it, or grant its parent folder"
  );
}
