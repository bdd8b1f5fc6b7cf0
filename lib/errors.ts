/**
 * Every failure a user can meet, as a typed error carrying its row's message (the rows,
 * with their causes and each surface's remedy, are in `lib/failure_table.ts`; the user's
 * page is docs/troubleshooting.md), the probable cause and the remedy.
 *
 * Modules throw these; only the command layer (`commands/_boundary.ts`) turns them
 * into text and exit codes.
 *
 * @module
 */

import { denoPermissionRemedy } from "./deno_permission/remedy.ts";
import { EXIT } from "./exit_codes.ts";
import {
  fill,
  type Remedy,
  remedyOf,
  type RemedyText,
  ROWS,
  type Surface,
} from "./failure_table.ts";

export type { Remedy, RemedyText, Surface };

export { EXIT };

export type { ErrorCode } from "./error_codes.ts";
import type { ErrorCode } from "./error_codes.ts";

/** What every user-facing error carries besides its message. */
export interface ErrorDetails {
  /** Why it happened, as far as patchbay could establish (the probable cause). */
  reason: string;
  /** What the user can do about it: one text, or each surface's own (lib/failure_table.ts). */
  remedy: RemedyText;
  /** Lines of supporting detail (a source excerpt, a list of problems). */
  details?: string[];
  /** The underlying error, kept for the debug log. */
  cause?: unknown;
  /** @default EXIT.failure */
  exitCode?: number;
}

/** Base of every error patchbay shows to a person. */
export class PatchbayError extends Error {
  readonly code: ErrorCode;
  readonly reason: string;
  /** The remedy as the interactive client words it. */
  readonly remedy: string;
  /** The remedy as each surface words it ({@linkcode remedyFor} picks one). */
  readonly remedies: Remedy;
  readonly details: readonly string[];
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, info: ErrorDetails) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = new.target.name;
    this.code = code;
    this.reason = info.reason;
    this.remedies = remedyOf(info.remedy);
    this.remedy = this.remedies.repl;
    this.details = info.details ?? [];
    this.exitCode = info.exitCode ?? EXIT.failure;
  }
}

/**
 * The contract's remedies as the interactive client words them (each row's remedy for
 * both surfaces is in lib/failure_table.ts's `ROWS`).
 */
export const REMEDY = {
  wrongTransport: ROWS.wrong_transport.remedy.repl,
  oauthUnsupported: ROWS.oauth_unsupported.remedy.repl,
  notRunning: ROWS.not_running.remedy.repl,
  wrongAddress: ROWS.wrong_address.remedy.repl,
  apiKey: ROWS.api_key.remedy.repl,
  oauth: ROWS.oauth.remedy.repl,
  jsonSyntax: ROWS.json_syntax.remedy.repl,
  missingField: ROWS.missing_field.remedy.repl,
  oversize: ROWS.answer_too_large.remedy.repl,
  tool: ROWS.tool.remedy.repl,
  filePermission: ROWS.file_permission.remedy.repl,
  store: ROWS.store.remedy.repl,
  rateLimit: ROWS.rate_limit.remedy.repl,
  timeout: ROWS.timeout.remedy.repl,
  network: ROWS.network.remedy.repl,
} as const;

/**
 * The remedy of `error` (or a remedy) worded for `surface`: a scripting command's names no
 * slash command. A plain string reads the same on both.
 */
export function remedyFor(error: PatchbayError | RemedyText, surface: Surface): string {
  return (error instanceof PatchbayError ? error.remedies : remedyOf(error))[surface];
}

/** `Failed to connect to server '<name>': Session terminated`, with a diagnosed cause. */
export class ServerConnectError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: ErrorDetails) {
    super("server_connect_failed", fill(ROWS.not_running.messages[0], { server }), info);
    this.server = server;
  }
}

/** The key is missing or cannot be a key for this provider; raised before any request. */
export class InvalidApiKeyError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("invalid_api_key", ROWS.api_key.messages[0], {
      reason,
      remedy: ROWS.api_key.remedy,
      cause,
    });
  }
}

