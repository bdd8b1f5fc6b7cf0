/**
 * Why a server did not connect, established by looking, never guessed: the evidence the
 * stdio transport collected (spawn error, exit status, stderr, stray stdout, listening
 * ports) and probes of the configured address (TCP, HTTP, MCP, OAuth metadata).
 *
 * The result is a {@linkcode ServerConnectError} carrying CONTRACT.md section 7's message,
 * `Failed to connect to server '<name>': Session terminated`, with the probable cause and
 * remedy (or `OAuth authentication failed` when a configured OAuth login did not
 * succeed); raw runtime texts ("fetch failed", an HTML page) never reach it.
 *
 * @module
 */

import { SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import type { HttpServerConfig, ServerConfig, StdioServerConfig } from "../config/types.ts";
import {
  OAuthFailedError,
  PatchbayError,
  REMEDY,
  ServerConnectError,
  ServerProbeFailedError,
} from "../errors.ts";
import { denoPermissionFlag } from "../permissions/denial.ts";
import {
  hostOf,
  type Network,
  portOf,
  PROCESS_NETWORK,
  proxyName,
  type ProxySettings,
} from "../proxy.ts";
import { negotiationFailure } from "../protocol.ts";
import { abridge } from "../text.ts";
import type { HttpCloseReason } from "../transports/http.ts";
import type { StdioEvidence } from "../transports/stdio.ts";
import { hasProcFs, listeningPorts, processTree } from "../transports/process.ts";
import { errorChain, netLabel, netReason } from "../failure.ts";
import {
  htmlTitle,
  type HttpAnswer,
  isJsonRpcAnswer,
  jsonRpcErrorMessage,
  type McpProbe,
  type NetFailure,
  probeOAuthMetadata,
  probeRawHttp,
  probeSse,
  probeStreamable,
  probeTcp,
} from "./probe.ts";
import { permissionRemedy, startedByLauncher } from "../permissions/remedy.ts";

/** Stderr lines shown with a failure (the log keeps them all). */
export const DIAGNOSIS_STDERR_LINES = 8;

/** Deadline of each probe a diagnosis makes: diagnosis must stay quick. */
export const DIAGNOSIS_PROBE_MS = 1000;

/**
 * A line announcing a listening port ("listening on port 3001", "running at
 * http://localhost:8080"): where `/proc` cannot be read, the only hint of which port a
 * process serves.
 */
const LISTENING_ANNOUNCEMENT =
  /\b(?:listen\w*|running|serving|started|available)\b[^\n]*?(?:https?:\/\/[\w.[\]-]+:(\d{2,5})\b|\bport\s+(\d{2,5})\b)/gi;

/** Ports of a stdio process probed for an HTTP server, at most. */
const MAX_PORTS_PROBED = 4;

/** What was known when a connection attempt failed. */
export interface FailureContext {
  server: ServerConfig;
  /** What the attempt threw. */
  error: unknown;
  /** The attempt ran out of time (the server's `timeout`). */
  timedOut: boolean;
  /** For stdio entries: what the process did. */
  stdio?: StdioEvidence;
  /** For HTTP entries: why the transport closed, if it closed itself. */
  httpClose?: HttpCloseReason;
  /** @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
  /** How the server is reached (its proxy); the probes go the same way. @default PROCESS_NETWORK */
  network?: Network;
}

/**
 * The diagnosed failure. An error already typed by patchbay is kept as it is (the OAuth
 * provider's, a refused bearer token), except a server found unusable by the request OAuth
 * sends before a login: that one is diagnosed like any other entry's.
 */
export async function diagnose(context: FailureContext): Promise<PatchbayError> {
  const typed = typedCause(context.error);
  if (typed) return typed;
  const flag = denoPermissionFlag(context.error) ??
    denoPermissionFlag(context.stdio?.spawnError);
  if (flag) return permissionDenied(context.server, flag, context.error);
  // The server answered, but no protocol revision suits both sides: say which each offered.
  const negotiation = negotiationFailure(context.error, context.server);
  if (negotiation) {
    return new ServerConnectError(context.server.name, {
      ...negotiation,
      details: context.stdio ? stderrDetails(context.stdio) : [],
      cause: context.error,
    });
  }
  return context.server.transport === "stdio"
    ? await diagnoseStdio(context.server, context)
    : await diagnoseHttp(context.server, context);
}

/**
 * The error patchbay typed itself (a refused bearer token, an OAuth failure), also when
 * the SDK wrapped it: its version probe reports what the first request threw as the
 * probe's failure, with the original as `cause`.
 */
function typedCause(error: unknown): PatchbayError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PatchbayError) {
      return current instanceof ServerProbeFailedError ? undefined : current;
    }
    current = current.cause;
  }
  return undefined;
}

