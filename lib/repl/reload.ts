/**
 * `/refresh` reads the configuration and .env again: the user's and the project's files
 * (located anew) and the administrator's policy. Servers added, removed or changed in
 * the files are started, closed or restarted (`ConnectionManager.apply`); a configuration
 * that does not validate is reported and changes nothing. A configuration that needs grants
 * the running plan lacks (a new stdio command, a new host, a new variable) asks the
 * launcher for a restart under the extended plan (`permissions/restart.ts`), which resumes
 * this conversation.
 *
 * Only the servers and the hooks follow the file; the model, memory and agent settings are
 * those of the start (they are read again at the next start). The .env read again serves
 * the file's `${VAR}` only: servers inherit the environment of the start, and the proxy
 * variables and the model's key stay those of the start (the manager and the model client
 * keep the environment they were made with).
 *
 * @module
 */

import { isAbsolute } from "node:path";
import type { Config } from "../config/types.ts";
import { type ConfigSources, locateSources } from "../config/locate.ts";
import { loadScopedConfig } from "../config/scoped.ts";
import { type Environment, loadEnvironment } from "../env.ts";
import { resolveCommandPath } from "../permissions/command_path.ts";
import { compareGrants } from "../permissions/grants.ts";
import { gatherInputs } from "../permissions/inputs.ts";
import { planPermissions } from "../permissions/plan.ts";
import {
  describeAdds,
  grantList,
  type NeededGrant,
  restartFile,
  writeRestartRequest,
} from "../permissions/restart.ts";
import { PROJECT_DIR, registerConfigSecrets, type Runtime } from "../cli/startup.ts";
import { keychainReader } from "../secrets/keychain.ts";
import type { ServerChanges } from "../connections/manager.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import type { ClientSession } from "../session/client_session.ts";

/** What became of a `/refresh` that read the configuration again. */
export type ReloadOutcome =
  | { kind: "applied"; changes: ServerChanges }
  /** The file does not validate: said, and the servers stay as they were. */
  | { kind: "invalid" }
  /** The launcher starts the client again under the extended plan. */
  | { kind: "restart" }
  /**
   * A restart would end a conversation memory does not keep: said, and held until the
   * person asks again. The servers stay as they were.
   */
  | { kind: "held" };

/**
 * Sessions told that a restart would end their conversation (memory is off): their next
 * `/refresh` restarts all the same.
 */
const warnedOfLoss = new WeakSet<ClientSession>();

/** A value standing in for variables Deno does not let this process read (see below). */
const UNREADABLE_PLACEHOLDER = "unreadable-variable";

/** Reads the configuration and .env again and applies them to `session`. */
export async function reloadConfiguration(session: ClientSession): Promise<ReloadOutcome> {
  const { runtime, output } = session;
  const canRestart = restartFile() !== undefined;
  let config: Config;
  let env: Environment | undefined;
  // The files are looked for again: a project file made meanwhile is read from now on.
  const explicit = runtime.sources.files.find((file) => file.scope === "explicit")?.path;
  const sources = locateSources(explicit, PROJECT_DIR);
  try {
    env = await loadEnvironment({
      path: runtime.env.file.path,
      under: runtime.env.files.slice(0, -1).map((file) => file.path),
    });
    config = await loadScopedConfig(sources, env, {
      keychain: keychainReader(env, runtime.logger.redactor),
    });
  } catch (error) {
    // A variable this process may not read is granted by the new plan, not a mistake.
    const standIn = canRestart && env ? await loadWithUnreadable(sources, env) : undefined;
    const restart = env && standIn ? await restarted(session, standIn, env) : undefined;
    if (restart) return { kind: restart };
    output.err(`${session.presentError(error)}\n`);
    output.err(
      session.errStyle.dim("The servers stay as they were; fix the file and /refresh again.\n"),
    );
    return { kind: "invalid" };
  }
  const restart = canRestart ? await restarted(session, config, env) : undefined;
  if (restart) return { kind: restart };
  registerConfigSecrets(config, runtime.logger.redactor);
  const changes = await session.applyServers(config.servers);
  // The hooks follow the file too (a new hook's program was granted above, or restarts).
  session.hooks.hooks.setConfig(config.hooks);
  runtime.config = {
    ...runtime.config,
    servers: config.servers,
    hooks: config.hooks,
    ...(config.sources ? { sources: config.sources } : {}),
  };
  runtime.sources = sources;
  runtime.configPath = sources.primary;
  for (const notice of config.notices ?? []) output.err(`${session.errStyle.dim(notice)}\n`);
  return { kind: "applied", changes };
}