/** The provider refused the key (HTTP 401/403). */
export class AuthenticationFailedError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("authentication_failed", ROWS.api_key.messages[1], {
      reason,
      remedy: ROWS.api_key.remedy,
      cause,
    });
  }
}

/** The OAuth flow for an MCP server could not complete. */
export class OAuthFailedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: Omit<ErrorDetails, "remedy"> & { remedy?: RemedyText }) {
    super("oauth_failed", fill(ROWS.oauth.messages[0], { server }), {
      ...info,
      remedy: info.remedy ?? ROWS.oauth.remedy,
    });
    this.server = server;
  }
}

/** Where a configuration problem sits in its file. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** One problem found in a configuration file. */
export interface ConfigProblem {
  /** Dotted field path (`mcpServers.fs.args[0]`), empty for the whole file. */
  path: string;
  message: string;
  position?: SourcePosition;
  /** A likely fix for this one problem, e.g. a did-you-mean. */
  hint?: string;
}

/** The file is not strict JSON (`JSON decode error`). */
export class ConfigSyntaxError extends PatchbayError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];
  constructor(file: string, problems: ConfigProblem[], details: string[]) {
    const first = problems[0];
    const where = first.position
      ? ` at line ${first.position.line}, column ${first.position.column}`
      : "";
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
    const [invalid, decode] = ROWS.json_syntax.messages;
    super(
      "config_syntax",
      fill(invalid, { problem: `${first.message}${where} of ${file}${more}` }),
      {
        reason: fill(decode, { problem: first.hint ?? first.message }),
        remedy: ROWS.json_syntax.remedy,
        details,
      },
    );
    this.file = file;
    this.problems = problems;
  }
}

/** The JSON parsed but breaks the schema: missing fields, wrong types, unknown keys. */
export class ConfigValidationError extends PatchbayError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];
  constructor(file: string, problems: ConfigProblem[], details: string[]) {
    const missing = problems.filter((p) => p.message.startsWith("Missing required field"));
    const only = problems.length === 1 ? problems[0] : undefined;
    const headline = only
      ? (only.path && !only.message.includes(only.path) ? `${only.path}: ` : "") + only.message
      : `${problems.length} problems in ${file}`;
    super("config_invalid", `Invalid configuration: ${headline}`, {
      reason: problems.length === 1
        ? `${file}: ${problems[0].hint ?? problems[0].message}`
        : `${file} does not match the configuration schema`,
      remedy: missing.length > 0 && missing.length === problems.length
        ? ROWS.missing_field.remedy
        : "correct each field listed; docs/configuration.md gives every " +
          "field, its type and its default",
      details,
    });
    this.file = file;
    this.problems = problems;
  }
}

/** The configuration file does not exist. */
export class ConfigNotFoundError extends PatchbayError {
  constructor(file: string, reason: string, remedy: string, cause?: unknown) {
    super("config_not_found", `Invalid configuration: ${file} not found`, {
      reason,
      remedy,
      cause,
    });
  }
}

/**
 * A tool call failed or the server reported an error result. `remedy` fits the kind of
 * failure when the caller knows it (the agent does); the contract's general one otherwise.
 */
export class ToolExecutionError extends PatchbayError {
  constructor(
    tool: string,
    reason: string,
    cause?: unknown,
    remedy: RemedyText = ROWS.tool.remedy,
  ) {
    super("tool_failed", fill(ROWS.tool.messages[0], { tool }), { reason, remedy, cause });
  }
}

/** A tool call ran past `AgentConfig.tool_call_timeout`. */
export class ToolTimeoutError extends PatchbayError {
  constructor(tool: string, seconds: number, remedy: RemedyText = ROWS.tool.remedy) {
    super("tool_timeout", fill(ROWS.tool.messages[1], { tool, seconds }), {
      reason: `the call exceeded AgentConfig.tool_call_timeout (${seconds} s) and was cancelled`,
      remedy,
    });
  }
}