function permissionDenied(server: ServerConfig, flag: string, cause: unknown): ServerConnectError {
  return new ServerConnectError(server.name, {
    reason: `Permission denied: patchbay runs under explicit Deno permissions and ${flag} ` +
      "was not granted",
    remedy: startedByLauncher()
      ? permissionRemedy(flag)
      : `add ${flag} to the deno run / deno install command`,
    cause,
  });
}

// ---------------------------------------------------------------------------- stdio

async function diagnoseStdio(
  server: StdioServerConfig,
  context: FailureContext,
): Promise<ServerConnectError> {
  const evidence = context.stdio ?? { stderrTail: [], stdoutNoise: [], messagesReceived: 0 };
  const fail = (reason: string, remedy: string, details: string[] = []) =>
    new ServerConnectError(server.name, {
      reason,
      remedy,
      details: [...details, ...stderrDetails(evidence)],
      cause: context.error,
    });

  if (evidence.spawnError) return spawnFailure(server, evidence.spawnError);
  if (evidence.closeReason?.kind === "oversize") {
    return fail(
      `the server sent a message of more than ${megabytes(evidence.closeReason.limit)} ` +
        "(patchbay's cap for one message)",
      REMEDY.oversize,
    );
  }

  const commandLine = shellLine(server.command, server.args);
  const exit = evidence.exit ??
    (evidence.closeReason?.kind === "exited" ? evidence.closeReason : undefined);
  if (exit) {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const noise = evidence.stdoutNoise.length > 0
      ? `; it printed on stdout: "${abridge(evidence.stdoutNoise[0], 120)}"`
      : "";
    return fail(
      `the server process ${how} before completing the MCP handshake${noise}` +
        (evidence.stderrTail.length > 0 ? " (its error output is above)" : ""),
      `run the command by hand to see why: ${commandLine}; fix what its error output says ` +
        '(variables it needs go in the entry\'s "env")',
    );
  }

  if (evidence.closeReason?.kind === "stdout_closed") {
    return fail(
      "the server process closed its stdout without answering",
      `run the command by hand to see why: ${commandLine}`,
    );
  }

  const http = await httpBehindProcess(evidence, context.probeTimeoutMs);
  if (http) return wrongTransportStdio(server, http, evidence, context.error);

  if (evidence.stdoutNoise.length > 0 && evidence.messagesReceived === 0) {
    return fail(
      `the process printed text that is not MCP JSON-RPC on stdout ` +
        `("${abridge(evidence.stdoutNoise[0], 120)}") and never answered initialize` +
        (context.timedOut ? ` within ${server.timeoutSeconds} s` : ""),
      `${REMEDY.wrongTransport}; if the program does speak stdio, give it the option that ` +
        "keeps its stdout for protocol messages only",
    );
  }
  if (context.timedOut) {
    return fail(
      `Connection timeout: the process started but did not answer initialize within ` +
        `${server.timeoutSeconds} s`,
      `raise "timeout" in the server entry (a first \`npx -y\` run downloads the package), ` +
        `and check that ${commandLine} starts an MCP server speaking stdio`,
    );
  }
  return fail(
    `the MCP handshake failed: ${protocolText(context.error)}`,
    `run the command by hand to check it is an MCP server speaking stdio: ${commandLine}`,
  );
}

