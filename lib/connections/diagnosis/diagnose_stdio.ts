/**
 * Why a stdio server did not connect, from what its process did: the spawn error, the
 * exit status, its stderr (the lines that say what went wrong), stray stdout, and the
 * ports it listens on, probed for an HTTP server started instead of stdio.
 *
 * @module
 */

import type { StdioServerConfig } from "../../config/types.ts";
import { ServerConnectError, STDERR_DETAIL } from "../../errors.ts";
import { type RemedyText, ROWS } from "../../errors/failure_table.ts";
import { CONNECTION_STEPS } from "../../errors/connection_steps.ts";
import { abridge } from "../../text/text.ts";
import type { StdioEvidence } from "../../transports/stdio.ts";
import { hasProcFs, listeningPorts, processTree } from "../../transports/process.ts";
import { type ConnectFailure, DIAGNOSIS_PROBE_MS, protocolText } from "./diagnosis_context.ts";
import { probeSse, probeStreamable } from "./network_probe.ts";
import { FIRST_INSTALL_ALLOWANCE_SECONDS } from "../package_runner.ts";

/** Stderr lines shown with a failure (the log keeps them all). */
export const DIAGNOSIS_STDERR_LINES = 8;

/**
 * A line announcing a listening port ("listening on port 3001", "running at
 * http://localhost:8080"): where `/proc` cannot be read, the only hint of which port a
 * process serves.
 */
const LISTENING_ANNOUNCEMENT =
  /\b(?:listen\w*|running|serving|started|available)\b[^\n]*?(?:https?:\/\/[\w.[\]-]+:(\d{2,5})\b|\bport\s+(\d{2,5})\b)/gi;

/** Ports of a stdio process probed for an HTTP server, at most. */
const MAX_PORTS_PROBED = 4;

/** The diagnosis of a stdio entry. */
export async function diagnoseStdio(
  server: StdioServerConfig,
  context: ConnectFailure,
): Promise<ServerConnectError> {
  const evidence = context.stdio ?? { stderrTail: [], stdoutNoise: [], messagesReceived: 0 };
  const fail = (reason: string, remedy: RemedyText, details: string[] = []) =>
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
      ROWS.answer_too_large.remedy,
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
        (evidence.stderrTail.length > 0
          ? " (its last stderr lines are shown with this error)"
          : ""),
      CONNECTION_STEPS.exited(commandLine),
    );
  }

  if (evidence.closeReason?.kind === "stdout_closed") {
    return fail(
      "the server process closed its stdout without answering",
      CONNECTION_STEPS.stdoutClosed(commandLine),
    );
  }

  const http = await httpBehindProcess(evidence, context.probeTimeoutMs);
  if (http) return wrongTransportStdio(server, http, evidence, context.error);

  if (evidence.stdoutNoise.length > 0 && evidence.messagesReceived === 0) {
    return fail(
      `the process printed text that is not MCP JSON-RPC on stdout ` +
        `("${abridge(evidence.stdoutNoise[0], 120)}") and never answered initialize` +
        (context.timedOut ? ` within ${server.timeoutSeconds} s` : ""),
      CONNECTION_STEPS.stdoutNoise,
    );
  }
  if (context.timedOut && context.installing) {
    const { runner, package: name, boundSeconds } = context.installing;
    return fail(
      `Connection timeout: ${runner} was still installing ${name}, or the server it started ` +
        `did not answer initialize, within ${boundSeconds} s (the entry's timeout, ` +
        `${server.timeoutSeconds} s, plus ${FIRST_INSTALL_ALLOWANCE_SECONDS} s for a first install)`,
      CONNECTION_STEPS.installing(commandLine, runner),
    );
  }
  if (context.timedOut) {
    return fail(
      `Connection timeout: the process started but did not answer initialize within ` +
        `${server.timeoutSeconds} s`,
      CONNECTION_STEPS.stdioTimeout(commandLine),
    );
  }
  return fail(
    `the MCP handshake failed: ${protocolText(context.error)}`,
    CONNECTION_STEPS.notMcp(commandLine),
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
        CONNECTION_STEPS.missingCwd,
      );
    }
    if (server.command.includes("/")) {
      return info(
        `command '${server.command}' does not exist`,
        CONNECTION_STEPS.missingCommand,
      );
    }
    const from = PROVIDERS[server.command];
    return new ServerConnectError(server.name, {
      reason: `command '${server.command}' not found on PATH`,
      remedy: CONNECTION_STEPS.notOnPath(server.command, from),
      details: [`PATH: ${Deno.env.get("PATH") ?? "(unset)"}`],
      cause: error,
    });
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return info(
      `command '${server.command}' cannot be executed (permission denied)`,
      CONNECTION_STEPS.notExecutable(server.command),
    );
  }
  return info(
    `command '${server.command}' could not be started: ${error.message}`,
    CONNECTION_STEPS.notStarted,
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
      const probe = await probeStreamable(`${origin}${path}`, { timeoutMs: probeMs });
      if (probe.kind === "streamable") return { url: `${origin}${path}`, mcp: "streamable_http" };
      if (probe.kind === "http") plainHttp ??= { url: `${origin}/` };
      if (probe.kind === "failure") break;
    }
    const sse = await probeSse(`${origin}/sse`, { timeoutMs: probeMs });
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
      remedy: CONNECTION_STEPS.servesHttp(http.mcp, http.url),
      details,
      cause,
    });
  }
  return new ServerConnectError(server.name, {
    reason: "wrong transport_type: the process started an HTTP server" +
      (http.url ? ` (${http.url})` : "") + " instead of speaking MCP on stdio",
    remedy: CONNECTION_STEPS.startedHttp,
    details,
    cause,
  });
}

/** The lines of the process's stderr shown with a failure, marked as such. */
export function stderrDetails(evidence: StdioEvidence): string[] {
  return pickErrorLines(evidence.stderrTail, DIAGNOSIS_STDERR_LINES).map((line) =>
    `${STDERR_DETAIL}${line}`
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

function shellLine(command: string, args: readonly string[]): string {
  const quote = (s: string) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
  return [command, ...args].map(quote).join(" ");
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 / 1024)} MB`;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