/** The operating system refused access to a file. */
export class PermissionDeniedError extends PatchbayError {
  constructor(what: string, reason: string, remedy: RemedyText = ROWS.file_permission.remedy) {
    super("permission_denied", fill(ROWS.file_permission.messages[0], { what }), {
      reason,
      remedy,
    });
  }
}

/** Deno's sandbox refused an operation: names the flag that would allow it. */
export class DenoPermissionError extends PatchbayError {
  readonly flag: string;
  constructor(flag: string, what: string, cause?: unknown) {
    super("deno_permission", `Permission denied: ${what}`, {
      reason: `patchbay runs under explicit Deno permissions and ${flag} was not granted`,
      remedy: denoPermissionRemedy(flag),
      cause,
    });
    this.flag = flag;
  }
}

/**
 * `Could not connect to <store> at <target>: <problem>`: the memory store is unreachable or
 * refused us. `explain` gives a longer probable cause and a remedy fitted to the problem.
 */
export class StoreConnectError extends PatchbayError {
  readonly store: string;
  readonly target: string;
  /** What went wrong, the end of the message (`connection refused`). */
  readonly problem: string;
  constructor(
    store: string,
    target: string,
    problem: string,
    cause?: unknown,
    explain: { reason?: string; remedy?: RemedyText } = {},
  ) {
    super("store_unreachable", fill(ROWS.store.messages[0], { store, target, problem }), {
      reason: explain.reason ?? problem,
      remedy: explain.remedy ?? ROWS.store.remedy,
      cause,
    });
    this.store = store;
    this.target = target;
    this.problem = problem;
  }
}

/** The provider's rate limit: `Rate limit exceeded` / `Too many requests`. */
export class RateLimitError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("rate_limited", ROWS.rate_limit.messages[0], {
      reason,
      remedy: ROWS.rate_limit.remedy,
      cause,
    });
  }
}

/** `Connection timeout` (nothing established) or `Request timeout` (no answer in time). */
export class TimeoutError extends PatchbayError {
  constructor(
    kind: "Connection timeout" | "Request timeout",
    reason: string,
    remedy: RemedyText = ROWS.timeout.remedy,
  ) {
    super("timeout", kind, { reason, remedy });
  }
}

/** `Connection refused` / `Network unreachable` on the way to a provider or server. */
export class NetworkError extends PatchbayError {
  constructor(
    kind: "Connection refused" | "Network unreachable",
    reason: string,
    remedy: RemedyText = ROWS.network.remedy,
    cause?: unknown,
  ) {
    super("network", kind, { reason, remedy, cause });
  }
}

/** A session limit from AgentConfig was reached. */
export class LimitReachedError extends PatchbayError {
  constructor(limit: string, reason: string, remedy: RemedyText) {
    super("limit_reached", `Limit reached: ${limit}`, { reason, remedy });
  }
}

/** The user cancelled (Ctrl+C / abort). */
export class CancelledError extends PatchbayError {
  constructor(what = "the operation") {
    super("cancelled", `Cancelled: ${what}`, {
      reason: "interrupted by the user",
      remedy: "run it again when ready",
      exitCode: EXIT.interrupted,
    });
  }
}

/** The command line was wrong. */
export class UsageError extends PatchbayError {
  constructor(message: string, remedy = "run `patchbay --help` for usage") {
    super("usage", message, {
      reason: "the command line could not be understood",
      remedy,
      exitCode: EXIT.usage,
    });
  }
}

// ---- The model provider, the agent loop and sampling ----

/**
 * The provider answered a model request with an error that is neither about the key nor
 * about rate limits: an unknown model, a request it would not take, a server fault.
 */
export class ProviderRequestError extends PatchbayError {
  /** HTTP status, when the provider answered at all. */
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, info: ErrorDetails) {
    super("provider_error", message, info);
    this.status = status;
  }
}

