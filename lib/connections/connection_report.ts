/**
 * What one server's connection reports about itself: its status (where the server is,
 * state, counts, the error, the restart that comes next, what the server said of itself);
 * when it cannot take requests now, or no entry has its name, the error saying why and
 * what to do; and the error an attempt that threw ends with.
 *
 * @module
 */

import type { ServerConfig } from "../config/types.ts";
import {
  PatchbayError,
  policyRefusal,
  PolicyRefusedError,
  ServerConnectError,
  ServerUnavailableError,
} from "../errors.ts";
import type { Redactor } from "../redact/redact.ts";
import { didYouMean } from "../text/text.ts";
import { STEPS } from "../errors/failure_table.ts";
import { whileRestarting } from "./reconnect.ts";
import { cleanText, RECONNECT_REMEDY } from "./request_errors.ts";
import type { Lists, ServerSession } from "./session/server_session.ts";
import type { ConnectionState, InstallStatus, RetryStatus, ServerStatus } from "./types.ts";

/** What the server said of itself when it connected. */
export type SessionInfo = Pick<ServerStatus, "serverInfo" | "protocolVersion" | "instructions">;

/** Where one server's connection stands now. */
export interface ConnectionFacts {
  config: ServerConfig;
  state: ConnectionState;
  /** When it entered `state`. */
  since: Date;
  /** Why it is not connected, if it failed or was lost. */
  error?: PatchbayError;
  /** The last lists the server gave. */
  lists: Lists;
  /** They are the lists kept from an earlier run, served while the first attempt runs. */
  listsFromCache?: boolean;
  info: SessionInfo;
  /** The restart that comes next while `reconnecting`. */
  next?: RetryStatus;
  /** Lists the server declares but answered with an error (while connected). */
  warnings: readonly string[];
  /** The install the attempt in flight may wait for. */
  installing?: InstallStatus;
}

/** What `session` says of itself (its name and version, protocol, instructions). */
export function sessionInfo(session: ServerSession): SessionInfo {
  return {
    serverInfo: session.serverInfo && {
      name: session.serverInfo.name,
      version: session.serverInfo.version,
    },
    protocolVersion: session.protocolVersion,
    instructions: session.instructions,
  };
}

/** The status of the connection described by `facts`, reached at `target`. */
export function connectionStatus(facts: ConnectionFacts, target: string): ServerStatus {
  const { config, state, error, lists } = facts;
  return {
    name: config.name,
    transport: config.transport,
    ...(config.transportReason ? { transportReason: config.transportReason } : {}),
    target,
    state,
    since: facts.since,
    counts: {
      tools: lists.tools.length,
      prompts: lists.prompts.length,
      resources: lists.resources.length,
    },
    error: state === "reconnecting" && error ? whileRestarting(error) : error,
    ...facts.info,
    ...(config.disabled ? { disabled: true } : {}),
    ...(facts.listsFromCache ? { listsFromCache: true } : {}),
    ...(config.refused ? { refused: { ...config.refused } } : {}),
    ...(state === "reconnecting" && facts.next ? { retry: { ...facts.next } } : {}),
    ...(["disconnected", "connecting", "reconnecting"].includes(state) && facts.installing
      ? { installing: { ...facts.installing } }
      : {}),
    ...(state === "connected" && facts.warnings.length > 0
      ? { warnings: [...facts.warnings] }
      : {}),
  };
}

/**
 * Why requests cannot be made now, as an error naming the server: the administrator's
 * policy refusing it, or why it is not connected.
 */
export function unavailableError(
  facts: ConnectionFacts,
): ServerUnavailableError | PolicyRefusedError {
  const { config, error } = facts;
  const name = config.name;
  if (config.refused) return policyRefusal(name, config.refused);
  const state = config.disabled ? "disabled" : facts.state;
  const reason = config.disabled && config.switchedForSession
    ? "it was disabled for this session (/mcp disable)"
    : config.disabled
    ? 'the entry has "disabled": true'
    : error
    ? error.reason
    : facts.state === "connecting"
    ? "it is still connecting"
    : facts.state === "closed"
    ? "the session is closing"
    : "it has not been connected";
  const remedy = config.disabled && config.switchedForSession
    ? `/mcp enable ${name} connects it again`
    : config.disabled
    ? `\`patchbay mcp enable ${name}\` enables it in the file (/mcp enable ` +
      `${name} for one session of the interactive client)`
    : facts.state === "reconnecting"
    ? RECONNECT_REMEDY
    : error?.remedies ?? STEPS.connect;
  return new ServerUnavailableError(name, state, { reason, remedy, cause: error });
}

/** The error an attempt that threw ends with: a typed one as it is, else an unexpected one. */
export function attemptError(server: string, error: unknown): PatchbayError {
  return error instanceof PatchbayError ? error : new ServerConnectError(server, {
    reason: `the connection attempt failed unexpectedly: ${cleanText(error)}`,
    remedy: STEPS.unexpected,
    cause: error,
  });
}

/** Where `config`'s server is, as a status shows it: its command line or URL, secrets masked. */
export function statusTarget(config: ServerConfig, redactor: Redactor): string {
  const text = config.transport === "stdio"
    ? [config.command, ...config.args].map(quote).join(" ")
    : config.url;
  return redactor.redact(text);
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Why a request names `server`, which no entry of the configuration (`names`) has. */
export function notConfiguredError(server: string, names: string[]): ServerUnavailableError {
  const suggestion = didYouMean(server, names);
  return new ServerUnavailableError(server, "not configured", {
    reason: `there is no server named '${server}' in the configuration` +
      (suggestion ? ` (did you mean '${suggestion}'?)` : ""),
    remedy: `use one of: ${names.join(", ") || "(no servers)"}`,
  });
}
