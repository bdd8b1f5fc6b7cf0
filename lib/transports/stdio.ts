/**
 * MCP over stdio on `Deno.Command`: the server is a child process that reads JSON-RPC
 * messages from stdin and writes them to stdout, one per line.
 *
 * Beyond the framing, this transport keeps a misbehaving server from hurting the rest of
 * the session: the child gets a minimal environment (no API keys), its stderr is kept in
 * a bounded buffer and the log (escape sequences stripped), stray stdout text is logged
 * and skipped, an oversized message closes only this server, and shutdown always ends
 * the whole process tree (the child runs in its own process group, so `npx` → `sh` →
 * `node` chains die together).
 *
 * @module
 */

import {
  type JSONRPCMessage,
  SdkError,
  SdkErrorCode,
  type Transport,
} from "@modelcontextprotocol/client";
import { LineBudget, type Log, LOG_LINE_RATE, silentLog } from "../log/log.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { DepthGuard } from "./depth.ts";
import { MAX_MESSAGE_BYTES } from "./limits.ts";
import { NotificationBudget } from "./notices.ts";
import { LineSplitter, LineTooLongError } from "./lines.ts";
import type { MessageObserver } from "./observer.ts";
import { assumeCompleteResult } from "./result_type.ts";
import { canSignalGroups, childEnvironment, terminateChild, terminateGroup } from "./process.ts";
import { settlesWithin } from "../async/deadline.ts";
import { claimPrespawned, spawnServer, startedAheadBy } from "./spawn.ts";

export { MAX_MESSAGE_BYTES } from "./limits.ts";

/** Lines of stderr kept for diagnosis (the log keeps everything). */
export const STDERR_TAIL_LINES = 40;

/** A longer stderr line is cut: a binary dump must not fill memory or the screen. */
export const STDERR_LINE_MAX_CHARS = 2000;

/** Non-JSON stdout lines kept for diagnosis (a banner, an HTTP server's greeting). */
export const STDOUT_NOISE_LINES = 20;

/** Time a server gets to exit by itself once its stdin is closed. */
export const STDIN_CLOSE_GRACE_MS = 2000;

/** Time a process group gets between SIGTERM and SIGKILL. */
export const SIGTERM_GRACE_MS = 2000;

/**
 * Time given to stdout/stderr to deliver their last bytes after the process exited: a
 * grandchild that inherited the pipes could otherwise hold them open forever.
 */
const OUTPUT_DRAIN_MS = 250;

/** Why the transport closed. */
export type StdioCloseReason =
  /** `close()` was called. */
  | { kind: "closed" }
  /** The process exited by itself. */
  | { kind: "exited"; code: number; signal: Deno.Signal | null }
  /** The process could not be started. */
  | { kind: "spawn_failed"; error: Error }
  /** The server sent a message larger than the cap. */
  | { kind: "oversize"; limit: number; seen: number }
  /** The server closed its stdout but kept running. */
  | { kind: "stdout_closed" };

/** What the transport observed, for diagnosing a failed or lost connection. */
export interface StdioEvidence {
  pid?: number;
  /** Exit status once the process has exited. */
  exit?: Deno.CommandStatus;
  spawnError?: Error;
  closeReason?: StdioCloseReason;
  /** The last lines of stderr, escape sequences stripped. */
  stderrTail: string[];
  /** The first lines of stdout that were not JSON-RPC. */
  stdoutNoise: string[];
  /** JSON-RPC messages received so far. */
  messagesReceived: number;
}

/** Options of {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  command: string;
  /** @default [] */
  args?: readonly string[];
  /** Variables added to the minimal environment. @default {} */
  env?: Readonly<Record<string, string>>;
  /** Working directory. @default patchbay's working directory */
  cwd?: string;
  /** Where the inherited variables (HOME, PATH, ...) are read. @default Deno.env.get */
  parentEnv?: (name: string) => string | undefined;
  /** @default MAX_MESSAGE_BYTES */
  maxMessageBytes?: number;
  /** @default STDIN_CLOSE_GRACE_MS */
  stdinCloseGraceMs?: number;
  /** @default SIGTERM_GRACE_MS */
  sigtermGraceMs?: number;
  /** Receives the server's stderr lines and protocol warnings. @default silentLog */
  log?: Log;
  /** Sees every message sent and received, as written. */
  observer?: MessageObserver;
  /** Gives each message its final form before it is written (the trace context). */
  outgoing?: (message: JSONRPCMessage) => JSONRPCMessage;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** How the log names who started a process ahead (`lib/transports/spawn.ts`). */