/** The model's answer stopped mid-stream and every retry was spent. */
export class ConnectionLostError extends PatchbayError {
  constructor(reason: string, remedy: RemedyText, cause?: unknown) {
    super("network", "Connection lost: the model's answer stopped before it was complete", {
      reason,
      remedy,
      cause,
    });
  }
}

/**
 * A server's `sampling/createMessage` request was refused (by the user, or by the server's
 * `sampling` setting). Connection code answers it with JSON-RPC error {@linkcode jsonRpcCode},
 * the code the MCP specification gives a user's rejection.
 */
export class SamplingRejectedError extends PatchbayError {
  readonly server: string;
  readonly jsonRpcCode = -1;
  constructor(server: string, reason: string, remedy: string) {
    super("sampling_rejected", `Sampling request from server '${server}' rejected`, {
      reason,
      remedy,
    });
    this.server = server;
  }
}

// ── OAuth and bearer headers ──────────────────────────────────────────────────

/**
 * `auth.method: oauth` on a server that does not support OAuth (docs/troubleshooting.md): it
 * publishes neither protected-resource nor authorization-server metadata. Raised by the
 * OAuth provider and recognised by the connection diagnosis, so both report it alike.
 */
export class OAuthUnsupportedError extends ServerConnectError {
  constructor(server: string, reason: string, cause?: unknown) {
    super(server, { reason, remedy: ROWS.oauth_unsupported.remedy, cause });
  }
}

/** The server refused the bearer token sent with `headers.Authorization`. */
export class BearerRejectedError extends ServerConnectError {
  /** The HTTP status the server answered with (401 or 403). */
  readonly status: number;
  constructor(server: string, status: number, reason: string, remedy: RemedyText) {
    super(server, { reason, remedy });
    this.status = status;
  }
}

/**
 * An address a server's OAuth metadata named (an endpoint, a metadata URL, a redirect)
 * that patchbay refuses to request or open: a file: URL, plain http off this machine, or
 * this machine or its network named by a server that is not on it
 * (lib/oauth/endpoint_policy.ts). Raised before the request, and before any browser opens.
 */
export class OAuthEndpointRefusedError extends OAuthFailedError {
  /** What the address is: `token_endpoint`, `resource_metadata`, `a redirect`, … */
  readonly endpoint: string;
  /** The address as it was given. */
  readonly url: string;
  /** The addresses its host resolved to (the literal for an IP address; none if unresolved). */
  readonly addresses: readonly string[];
  constructor(
    server: string,
    info:
      & { endpoint: string; url: string; addresses: readonly string[] }
      & Omit<
        ErrorDetails,
        "exitCode"
      >,
  ) {
    super(server, info);
    this.endpoint = info.endpoint;
    this.url = info.url;
    this.addresses = info.addresses;
  }
}

// Connections: failures of servers after, or instead of, connecting.

/** A server is configured but not connected now (failed, reconnecting, disabled, closed). */
export class ServerUnavailableError extends PatchbayError {
  readonly server: string;
  constructor(server: string, state: string, info: Omit<ErrorDetails, "exitCode">) {
    super("server_unavailable", `Server '${server}' is not connected (${state})`, info);
    this.server = server;
  }
}

/** The connection to a server closed while a request was waiting for its answer. */
export class ConnectionClosedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, what: string, info: Omit<ErrorDetails, "exitCode">) {
    super(
      "connection_closed",
      `Connection closed: server '${server}' went away during ${what}`,
      info,
    );
    this.server = server;
  }
}

/**
 * A server still connecting when the person pressed Ctrl+C to go on without it: its
 * attempt was stopped, and the command goes on with the servers that did connect.
 */
export class ConnectSkippedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, seconds: number) {
    super("cancelled", `Skipped server '${server}': still connecting after ${seconds} s`, {
      reason: "Ctrl+C was pressed while patchbay waited for it; its connection attempt was " +
        "stopped and the command went on without it",
      remedy: 'run it again and let the server connect (raise "timeout" in its entry if it ' +
        "is slow to start); `patchbay doctor` checks it on its own",
    });
    this.server = server;
  }
}