/** Programs people run servers with, and where they come from. */
const PROVIDERS: Readonly<Record<string, string>> = {
  npx: "Node.js (npm)",
  npm: "Node.js (npm)",
  node: "Node.js",
  uvx: "uv (https://docs.astral.sh/uv/)",
  uv: "uv (https://docs.astral.sh/uv/)",
  python: "Python",
  python3: "Python",
  pipx: "pipx",
  docker: "Docker",
  deno: "Deno",
  bunx: "Bun",
  bun: "Bun",
};

function spawnFailure(server: StdioServerConfig, error: Error): ServerConnectError {
  const info = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause: error });
  if (error instanceof Deno.errors.NotFound) {
    if (server.cwd && !isDirectory(server.cwd)) {
      return info(
        `the working directory '${server.cwd}' does not exist`,
        'create it, or fix "cwd" in the server entry',
      );
    }
    if (server.command.includes("/")) {
      return info(
        `command '${server.command}' does not exist`,
        'fix the path in "command", or install the server there',
      );
    }
    const from = PROVIDERS[server.command];
    return new ServerConnectError(server.name, {
      reason: `command '${server.command}' not found on PATH`,
      remedy: (from ? `install ${from}, ` : "install it, ") +
        `or give the full path to '${server.command}' in "command"`,
      details: [`PATH: ${Deno.env.get("PATH") ?? "(unset)"}`],
      cause: error,
    });
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return info(
      `command '${server.command}' cannot be executed (permission denied)`,
      `make it executable (chmod +x ${server.command}) or point "command" at the right file`,
    );
  }
  return info(
    `command '${server.command}' could not be started: ${error.message}`,
    'check "command", "args" and "cwd" in the server entry',
  );
}

/** An MCP HTTP endpoint (or any HTTP server) run by the process instead of stdio. */
interface HttpBehindProcess {
  url: string;
  mcp?: "streamable_http" | "sse";
}

/**
 * Finds the ports the running process tree listens on (from `/proc` on Linux; elsewhere
 * from ports its output announces) and probes them for MCP over HTTP.
 */
async function httpBehindProcess(
  evidence: StdioEvidence,
  probeMs = DIAGNOSIS_PROBE_MS,
): Promise<HttpBehindProcess | undefined> {
  if (evidence.pid === undefined || evidence.exit) return undefined;
  const text = [...evidence.stdoutNoise, ...evidence.stderrTail].join("\n");
  const ports = hasProcFs()
    ? listeningPorts(processTree(evidence.pid))
    : [...text.matchAll(LISTENING_ANNOUNCEMENT)].map((m) => Number(m[1] ?? m[2]));
  let plainHttp: HttpBehindProcess | undefined;
  for (const port of [...new Set(ports)].slice(0, MAX_PORTS_PROBED)) {
    const origin = `http://127.0.0.1:${port}`;
    for (const path of ["/mcp", "/"]) {
      const probe = await probeStreamable(`${origin}${path}`, {}, probeMs);
      if (probe.kind === "streamable") return { url: `${origin}${path}`, mcp: "streamable_http" };
      if (probe.kind === "http") plainHttp ??= { url: `${origin}/` };
      if (probe.kind === "failure") break;
    }
    const sse = await probeSse(`${origin}/sse`, {}, probeMs);
    if (sse.kind === "sse") return { url: `${origin}/sse`, mcp: "sse" };
  }
  return plainHttp;
}