/**
 * When `config` needs grants this process lacks: asks the launcher for a restart (with the
 * conversation to resume) and says what is added and why: `"restart"`. With memory off and
 * something said, the restart would end the conversation: the first time, that is said
 * instead (`"held"`). `undefined` when nothing is missing or no restart can be asked for.
 */
async function restarted(
  session: ClientSession,
  config: Config,
  env: Environment,
): Promise<"restart" | "held" | undefined> {
  // An OAuth server whose new authorization server was refused: discovered at the restart.
  const { adds: refused, rediscover } = session.refusedGrants.list();
  const adds = [...await missingGrants(config, env, session.runtime), ...refused];
  if (adds.length === 0) return undefined;
  const conversation = session.memory.session;
  const said = conversation.messages.length;
  if (!session.memory.enabled && said > 0 && !warnedOfLoss.has(session)) {
    warnedOfLoss.add(session);
    session.output.err(
      `${session.errStyle.yellow(describeHeldRestart(adds, said))}\n` +
        session.errStyle.dim("The servers stay as they were.\n"),
    );
    return "held";
  }
  const resumable = session.memory.enabled && said > 0;
  const request = { adds, rediscover, session: resumable ? conversation.id : undefined };
  if (!await writeRestartRequest(request)) return undefined;
  session.output.err(
    `${
      session.errStyle.yellow(
        describeAdds(adds, resumable || said === 0 ? undefined : "a new conversation starts"),
      )
    }\n`,
  );
  return "restart";
}

/** Why a restart waits for a second `/refresh`: memory is off, so it would end `said` messages. */
export function describeHeldRestart(adds: readonly NeededGrant[], said: number): string {
  return `The configuration needs ${grantList(adds)}, which only a restart under an ` +
    `extended plan can add. Memory is off, so the restart would end this conversation ` +
    `(${said} message${said === 1 ? "" : "s"}): /refresh again to restart anyway.`;
}

/**
 * The configuration with a placeholder for each variable Deno does not let this process
 * read, to tell a file that only needs more grants from one that is wrong: `undefined` when
 * it does not validate even so (where the placeholder itself does not fit, as in a URL,
 * the refusal names the variable and how to grant it).
 */
async function loadWithUnreadable(
  sources: ConfigSources,
  env: Environment,
): Promise<Config | undefined> {
  const standIn: Environment = {
    ...env,
    get: (name) => env.denied(name) ? UNREADABLE_PLACEHOLDER : env.get(name),
  };
  try {
    return await loadScopedConfig(sources, standIn);
  } catch {
    return undefined;
  }
}

/** Grants the plan for `config` needs that this process runs without. */
async function missingGrants(
  config: Config,
  env: Environment,
  runtime: Pick<Runtime, "configPath" | "logFile">,
): Promise<NeededGrant[]> {
  const plan = planPermissions(
    await gatherInputs({
      config,
      env,
      configPath: runtime.configPath,
      envFile: env.file.path,
      envFiles: env.files.map((file) => file.path),
      // The session's own log file (--log-file): the plan it runs under grants that one.
      logFile: runtime.logFile,
    }),
  );
  const report = compareGrants(plan);
  // Commands of enabled stdio servers, as written: a bare one this process could not look
  // for on PATH (it may not read the PATH folders) is a real need, which the launcher, who
  // may look, grants where it finds it. Other programs (a browser opener) are not.
  const serverCommands = new Set(
    config.servers.flatMap((server) =>
      server.transport === "stdio" && !server.disabled ? [server.command] : []
    ),
  );
  const adds: NeededGrant[] = report.missing
    // A server's command not found on PATH is named as it is written, and Deno cannot
    // grant a name it cannot find either: a restart would not add it.
    .filter(({ kind, value }) =>
      kind !== "run" || isAbsolute(value) ||
      (serverCommands.has(value) &&
        resolveCommandPath(value, env.get("PATH"), Deno.cwd()) === value)
    )
    .map(({ kind, value, why }) => ({ kind, value, why }));
  if (report.missingAllEnv && plan.allEnv) {
    adds.push({ kind: "env", value: "(every variable)", why: plan.allEnv.why });
  }
  return adds;
}

/** One line on what the file changed: `Configuration read again: 'time' added.` */
export function describeChanges(changes: ServerChanges): string {
  const parts = [
    ...changes.added.map((name) => `'${stripTerminalEscapes(name)}' added`),
    ...changes.removed.map((name) => `'${stripTerminalEscapes(name)}' removed`),
    ...changes.changed.map((name) => `'${stripTerminalEscapes(name)}' changed`),
  ];
  return `Configuration read again: ${parts.length > 0 ? parts.join(", ") : "no server changed"}.`;
}