/** A server answered a request (other than a tool call) with an error. */
export class ServerRequestError extends PatchbayError {
  readonly server: string;
  /** The JSON-RPC error code, when the server sent one. */
  readonly rpcCode?: number;
  constructor(
    server: string,
    what: string,
    info: Omit<ErrorDetails, "exitCode">,
    rpcCode?: number,
  ) {
    super("server_request_failed", `Server '${server}' could not ${what}`, info);
    this.server = server;
    this.rpcCode = rpcCode;
  }
}

// Conversation memory (lib/memory).

/** The password (or ACL user) was rejected, or the store wants one and none was given. */
export class StoreAuthError extends StoreConnectError {}

/** `REDIS_DB` names a database the server does not have. */
export class StoreDatabaseError extends StoreConnectError {}

/** The memory settings (REDIS_* variables, `Memory` section) cannot be used as written. */
export class MemoryConfigError extends PatchbayError {
  constructor(problem: string, remedy: string, reason: string = problem) {
    super("config_invalid", `Invalid configuration: ${problem}`, { reason, remedy });
  }
}

/** The store works but refused an operation, or holds data this version cannot read. */
export class StoreFailedError extends PatchbayError {
  constructor(message: string, info: ErrorDetails) {
    super("store_failed", message, info);
  }
}

/** `--resume <id>` or `patchbay sessions show <id>` named no stored session. */
export class SessionNotFoundError extends PatchbayError {
  constructor(message: string, reason: string, remedy: string) {
    super("session_not_found", message, { reason, remedy });
  }
}

// OAuth wiring: OAuth and the connection layer together.

/**
 * An HTTP server found unusable by the request OAuth sends before a login (unreachable,
 * no endpoint at the URL, a server error). Reported as it is by `patchbay auth login`; in
 * a session the connection diagnosis looks further (which port, which path), so the
 * failure reads the same as for an entry without OAuth.
 */
export class ServerProbeFailedError extends ServerConnectError {}

// The doctor and Deno permissions.

/**
 * An OAuth server needs a browser login, and this run may not start one: `patchbay doctor`
 * checks what a session would meet but never logs in.
 */
export class OAuthLoginRequiredError extends OAuthFailedError {
  constructor(server: string, reason: string) {
    super(server, {
      reason,
      remedy: `log in now with \`patchbay auth login ${server}\`, or let the next session open ` +
        "the browser (the callback arrives at http://localhost:3000/callback)",
    });
  }
}

// The agent's tool calls.

/** A tool call that was not approved, so it never ran. */
export class ToolDeclinedError extends PatchbayError {
  constructor(tool: string, reason: string, remedy: string) {
    super("tool_declined", `Tool call declined: ${tool}`, { reason, remedy });
  }
}

/** The message of anything thrown (an `Error`'s message, else its text). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** JSON-RPC's code for a method the server does not have. */
const METHOD_NOT_FOUND = -32601;

/** Why a mention could not be read, and what to do, from what its read threw. */
function mentionFailure(server: string, cause: unknown): { reason: string; remedy: RemedyText } {
  const unsent = "the message was not sent";
  // "Method not found": the server has no resources at all, whatever the URI.
  if (cause instanceof ServerRequestError && cause.rpcCode === METHOD_NOT_FOUND) {
    return {
      reason: `${server} offers no resources (it answered resources/read with ` +
        `${METHOD_NOT_FOUND}: method not found); ${unsent}`,
      remedy: {
        repl: "remove the mention and send the message again (ask for the content in words " +
          "and the model can use the server's tools); /resources lists the servers' resources",
        script: "remove the mention and run the command again (ask for the content in words " +
          "and the model can use the server's tools); `patchbay resources` lists the servers' " +
          "resources",
      },
    };
  }
  if (!(cause instanceof PatchbayError)) {
    const why = cause instanceof Error ? cause.message : String(cause);
    return { reason: `${server} answered: ${why}; ${unsent}`, remedy: checkTheUri(server) };
  }
  return {
    reason: `${cause.message}${cause.reason ? `: ${cause.reason}` : ""}; ${unsent}`,
    remedy: cause.code !== "server_request_failed" ? cause.remedies : checkTheUri(server),
  };
}