function wrongTransportStdio(
  server: StdioServerConfig,
  http: HttpBehindProcess,
  evidence: StdioEvidence,
  cause: unknown,
): ServerConnectError {
  const details = stderrDetails(evidence);
  if (http.mcp) {
    return new ServerConnectError(server.name, {
      reason: `wrong transport_type: the process does not speak MCP on stdio; it serves MCP ` +
        `over HTTP (${http.mcp}) at ${http.url}, found by probing`,
      remedy: `${REMEDY.wrongTransport}: for this mode run the server separately and set ` +
        `"transport_type": "${http.mcp}", "url": "${http.url}" — or start it in its stdio mode`,
      details,
      cause,
    });
  }
  return new ServerConnectError(server.name, {
    reason: "wrong transport_type: the process started an HTTP server" +
      (http.url ? ` (${http.url})` : "") + " instead of speaking MCP on stdio",
    remedy: `${REMEDY.wrongTransport}: start the program in its stdio mode, or run it ` +
      'separately and connect with "transport_type": "streamable_http" and its "url"',
    details,
    cause,
  });
}

// ----------------------------------------------------------------------------- http

async function diagnoseHttp(
  server: HttpServerConfig,
  context: FailureContext,
): Promise<PatchbayError> {
  const probeMs = context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS;
  const network = context.network ?? PROCESS_NETWORK;
  const url = new URL(server.url);
  const fail = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const address = `${url.hostname}:${portOf(url)}`;
  if (context.httpClose?.kind === "oversize") {
    return fail(context.httpClose.detail, REMEDY.oversize);
  }

  let proxy: ProxySettings | undefined;
  try {
    proxy = network.route(url);
  } catch (error) {
    return fail(
      `${(error as Error).message}: patchbay cannot send requests for ${url.origin} through it`,
      "set the variable to the proxy's address, e.g. http://proxy.example.com:3128 (in .env " +
        "or the environment), or remove it; NO_PROXY lists hosts to reach directly",
    );
  }
  if (proxy) {
    // Requests go to the proxy, not the server: a proxy that is down must be named as
    // such, never mistaken for the server not running.
    const proxyUrl = new URL(proxy.url);
    const reach = await probeTcp(hostOf(proxyUrl), portOf(proxyUrl), probeMs);
    if (!reach.ok) return proxyUnreachable(server, proxy, reach, context);
  } else {
    const tcp = await probeTcp(hostOf(url), portOf(url), probeMs);
    if (!tcp.ok) return networkFailure(server, tcp, address, context);
  }

  // An OAuth entry's requests carry a token the probes below cannot send: when the server
  // answered the session's own request, that answer is the evidence, not the 401 a probe
  // without the token would get.
  const answered = answerToSession(server, context.error, proxy !== undefined);
  if (answered) return answered;

  const primary = server.transport === "sse"
    ? await probeSse(url, server.headers, probeMs, network.fetch)
    : await probeStreamable(url, server.headers, probeMs, network.fetch);
  if (primary.kind === "failure" && proxy) {
    return proxiedFailure(server, proxy, primary.failure, context);
  }
  if (primary.kind === "http" && proxy) {
    const fromProxy = proxyAnswer(server, proxy, primary.answer, context);
    if (fromProxy) return fromProxy;
  }
  if (primary.kind === "failure") {
    const failure = primary.failure;
    if (failure.kind === "timeout") {
      return fail(
        `Connection timeout: ${address} accepted the connection but sent no HTTP answer ` +
          waitedFor(server, context, probeMs),
        REMEDY.timeout,
      );
    }
    if (failure.kind === "tls") {
      return fail(
        `the TLS handshake with ${address} failed (${failure.message}); the server may not ` +
          "speak HTTPS",
        url.protocol === "https:"
          ? `use http:// in "url" if the server speaks plain HTTP`
          : REMEDY.wrongAddress,
      );
    }
    const raw = await probeRawHttp(url.hostname, portOf(url), probeMs);
    if ("speaksHttp" in raw && !raw.speaksHttp) {
      const said = raw.firstBytes.trim()
        ? `it answered "${abridge(printable(raw.firstBytes).trim(), 60)}"`
        : "it sent nothing back";
      return fail(
        `wrong transport_type: ${address} accepts connections but does not speak HTTP (${said})`,
        `${REMEDY.wrongTransport}; a server started as a local command speaks stdio: set ` +
          '"transport_type": "stdio" with its "command"',
      );
    }
    return fail(
      `the HTTP request to ${server.url} failed: ${failure.message}`,
      REMEDY.wrongAddress,
    );
  }

  if (primary.kind === "streamable" || primary.kind === "sse") {
    // The address speaks the configured transport: the failure was in the session.
    if (context.timedOut) {
      return fail(
        `Connection timeout: ${server.url} answers MCP probes but the handshake did not ` +
          `complete within ${server.timeoutSeconds} s`,
        REMEDY.timeout,
      );
    }
    return fail(
      `the MCP session with ${server.url} failed: ${protocolText(context.error)}`,
      "retry with /refresh; if it keeps failing, run /debug and check the server's own logs",
    );
  }

  return await diagnoseAnswer(server, primary.answer, context, probeMs, network);
}