const STARTED_AHEAD = {
  launcher: "by the launcher, before the client started",
  early: "at start-up, before the command loaded",
  command: "once the configuration was read",
} as const;

/** An MCP {@linkcode Transport} to a child process speaking newline-delimited JSON-RPC. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #options: StdioTransportOptions;
  readonly #log: Log;
  #child?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #stdout?: ReadableStreamDefaultReader<Uint8Array>;
  #stderr?: ReadableStreamDefaultReader<Uint8Array>;
  #pumps: Promise<void>[] = [];
  #exit?: Deno.CommandStatus;
  #exited?: Promise<Deno.CommandStatus>;
  #spawnError?: Error;
  #closeReason?: StdioCloseReason;
  #shutdown?: Promise<void>;
  #closeNotified = false;
  #unanswerable = signalOnce();
  #protocolVersion?: string;
  #stderrTail: string[] = [];
  #stdoutNoise: string[] = [];
  #received = 0;
  readonly #depth: DepthGuard;
  readonly #stderrBudget: LineBudget;
  readonly #noiseBudget: LineBudget;
  readonly #notices: NotificationBudget;

  constructor(options: StdioTransportOptions) {
    this.#options = options;
    this.#log = options.log ?? silentLog;
    this.#depth = new DepthGuard({ log: this.#log, reply: (message) => this.send(message) });
    this.#stderrBudget = new LineBudget((count) =>
      this.#log.warn(
        `${count} line${count === 1 ? "" : "s"} of stderr dropped (the server wrote more ` +
          `than ${LOG_LINE_RATE.lines} a second; the last ${STDERR_TAIL_LINES} are kept)`,
      )
    );
    this.#noiseBudget = new LineBudget((count) =>
      this.#log.warn(
        `${count} stdout line${count === 1 ? "" : "s"} that are not JSON-RPC dropped (more ` +
          `than ${LOG_LINE_RATE.lines} a second)`,
      )
    );
    this.#notices = new NotificationBudget((message) => this.#deliver(message), this.#log);
  }

  /** The process id (also its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Always `null`: stderr is read here (see {@linkcode evidence}). The property exists
   * because the SDK recognises a stdio transport by `stderr` and `pid`, and its version
   * probe treats silence on stdio as a 2025-era server rather than an outage.
   */
  get stderr(): null {
    return null;
  }

  /** Why the transport closed, once it has. */
  get closeReason(): StdioCloseReason | undefined {
    return this.#closeReason;
  }

  /** Resolves with the exit status when the process exits; `undefined` if it never ran. */
  get exited(): Promise<Deno.CommandStatus | undefined> {
    return this.#exited ?? Promise.resolve(undefined);
  }

  /** Resolves when the transport has closed (at once if it never started or closed). */
  whenClosed(): Promise<void> {
    return this.#shutdown ?? Promise.resolve();
  }

  /** Everything observed so far. */
  evidence(): StdioEvidence {
    return {
      pid: this.#child?.pid,
      exit: this.#exit,
      spawnError: this.#spawnError,
      closeReason: this.#closeReason,
      stderrTail: this.#stderrTail.map((line) => clip(stripTerminalEscapes(line)))
        .filter((line) => line.trim() !== ""),
      stdoutNoise: [...this.#stdoutNoise],
      messagesReceived: this.#received,
    };
  }

  /** The revision negotiated (the SDK tells every transport). */
  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  start(): Promise<void> {
    if (this.#child || this.#spawnError) {
      return Promise.reject(new Error("StdioTransport already started"));
    }
    const options = this.#options;
    try {
      const spec = {
        command: options.command,
        args: options.args ?? [],
        cwd: options.cwd,
        env: childEnvironment(options.env ?? {}, options.parentEnv ?? ((n) => Deno.env.get(n))),
      };
      this.#child = claimPrespawned(spec) ?? spawnServer(spec);
    } catch (error) {
      this.#spawnError = error as Error;
      this.#closeReason = { kind: "spawn_failed", error: error as Error };
      return Promise.reject(error);
    }
    const child = this.#child;
    options.observer?.event?.({
      event: "spawn",
      pid: child.pid,
      command: options.command,
      args: options.args ?? [],
    });
    const ahead = startedAheadBy(child);
    this.#log.debug(
      `started pid ${child.pid}${ahead ? ` ahead (${STARTED_AHEAD[ahead]})` : ""}: ` +
        `${options.command} ${(options.args ?? []).join(" ")}`,
    );
    this.#writer = child.stdin.getWriter();
    this.#stdout = child.stdout.getReader();
    this.#stderr = child.stderr.getReader();
    this.#pumps = [this.#readStdout(this.#stdout), this.#readStderr(this.#stderr)];
    this.#exited = child.status.then((status) => {
      this.#exit = status;
      options.observer?.event?.({
        event: "exit",
        pid: child.pid,
        code: status.code,
        signal: status.signal,
      });
      this.#log.debug(`pid ${child.pid} exited`, { code: status.code, signal: status.signal });
      if (!this.#shutdown) {
        this.#stop({ kind: "exited", code: status.code, signal: status.signal });
      }
      return status;
    });
    return Promise.resolve();
  }

  async send(sending: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#shutdown) {
      throw new SdkError(SdkErrorCode.NotConnected, "the server process is not running");
    }
    const message = this.#options.outgoing?.(sending) ?? sending;
    this.#options.observer?.sent?.(message);
    this.#depth.sent(message);
    await this.#writer.write(encoder.encode(JSON.stringify(message) + "\n"));
  }

  /** Closes stdin, then SIGTERM, then SIGKILL, until the whole process group is gone. */
  close(): Promise<void> {
    return this.#stop({ kind: "closed" });
  }

  #stop(reason: StdioCloseReason): Promise<void> {
    if (this.#shutdown) return this.#shutdown;
    this.#closeReason ??= reason;
    this.#shutdown = this.#terminate().finally(() => this.#notifyClosed());
    return this.#shutdown;
  }

  async #terminate(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const stdinGrace = this.#options.stdinCloseGraceMs ?? STDIN_CLOSE_GRACE_MS;
    const termGrace = this.#options.sigtermGraceMs ?? SIGTERM_GRACE_MS;
    const deadline = Date.now() + stdinGrace;
    // A rejected close means the pipe is already broken, which is what closing wants; a
    // close that never settles (a server not reading stdin) is bounded by the grace.
    if (this.#writer) await settlesWithin(this.#writer.close(), stdinGrace);
    const left = Math.max(0, deadline - Date.now());
    const waited = Promise.race([this.#exited!, this.#unanswerable.promise]);
    if (!this.#exit && !(await settlesWithin(waited, left) && this.#exit)) {
      this.#log.debug(
        stdinGrace === 0
          ? `pid ${child.pid}: closing promptly; sending SIGTERM`
          : this.#unanswerable.asked
          ? `pid ${child.pid} sent a request after its stdin closed; sending SIGTERM`
          : `pid ${child.pid} ignored the end of stdin; sending SIGTERM`,
      );
      if (canSignalGroups()) await terminateGroup(child.pid, termGrace);
      else {
        this.#log.warn(
          "cannot signal the process group (Deno.kill needs --allow-run for every program): " +
            "what the server started may outlive it; allow the kill program as " +
            "`patchbay permissions` prints (--allow-run=…,kill)",
        );
        await terminateChild(child, termGrace);
      }
    }
    await this.#exited;
    // The leader is gone; descendants it left behind are ended too (no orphans).
    if (canSignalGroups()) await terminateGroup(child.pid, termGrace);
    if (!(await settlesWithin(Promise.all(this.#pumps), OUTPUT_DRAIN_MS))) {
      await Promise.all([this.#stdout?.cancel(), this.#stderr?.cancel()]).catch(() => {});
      await Promise.all(this.#pumps);
    }
    this.#stderrBudget.flush();
    this.#noiseBudget.flush();
    this.#notices.end();
  }

  #notifyClosed(): void {
    if (this.#closeNotified) return;
    this.#closeNotified = true;
    this.onclose?.();
  }

  async #readStdout(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const splitter = new LineSplitter(this.#options.maxMessageBytes ?? MAX_MESSAGE_BYTES);
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const line of splitter.push(value)) this.#handleLine(line);
      }
    } catch (error) {
      if (error instanceof LineTooLongError) {
        this.#log.error(`server sent ${error.message}; closing it`);
        this.#stop({ kind: "oversize", limit: error.limit, seen: error.seen });
        await reader.cancel().catch(() => {});
        return;
      }
      if (!this.#shutdown) this.onerror?.(error as Error);
      return;
    }
    if (!this.#shutdown && !this.#exit) {
      // A server that closes stdout can no longer answer; end it rather than wait forever.
      const stillRunning = !(await settlesWithin(this.#exited!, OUTPUT_DRAIN_MS));
      if (stillRunning) {
        this.#log.warn("server closed its stdout but kept running; stopping it");
        this.#stop({ kind: "stdout_closed" });
      }
    }
  }

  #handleLine(bytes: Uint8Array): void {
    const text = decoder.decode(bytes);
    if (text.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.#noise(text);
      return;
    }
    if (!isJsonRpcMessage(message)) {
      this.#noise(text);
      return;
    }
    this.#received++;
    if (this.#shutdown) {
      // The answer to a request could no longer be written; a server waiting for one
      // would sit out the whole grace period, so shutdown moves on at once.
      if ("method" in message && "id" in message) this.#unanswerable.ask();
      return;
    }
    if (!this.#notices.admit(message)) return;
    for (const delivered of this.#depth.received(message)) this.#deliver(delivered);
  }

  #deliver(message: JSONRPCMessage): void {
    if (this.#shutdown) return;
    try {
      this.#options.observer?.received?.(message);
      this.onmessage?.(assumeCompleteResult(message, this.#protocolVersion));
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  #noise(text: string): void {
    const keep = this.#stdoutNoise.length < STDOUT_NOISE_LINES;
    if (!keep && !this.#noiseBudget.admit()) return;
    const line = clip(stripTerminalEscapes(clip(text)));
    if (keep) this.#stdoutNoise.push(line);
    this.#log.warn(`protocol warning: stdout line is not JSON-RPC (ignored): ${line}`);
  }

  async #readStderr(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const stream = new TextDecoder();
    let pending = "";
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += stream.decode(value, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) this.#stderrLine(line);
        if (pending.length > STDERR_LINE_MAX_CHARS) {
          this.#stderrLine(pending);
          pending = "";
        }
      }
    } catch {
      // Cancelled during shutdown, or the pipe broke: nothing more to read either way.
    }
    if (pending !== "") this.#stderrLine(pending);
  }

  #stderrLine(raw: string): void {
    if (raw.trim() === "") return;
    // Kept raw (cut to length); escapes are stripped when the tail is read or logged, so a
    // flood of stderr costs little more than reading it.
    const clipped = clip(raw.replace(/\r$/, ""));
    this.#stderrTail.push(clipped);
    if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
    if (!this.#stderrBudget.admit()) return;
    const line = clip(stripTerminalEscapes(clipped));
    if (line.trim() !== "") this.#log.info(line);
  }
}

/** The shape every JSON-RPC 2.0 message has; the protocol layer validates the rest. */
function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  return message.jsonrpc === "2.0" &&
    (typeof message.method === "string" || "result" in message || "error" in message);
}

function clip(line: string): string {
  return line.length > STDERR_LINE_MAX_CHARS
    ? `${line.slice(0, STDERR_LINE_MAX_CHARS)}… (${line.length} characters)`
    : line;
}

/** A promise resolved by the first `ask()`. */
function signalOnce(): { promise: Promise<void>; ask: () => void; asked: boolean } {
  let resolve!: () => void;
  const state = {
    promise: new Promise<void>((r) => resolve = r),
    asked: false,
    ask: () => {
      state.asked = true;
      resolve();
    },
  };
  return state;
}