function checkTheUri(server: string): RemedyText {
  return {
    repl: `check the URI with /resources or \`patchbay resources\` (in the REPL, Tab after ` +
      `@${server}: completes it), or remove the mention and send the message again`,
    script: `check the URI with \`patchbay resources ${server}\`, or remove the mention and ` +
      "run the command again",
  };
}

/**
 * A resource a message mentioned (`@server:uri`) could not be read; the message was not
 * sent, so nothing reached the model or the conversation.
 */
export class MentionReadError extends PatchbayError {
  readonly server: string;
  readonly uri: string;
  constructor(server: string, uri: string, cause: unknown) {
    super("server_request_failed", `Could not read @${server}:${uri}`, {
      ...mentionFailure(server, cause),
      cause,
    });
    this.server = server;
    this.uri = uri;
  }
}

/**
 * A configuration, `.env` or folder of patchbay that others may write: refused, as ssh
 * refuses a shared `authorized_keys` (`lib/shared_writable.ts` decides).
 */
export class SharedWritableError extends PatchbayError {
  /** The path whose mode lets others write: the one refused, or a folder holding it. */
  readonly writable: string;
  constructor(
    what: string,
    path: string,
    found: {
      path: string;
      mode: number;
      kind: "file" | "folder";
      writers: string;
      chmod: string;
    },
  ) {
    const octal = `0${found.mode.toString(8).padStart(3, "0")}`;
    const where = found.path === path
      ? `the ${found.kind}`
      : found.kind === "file"
      ? `the file it links to, ${found.path},`
      : `the folder holding it, ${found.path},`;
    super(
      "permission_denied",
      `Refusing to use ${what} ${path}: other users may write it`,
      {
        reason: `${where} is writable by ${found.writers} (mode ${octal}), so another local ` +
          "user could change what patchbay runs or trusts; patchbay uses only files and " +
          "folders that their owner alone may write",
        remedy: `run \`${found.chmod}\` (and check that nobody changed it meanwhile)`,
      },
    );
    this.writable = found.path;
  }
}

/** A command ended by SIGTERM, SIGHUP or SIGQUIT, after its servers were ended. */
export class EndedBySignalError extends PatchbayError {
  constructor(signal: string, exitCode: number) {
    super("cancelled", `Ended by ${signal}`, {
      reason: signal === "SIGHUP"
        ? "the terminal closed, or the process was sent SIGHUP"
        : `the process was sent ${signal}`,
      remedy: "run the command again",
      exitCode,
    });
  }
}

/**
 * A conversation another patchbay process has open (it holds its lease): opening it too
 * would interleave the two processes' turns.
 */
export class ConversationHeldError extends PatchbayError {
  readonly sessionId: string;
  readonly holder: { pid: number; since: string };
  constructor(
    sessionId: string,
    holder: { pid: number; since: string },
    expiresInMs: number,
  ) {
    super("usage", `Conversation ${sessionId} is open in another patchbay`, {
      reason: `patchbay process ${holder.pid} has had it open since ${holder.since}; two ` +
        "processes writing one conversation would interleave their turns (if that process " +
        `has ended without closing it, it is free within ${Math.ceil(expiresInMs / 1000)} s)`,
      remedy: "continue it there, or start patchbay --resume " + sessionId +
        " at a terminal, which offers to continue it as a new branch (a copy under a new id)",
    });
    this.sessionId = sessionId;
    this.holder = holder;
  }
}