/** HTTP statuses a proxy gives itself; the proxy diagnosis below explains them. */
const PROXY_STATUSES = [407, 502, 503, 504];

/**
 * What an OAuth server answered the session's authorized request, when it answered with
 * something other than a refusal of the token (401/403, which OAuth handles itself).
 */
function answerToSession(
  server: HttpServerConfig,
  error: unknown,
  proxied: boolean,
): ServerConnectError | undefined {
  if (server.auth?.method !== "oauth") return undefined;
  const http = findHttpError(error);
  if (!http || http.status === 401 || http.status === 403) return undefined;
  if (proxied && PROXY_STATUSES.includes(http.status)) return undefined;
  const status = `HTTP ${http.status}${http.statusText ? ` ${http.statusText}` : ""}`;
  const body = typeof http.data.text === "string" ? http.data.text : "";
  const said = jsonRpcMessageIn(body) ?? printable(body).trim();
  const quoted = said ? ` ("${abridge(said, 160)}")` : "";
  return new ServerConnectError(server.name, {
    reason: http.status >= 500
      ? `the server failed with ${status}${quoted} after the OAuth login succeeded`
      : `the server answered ${status}${quoted} to a request sent with the OAuth token: it ` +
        "accepted the login but refused the request itself",
    remedy: http.status >= 500
      ? "check the server's own logs, then retry with /refresh"
      : "check what the server expects (its documentation, or the exchange logged with " +
        '--debug); if it names the protocol version, try "protocol": "legacy" or a ' +
        "revision it supports in the server entry",
    cause: error,
  });
}

/** The SDK's HTTP error in an error's cause chain. */
function findHttpError(error: unknown): SdkHttpError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError) return current;
    current = current.cause;
  }
  return undefined;
}

