/**
 * Every failure a user can meet, as a typed error carrying the contract's message
 * (docs/troubleshooting.md), the probable cause and the remedy.
 *
 * Modules throw these; only the command layer (`commands/_boundary.ts`) turns them
 * into text and exit codes, so wording lives here and nowhere else.
 *
 * @module
 */

import { permissionRemedy } from "./permissions/remedy.ts";

/** Exit codes shared by every command. */
export const EXIT = {
  ok: 0,
  /** The command ran and something failed (a check, a connection, a tool). */
  failure: 1,
  /** The command line itself was wrong (unknown flag, missing argument). */
  usage: 2,
  /** Interrupted by the user (Ctrl+C), as shells report SIGINT. */
  interrupted: 130,
  /** The reader of our output went away (`| head`), as shells report SIGPIPE. */
  brokenPipe: 141,
  /** Asked to stop (SIGTERM), as shells report it. */
  terminated: 143,
} as const;

/** Stable identifiers for `--json` output and tests; never shown as prose. */
export type ErrorCode =
  | "server_connect_failed"
  | "server_unavailable"
  | "connection_closed"
  | "server_request_failed"
  | "invalid_api_key"
  | "authentication_failed"
  | "oauth_failed"
  | "config_syntax"
  | "config_invalid"
  | "config_not_found"
  | "tool_failed"
  | "tool_timeout"
  | "tool_declined"
  | "permission_denied"
  | "deno_permission"
  | "store_unreachable"
  | "store_failed"
  | "session_not_found"
  | "rate_limited"
  | "timeout"
  | "network"
  | "usage"
  | "cancelled"
  | "limit_reached"
  | "provider_error"
  | "sampling_rejected"
  | "internal";

/** What every user-facing error carries besides its message. */
export interface ErrorDetails {
  /** Why it happened, as far as patchbay could establish (the probable cause). */
  reason: string;
  /** What the user can do about it. */
  remedy: string;
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
  readonly remedy: string;
  readonly details: readonly string[];
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, info: ErrorDetails) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = new.target.name;
    this.code = code;
    this.reason = info.reason;
    this.remedy = info.remedy;
    this.details = info.details ?? [];
    this.exitCode = info.exitCode ?? EXIT.failure;
  }
}

/** The contract's remedies, worded once. */
export const REMEDY = {
  wrongTransport: "use the transport the server documents (transport_type stdio, " +
    "streamable_http or sse) in servers_config.json",
  oauthUnsupported: 'remove "auth" from the server entry and send a token with ' +
    '"headers": {"Authorization": "Bearer <ACCESS_TOKEN>"} instead',
  notRunning: "start the server first, then the client (or run /refresh once it is up)",
  wrongAddress: 'check the address and port the server really listens on and fix "url"',
  apiKey: "set LLM_API_KEY in .env or the environment to a valid key for the provider, " +
    "then restart patchbay (.env is read only at start-up)",
  oauth: "free port 3000, open the printed authorization URL by hand if no browser opened, " +
    "and allow connections to localhost",
  jsonSyntax: "fix the file at the position shown; `patchbay config check` (or any JSON " +
    "validator) re-checks it",
  missingField: 'add the field; "mcpServers" may be an empty object {}',
  oversize: "the server produced an answer too large to handle; ask less of it at once, or " +
    "report it to the server's authors",
  tool: "raise AgentConfig.tool_call_timeout if the tool is slow, run /debug for details, " +
    "and check the tool exists with /tools",
  filePermission: "fix the file's permissions (chmod/chown) so the server process can read it",
  store: "start the store, fix the REDIS_* variables (host, port, db, password), " +
    "or turn persistence off with /memory",
  rateLimit: "lower AgentConfig.request_limit and total_tokens_limit, wait, or switch " +
    "provider; /api_stats shows what was used",
  timeout: 'raise "timeout" (and "sse_read_timeout" for event streams) in the server ' +
    "entry, and test that the host is reachable",
  network: "open the needed port (and outbound 443 for hosted providers); behind a corporate " +
    "proxy set HTTPS_PROXY",
} as const;

/**
 * Where an error is shown: the interactive client (`repl`), where slash commands exist, or
 * a scripting command (`script`: `run`, `call`, `tools`, `sessions`, `doctor`, …), where a
 * remedy naming `/refresh` or `/memory` would send the person to a command they cannot type.
 */
export type Surface = "repl" | "script";

/**
 * The interactive client's commands in remedies, and what a scripting command offers
 * instead (or nothing, when the advice has no counterpart there). Applied in this order.
 */
const SCRIPT_REMEDIES: readonly (readonly [RegExp, string])[] = [
  [/ \(or run \/refresh once it is up\)/g, ""],
  [/; \/api_stats shows what was used/g, ""],
  [
    /patchbay restarts the server by itself \(see \/connections\); run the request again once it is connected, or use \/refresh/g,
    "run the command again once the server is up",
  ],
  [
    /run \/debug for details and retry; \/refresh reconnects the server/g,
    "run the command again with --debug for details",
  ],
  [
    /retry with \/refresh; if it keeps failing, run \/debug/g,
    "run the command again; if it keeps failing, add --debug",
  ],
  [/then retry with \/refresh/g, "then run the command again"],
  [/run \/debug and \/refresh/g, "run the command again with --debug"],
  [/turn persistence off with \/memory/g, 'turn persistence off with "Memory": {"backend": "off"}'],
  [/run \/debug for details/g, "run again with --debug for details"],
  [/check the tool exists with \/tools/g, "check the tool exists with `patchbay tools`"],
  [/run \/refresh to connect it/g, "run the command again"],
  [/retry the login \(\/refresh, or (patchbay auth login [^)]+)\)/g, "retry the login ($1)"],
  [/\(or run \/refresh\)/g, ""],
];