/** The message of a JSON-RPC error body. */
function jsonRpcMessageIn(body: string): string | undefined {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** The remedy for every proxy problem, ending with the way around the proxy. */
function proxyRemedy(first: string, url: URL): string {
  return `${first}; to reach ${url.hostname} without the proxy, add it to NO_PROXY`;
}

function proxyUnreachable(
  server: HttpServerConfig,
  proxy: ProxySettings,
  failure: NetFailure,
  context: FailureContext,
): ServerConnectError {
  const url = new URL(server.url);
  const named = `the proxy ${proxyName(proxy)}`;
  const via = `through which patchbay reaches ${url.origin}`;
  const reason = failure.kind === "refused"
    ? `Connection refused: nothing is listening at ${named}, ${via}`
    : failure.kind === "dns"
    ? `the host name of ${named} does not resolve (DNS lookup failed)`
    : failure.kind === "timeout"
    ? `Connection timeout: no TCP connection to ${named} within ` +
      `${(context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) / 1000} s`
    : `could not connect to ${named}: ${failure.message}`;
  return new ServerConnectError(server.name, {
    reason,
    remedy: proxyRemedy(
      `start the proxy, or correct ${proxy.variable} (in .env or the environment)`,
      url,
    ),
    cause: context.error,
  });
}

function proxiedFailure(
  server: HttpServerConfig,
  proxy: ProxySettings,
  failure: NetFailure,
  context: FailureContext,
): ServerConnectError {
  const url = new URL(server.url);
  const address = `${url.hostname}:${portOf(url)}`;
  const named = `the proxy ${proxyName(proxy)}`;
  const info = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  if (/unsuccessful tunnel/i.test(failure.message)) {
    return info(
      `${named} refused to open a connection to ${address}`,
      proxyRemedy(
        `check that the proxy allows connections to ${address} and that its credentials ` +
          `(user:password@ in ${proxy.variable}) are right`,
        url,
      ),
    );
  }
  if (failure.kind === "timeout") {
    return info(
      `Connection timeout: the request to ${server.url} through ${named} got no answer ` +
        `within ${(context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) / 1000} s`,
      proxyRemedy(REMEDY.timeout, url),
    );
  }
  return info(
    `the request to ${server.url} through ${named} failed (${netDetail(failure.message)}): ` +
      "the proxy could not reach the server, or dropped the connection",
    proxyRemedy(
      `check that the server runs at ${address} and that the proxy can reach it`,
      url,
    ),
  );
}

/** Answers the proxy gives itself: a demand for credentials, or a server it could not reach. */
function proxyAnswer(
  server: HttpServerConfig,
  proxy: ProxySettings,
  answer: HttpAnswer,
  context: FailureContext,
): ServerConnectError | undefined {
  const url = new URL(server.url);
  const named = `the proxy ${proxyName(proxy)}`;
  const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;
  if (answer.status === 407) {
    return new ServerConnectError(server.name, {
      reason: `${named} requires authentication (${status})`,
      remedy: proxyRemedy(
        `put the proxy's credentials in ${proxy.variable}: http://user:password@host:port`,
        url,
      ),
      cause: context.error,
    });
  }
  if ([502, 503, 504].includes(answer.status) && !isJsonRpcAnswer(answer)) {
    return new ServerConnectError(server.name, {
      reason: `${named} answered ${status}: it could not reach ${url.hostname}:${portOf(url)}`,
      remedy: proxyRemedy(
        `${REMEDY.notRunning}; check the address in "url" and that the proxy can reach it`,
        url,
      ),
      cause: context.error,
    });
  }
  return undefined;
}

function networkFailure(
  server: HttpServerConfig,
  failure: NetFailure,
  address: string,
  context: FailureContext,
): ServerConnectError {
  const info = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const target = { address, host: new URL(server.url).hostname };
  switch (failure.kind) {
    case "refused":
      return info(
        `${netLabel("refused")}: ${netReason("refused", target)} (the server is not running ` +
          "at the configured address)",
        `${REMEDY.notRunning}; if it is running, check the port it listens on and fix "url"`,
      );
    case "dns":
      return info(
        netReason("dns", target),
        REMEDY.wrongAddress,
      );
    case "timeout":
      return info(
        `Connection timeout: no TCP connection to ${address} ` +
          waitedFor(server, context, context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) +
          " (a host that is down, or a firewall dropping packets)",
        REMEDY.timeout,
      );
    case "unreachable":
      return info(`Network unreachable: ${failure.message}`, REMEDY.network);
    default:
      return info(`could not connect to ${address}: ${failure.message}`, REMEDY.wrongAddress);
  }
}

async function diagnoseAnswer(
  server: HttpServerConfig,
  answer: HttpAnswer,
  context: FailureContext,
  probeMs: number,
  network: Network,
): Promise<PatchbayError> {
  const fail = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const url = new URL(server.url);
  const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;

  if (answer.status === 401 || answer.status === 403) {
    return await authFailure(server, status, probeMs, context.error, network);
  }

  // The other transport at this very URL?
  const other = server.transport === "sse"
    ? await probeStreamable(url, server.headers, probeMs, network.fetch)
    : await probeSse(url, server.headers, probeMs, network.fetch);
  if (other.kind === "streamable" || other.kind === "sse") {
    const speaks = other.kind === "sse" ? "sse" : "streamable_http";
    return fail(
      `wrong transport_type: ${server.url} speaks ${
        speaks === "sse" ? "the legacy SSE transport" : "streamable HTTP"
      }, not ${server.transport} (${status} to the ${server.transport} request)`,
      `${REMEDY.wrongTransport}: set "transport_type": "${speaks}"`,
    );
  }

  const elsewhere = await findEndpoint(url, server, probeMs, network);
  const moveTo = elsewhere
    ? `set "url" to ${elsewhere.url}` +
      (elsewhere.transport !== server.transport
        ? ` and "transport_type" to "${elsewhere.transport}"`
        : "") +
      " (found by probing)"
    : undefined;

  if (answer.status === 404) {
    return fail(
      `${status} at ${server.url}: nothing serves MCP at the path '${url.pathname}'`,
      moveTo ?? `${REMEDY.wrongAddress}, including its path (often /mcp, or /sse for SSE)`,
    );
  }
  if (answer.contentType.includes("text/html")) {
    const title = htmlTitle(answer.body);
    return fail(
      `${server.url} answered with an HTML page${title ? ` ("${abridge(title, 80)}")` : ""} ` +
        `(${status}) instead of MCP: this is a web page, not an MCP endpoint`,
      moveTo ?? REMEDY.wrongAddress,
    );
  }
  if (answer.status >= 500) {
    const said = jsonRpcErrorMessage(answer) ?? printable(answer.body).trim();
    return fail(
      `the server failed with ${status}${said ? ` ("${abridge(said, 120)}")` : ""}`,
      "check the server's own logs, then retry with /refresh",
    );
  }
  if (isJsonRpcAnswer(answer)) {
    const message = jsonRpcErrorMessage(answer);
    return fail(
      `the server refused the MCP handshake (${status}${
        message ? `: ${abridge(message, 160)}` : ""
      })`,
      moveTo ?? "check the server's documentation for the headers or URL it expects",
    );
  }
  const type = answer.contentType.split(";")[0] || "no content type";
  return fail(
    `${server.url} answered ${status} with ${type} that is not MCP (JSON-RPC)`,
    moveTo ?? REMEDY.wrongAddress,
  );
}

async function authFailure(
  server: HttpServerConfig,
  status: string,
  probeMs: number,
  cause: unknown,
  network: Network,
): Promise<PatchbayError> {
  const info = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause });
  if (server.auth?.method === "oauth") {
    return new OAuthFailedError(server.name, {
      reason: `the server refused access (${status}) and the OAuth authorization did not ` +
        "complete",
      cause,
    });
  }
  const hasToken = Object.keys(server.headers).some((h) => h.toLowerCase() === "authorization");
  if (hasToken) {
    return info(
      `the server rejected the credentials sent in "headers" (${status})`,
      "check the token in the Authorization header (expired, revoked, or for another " +
        "server); the value can come from .env with ${VAR}",
    );
  }
  const oauth = await probeOAuthMetadata(server.url, probeMs, network.fetch);
  if (oauth.found) {
    return info(
      `the server requires OAuth authorization (${status}; metadata at ${oauth.where})`,
      'add "auth": {"method": "oauth"} to the server entry',
    );
  }
  return info(
    `the server requires credentials (${status}) and publishes no OAuth metadata`,
    'send a token with "headers": {"Authorization": "Bearer <ACCESS_TOKEN>"}',
  );
}

/** Looks for the MCP endpoint elsewhere on the same origin (the common paths). */
async function findEndpoint(
  url: URL,
  server: HttpServerConfig,
  probeMs: number,
  network: Network,
): Promise<{ url: string; transport: "streamable_http" | "sse" } | undefined> {
  const candidates: [string, "streamable_http" | "sse"][] = [
    ["/mcp", "streamable_http"],
    ["/sse", "sse"],
    ["/", "streamable_http"],
  ];
  for (const [path, transport] of candidates) {
    const target = new URL(path, url.origin);
    if (target.href === url.href && transport === server.transport) continue;
    const probe: McpProbe = transport === "sse"
      ? await probeSse(target, server.headers, probeMs, network.fetch)
      : await probeStreamable(target, server.headers, probeMs, network.fetch);
    if (probe.kind === "streamable" || probe.kind === "sse") return { url: target.href, transport };
  }
  return undefined;
}

// -------------------------------------------------------------------------- helpers

/**
 * How long patchbay waited, as the person configured it: the server's own `timeout` when
 * the connection attempt ran out of it, else the diagnosis probe's bound.
 */
function waitedFor(server: HttpServerConfig, context: FailureContext, probeMs: number): string {
  return context.timedOut
    ? `within ${server.timeoutSeconds} s (its "timeout")`
    : `within ${probeMs / 1000} s`;
}