/** `remedy` worded for `surface`: the slash commands it names replaced for scripts. */
export function remedyFor(remedy: string, surface: Surface): string {
  if (surface === "repl") return remedy;
  return SCRIPT_REMEDIES.reduce(
    (text, [pattern, replacement]) => text.replace(pattern, replacement),
    remedy,
  );
}

/** `Failed to connect to server '<name>': Session terminated`, with a diagnosed cause. */
export class ServerConnectError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: ErrorDetails) {
    super(
      "server_connect_failed",
      `Failed to connect to server '${server}': Session terminated`,
      info,
    );
    this.server = server;
  }
}

/** The key is missing or cannot be a key for this provider; raised before any request. */
export class InvalidApiKeyError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("invalid_api_key", "Invalid API key", { reason, remedy: REMEDY.apiKey, cause });
  }
}

/** The provider refused the key (HTTP 401/403). */
export class AuthenticationFailedError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("authentication_failed", "Authentication failed", {
      reason,
      remedy: REMEDY.apiKey,
      cause,
    });
  }
}

/** The OAuth flow for an MCP server could not complete. */
export class OAuthFailedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: Omit<ErrorDetails, "remedy"> & { remedy?: string }) {
    super("oauth_failed", `OAuth authentication failed for server '${server}'`, {
      ...info,
      remedy: info.remedy ?? REMEDY.oauth,
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
    super("config_syntax", `Invalid configuration: ${first.message}${where} of ${file}${more}`, {
      reason: `JSON decode error: ${first.hint ?? first.message}`,
      remedy: REMEDY.jsonSyntax,
      details,
    });
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
        ? REMEDY.missingField
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
  constructor(tool: string, reason: string, cause?: unknown, remedy: string = REMEDY.tool) {
    super("tool_failed", `Tool execution failed: ${tool}`, { reason, remedy, cause });
  }
}

/** A tool call ran past `AgentConfig.tool_call_timeout`. */
export class ToolTimeoutError extends PatchbayError {
  constructor(tool: string, seconds: number, remedy: string = REMEDY.tool) {
    super("tool_timeout", `Tool timeout: ${tool} did not finish within ${seconds} s`, {
      reason: `the call exceeded AgentConfig.tool_call_timeout (${seconds} s) and was cancelled`,
      remedy,
    });
  }
}

/** The operating system refused access to a file. */
export class PermissionDeniedError extends PatchbayError {
  constructor(what: string, reason: string, remedy: string = REMEDY.filePermission) {
    super("permission_denied", `Permission denied: ${what}`, { reason, remedy });
  }
}

/** Deno's sandbox refused an operation: names the flag that would allow it. */
export class DenoPermissionError extends PatchbayError {
  readonly flag: string;
  constructor(flag: string, what: string, cause?: unknown) {
    super("deno_permission", `Permission denied: ${what}`, {
      reason: `patchbay runs under explicit Deno permissions and ${flag} was not granted`,
      remedy: permissionRemedy(flag),
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
    explain: { reason?: string; remedy?: string } = {},
  ) {
    super("store_unreachable", `Could not connect to ${store} at ${target}: ${problem}`, {
      reason: explain.reason ?? problem,
      remedy: explain.remedy ?? REMEDY.store,
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
    super("rate_limited", "Rate limit exceeded (Too many requests)", {
      reason,
      remedy: REMEDY.rateLimit,
      cause,
    });
  }
}

/** `Connection timeout` (nothing established) or `Request timeout` (no answer in time). */
export class TimeoutError extends PatchbayError {
  constructor(
    kind: "Connection timeout" | "Request timeout",
    reason: string,
    remedy = REMEDY.timeout,
  ) {
    super("timeout", kind, { reason, remedy });
  }
}

/** `Connection refused` / `Network unreachable` on the way to a provider or server. */
export class NetworkError extends PatchbayError {
  constructor(
    kind: "Connection refused" | "Network unreachable",
    reason: string,
    remedy: string = REMEDY.network,
    cause?: unknown,
  ) {
    super("network", kind, { reason, remedy, cause });
  }
}

/** A session limit from AgentConfig was reached. */
export class LimitReachedError extends PatchbayError {
  constructor(limit: string, reason: string, remedy: string) {
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
  constructor(reason: string, remedy: string, cause?: unknown) {
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
    super(server, { reason, remedy: REMEDY.oauthUnsupported, cause });
  }
}

/** The server refused the bearer token sent with `headers.Authorization`. */
export class BearerRejectedError extends ServerConnectError {
  /** The HTTP status the server answered with (401 or 403). */
  readonly status: number;
  constructor(server: string, status: number, reason: string, remedy: string) {
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