function stderrDetails(evidence: StdioEvidence): string[] {
  return pickErrorLines(evidence.stderrTail, DIAGNOSIS_STDERR_LINES).map((line) =>
    `stderr: ${line}`
  );
}

/** Lines that say what went wrong, in the words runtimes and programs use for it. */
const ERROR_LINE =
  /\b(?:error|exception|cannot|can't|could not|couldn't|failed|fatal|panic|denied|not found|no such|missing|invalid|refused|unable|traceback)\b|ERR_[A-Z_]+/i;

/** Stack frames, caret markers and blank lines: what crowds out the useful line. */
const NOISE_LINE = /^\s*(?:at\s|File "|\^+\s*$|\.\.\.\s*\d+ more|$)/;

/**
 * At most `max` lines of a crashed server's stderr, in order: the lines that say what
 * went wrong first (a Node crash puts `Cannot find package …` above a dozen stack frames),
 * then the last other lines, stack frames and blanks left out.
 */
export function pickErrorLines(lines: readonly string[], max: number): string[] {
  const useful = lines.map((line, index) => ({ line, index })).filter((l) =>
    !NOISE_LINE.test(l.line)
  );
  const errors = useful.filter((l) => ERROR_LINE.test(l.line)).slice(-max);
  const chosen = new Set(errors.map((l) => l.index));
  for (let i = useful.length - 1; i >= 0 && chosen.size < max; i--) chosen.add(useful[i].index);
  return useful.filter((l) => chosen.has(l.index)).map((l) => l.line);
}

/** What an MCP-level failure said, without raw runtime noise. */
function protocolText(error: unknown): string {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.ConnectionClosed) return "the server closed the connection";
    if (error.code === SdkErrorCode.RequestTimeout) return "no answer in time";
  }
  const text = errorChain(error)
    .replace(/<[^>]+>/g, " ")
    .replace(/\b(?:TypeError: )?fetch failed(?: <- )?/gi, "")
    .replace(/\s+/g, " ")
    .trim();
  return abridge(text || "unknown error", 240);
}

/** The runtime's own words at the end of a fetch failure ("connection closed before …"). */
function netDetail(message: string): string {
  const last = message.split(" <- ").at(-1) ?? message;
  return /client error \([^)]*\): (.+)$/.exec(last)?.[1] ?? last.replace(/^\w*Error: /, "");
}

function shellLine(command: string, args: readonly string[]): string {
  const quote = (s: string) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
  return [command, ...args].map(quote).join(" ");
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 / 1024)} MB`;
}

function printable(text: string): string {
  // deno-lint-ignore no-control-regex -- replacing control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
