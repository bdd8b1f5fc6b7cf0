/**
 * One interactive session: the servers, the model, the conversation and its memory, and
 * the terminal they are shown on. The REPL loop reads input and hands it here; slash
 * commands act on the parts this object holds.
 *
 * Start-up order matters: the model session comes first (it checks LLM_API_KEY before any
 * server is started, and its sampling handler must be given to the connection manager
 * before servers connect), then the servers, then memory and the conversation.
 *
 * @module
 */

import process from "node:process";
import type { Agent, TurnResult } from "../agent/agent.ts";
import type { AgentUi } from "../agent/ui.ts";
import { createModelSession, type ModelSession } from "../agent/session.ts";
import { openConnections } from "../connections/open.ts";
import type { ConnectionManager } from "../connections/manager.ts";
import type { ConnectionEvent, ServerRequestHandlers } from "../connections/types.ts";
import { CancelledError, PatchbayError } from "../errors.ts";
import type { Memory, MemoryEvent } from "../memory/mod.ts";
import { openMemory } from "../memory/mod.ts";
import { describeOAuthEvent } from "../oauth/messages.ts";
import { statePath } from "../paths.ts";
import type { Runtime } from "../startup.ts";
import { stderrStyle, stdoutStyle, type Style } from "../style.ts";
import { stripTerminalEscapes } from "../terminal.ts";
import { plural } from "../text.ts";
import { createElicitationHandler, createFormDefaultsHandler } from "./elicitation.ts";
import { LineEditor } from "./line_editor.ts";
import type { TerminalOutput } from "./output.ts";
import { formatDuration, TerminalUi } from "./terminal_ui.ts";

/** Server log levels shown in the terminal outside debug mode. */
const LOUD_LOG_LEVELS = new Set(["warning", "error", "critical", "alert", "emergency"]);

/** Options of {@linkcode ClientSession.open}. */
export interface SessionOptions {
  runtime: Runtime;
  output: TerminalOutput;
  /** Turns an error into the lines a person reads (the command layer's formatter). */
  presentError: (error: unknown) => string;
  /** Approve every tool call and sampling request. @default false */
  yes?: boolean;
  /** Continue the latest stored conversation (`true`) or the one with this id. */
  resume?: true | string;
  /** Aborting cancels start-up (Ctrl+C while servers connect). */
  signal?: AbortSignal;
  /**
   * The agent's UI. @default a {@linkcode TerminalUi} that asks its questions at the
   * terminal when there is one
   */
  ui?: AgentUi;
  /**
   * Whether a person can answer questions (approvals, elicitation forms) at the terminal.
   * @default stdin is a terminal
   */
  interactive?: boolean;
  /**
   * Answer servers' forms with their defaults instead of asking (`--accept-form-defaults`).
   * @default false
   */
  acceptFormDefaults?: boolean;
}

/** Everything one interactive session works with. */
export class ClientSession {
  readonly runtime: Runtime;
  readonly output: TerminalOutput;
  /** Colours of what goes to stdout (answers, command output). */
  readonly style: Style = stdoutStyle();
  /** Colours of what goes to stderr (status, tool lines, notices). */
  readonly errStyle: Style = stderrStyle();
  /** Colours for the prompt and the questions: those of the stream the editor writes to. */
  readonly promptStyle: Style;
  readonly editor: LineEditor;
  readonly ui: AgentUi;
  /** A person can answer questions at the terminal. */
  readonly interactive: boolean;
  readonly presentError: (error: unknown) => string;
  readonly startedAt = Date.now();
  manager!: ConnectionManager;
  memory!: Memory;
  /** The model side, unless LLM_API_KEY was unusable. */
  model?: ModelSession;
  /** Why there is no model side. */
  modelError?: PatchbayError;
  agent?: Agent;
  #turn?: AbortController;
  #exitRequested = false;
  #refreshing = false;
  #unsubscribe: (() => void)[] = [];

  private constructor(options: SessionOptions) {
    this.runtime = options.runtime;
    this.output = options.output;
    const prompts = promptStream();
    this.promptStyle = prompts === "stdout" ? this.style : this.errStyle;
    this.presentError = options.presentError;
    this.editor = new LineEditor({
      output: prompts === "stdout" ? process.stdout : process.stderr,
      historyFile: statePath("history"),
      // People paste keys into prompts; the history file gets what the log would show.
      redact: (text) => options.runtime.logger.redactor.redact(text),
    });
    this.interactive = options.interactive ?? this.editor.interactive;
    this.ui = options.ui ?? new TerminalUi({
      output: this.output,
      style: this.style,
      errStyle: this.errStyle,
      promptStyle: this.promptStyle,
      editor: this.interactive ? this.editor : undefined,
      autoApprove: options.yes,
      width: terminalWidth(),
      verbose: () => this.runtime.logger.debugMode,
    });
  }

  /** Starts the model side, the servers, and memory; resumes a conversation if asked. */
  static async open(options: SessionOptions): Promise<ClientSession> {
    const session = new ClientSession(options);
    try {
      await session.#open(options);
    } catch (error) {
      // Whatever started (servers, memory, the model client) must not outlive the error.
      await session.close();
      throw error;
    }
    return session;
  }

  async #open(options: SessionOptions): Promise<void> {
    const { runtime } = this;
    this.runtime.logger.setMirrorSink((line) => this.#notify(`${line}\n`));
    await this.editor.loadHistory();
    try {
      this.model = createModelSession({
        config: runtime.config,
        env: runtime.env,
        ui: this.ui,
        redactor: runtime.logger.redactor,
        log: runtime.logger.child("model"),
      });
    } catch (error) {
      if (!(error instanceof PatchbayError)) throw error;
      this.modelError = error;
    }
    // Memory first: a --resume that cannot be honoured fails before any server starts.
    this.memory = await openMemory(runtime.config.memory, runtime.env, {
      log: runtime.logger.child("memory"),
      redactor: runtime.logger.redactor,
      onEvent: (event) => this.#onMemoryEvent(event),
      signal: options.signal,
    });
    const conversation = options.resume
      ? await this.memory.resume(options.resume)
      : this.memory.newSession();
    if (options.resume) {
      this.output.err(
        `Resuming session ${conversation.id} (${
          plural(conversation.messages.length, "message")
        })\n`,
      );
    }
    await this.#connect(options.signal, options.acceptFormDefaults ?? false);
    this.agent = this.model?.createAgent(this.manager, {
      history: conversation.messages,
      onMessage: (message) => void this.memory.session.append(message),
    });
  }

  async #connect(signal: AbortSignal | undefined, acceptFormDefaults: boolean): Promise<void> {
    const { runtime } = this;
    const handlers: ServerRequestHandlers = {
      sampling: this.model?.sampling ?? this.#refuseSampling(),
      elicitation: acceptFormDefaults
        ? createFormDefaultsHandler((text) => this.#notify(`${this.errStyle.dim(text)}\n`))
        : this.interactive
        ? createElicitationHandler({
          editor: this.editor,
          output: this.output,
          style: this.promptStyle,
          errStyle: this.errStyle,
        })
        : undefined,
      // Nobody to answer: servers are not told forms are welcome, so they do not ask.
      withoutElicitation: !acceptFormDefaults && !this.interactive,
    };
    const enabled = runtime.config.servers.filter((s) => !s.disabled).length;
    if (enabled > 0) this.output.spin(`connecting to ${plural(enabled, "server")}…`);
    try {
      ({ manager: this.manager } = await openConnections(runtime, {
        signal,
        handlers,
        onOAuthEvent: (event) => {
          const text = describeOAuthEvent(event);
          if (text) this.#notify(`${text}\n`);
        },
      }));
    } finally {
      this.output.stopSpinner();
    }
    for (const status of this.manager.states()) this.#toolsChange(status.name);
    this.#unsubscribe.push(this.manager.on((event) => this.#onConnectionEvent(event)));
  }

  /** Sampling needs the model; without a usable key every request is refused, saying why. */
  #refuseSampling(): NonNullable<ServerRequestHandlers["sampling"]> {
    return () => Promise.reject(this.modelError ?? new CancelledError("sampling"));
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.#turn !== undefined;
  }

  /** Sends `text` to the model and shows the answer; errors are shown, never thrown. */
  async runTurn(text: string): Promise<TurnResult | undefined> {
    if (!this.agent) {
      this.output.err(`${this.presentError(this.modelError)}\n`);
      return undefined;
    }
    const agent = this.agent;
    const controller = new AbortController();
    this.#turn = controller;
    const started = performance.now();
    try {
      if (this.ui instanceof TerminalUi) this.ui.thinking();
      const result = await this.editor.whileBusy(
        () => agent.runTurn(text, { signal: controller.signal }),
        () => controller.abort(),
      );
      this.ui.textDone();
      this.output.stopSpinner();
      this.#footer(result, performance.now() - started);
      return result;
    } catch (error) {
      this.ui.textDone();
      this.output.stopSpinner();
      if (error instanceof CancelledError) {
        this.output.err(this.errStyle.yellow("⊘ cancelled\n"));
      } else {
        this.output.err(`${this.presentError(error)}\n`);
      }
      return undefined;
    } finally {
      this.#turn = undefined;
    }
  }

  /** Whether the session was asked to end (SIGTERM): the loop stops at its next step. */
  get exitRequested(): boolean {
    return this.#exitRequested;
  }

  /** Ends the session from outside the loop: cancels the turn and the prompt. */
  requestExit(): void {
    this.#exitRequested = true;
    this.interrupt();
    this.editor.abortRead();
  }

  /**
   * Runs a request for a slash command with a spinner; Ctrl+C aborts `work`'s signal.
   */
  async request<T>(label: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.output.spin(label);
    try {
      return await this.editor.whileBusy(() => work(controller.signal), () => controller.abort());
    } finally {
      this.output.stopSpinner();
    }
  }

  /** Reconnects servers; failures are left to the caller's status block, not printed twice. */
  async refresh(server?: string): Promise<void> {
    this.#refreshing = true;
    try {
      await this.request(
        server ? `refreshing ${server}…` : "refreshing every server…",
        () => this.manager.refresh(server, { force: true }),
      );
    } finally {
      this.#refreshing = false;
    }
  }

  /** Cancels the running turn; `false` when none runs. */
  interrupt(): boolean {
    if (!this.#turn) return false;
    this.#turn.abort();
    return true;
  }

  #footer(result: TurnResult, ms: number): void {
    const parts = [
      plural(result.steps, "step"),
      ...(result.toolCalls > 0 ? [plural(result.toolCalls, "tool call")] : []),
      `${result.usage.totalTokens.toLocaleString("en-US")} tokens${
        result.usage.estimated ? " (est.)" : ""
      }`,
      formatDuration(ms),
    ];
    this.output.err(this.errStyle.dim(`  ${parts.join(" · ")}\n`));
  }

  /** Writes an unprompted notice (server and memory events) around the prompt. */
  #notify(text: string): void {
    this.editor.interject(text, (t) => this.output.err(t));
  }

  /** Tool names each server had when last shown, to report what a list_changed changed. */
  #seenTools = new Map<string, Set<string>>();

  #toolsChange(server: string): string | undefined {
    const now = new Set(
      this.manager.tools().filter((t) => t.server === server).map((t) => t.originalName),
    );
    const before = this.#seenTools.get(server) ?? new Set();
    this.#seenTools.set(server, now);
    const added = [...now].filter((n) => !before.has(n));
    const removed = [...before].filter((n) => !now.has(n));
    if (added.length + removed.length === 0) return undefined;
    return [...added.map((n) => `+${n}`), ...removed.map((n) => `-${n}`)].join(" ");
  }

  #onConnectionEvent(event: ConnectionEvent): void {
    const server = stripTerminalEscapes(event.server);
    const say = (text: string) => this.#notify(text);
    switch (event.type) {
      case "state":
        if (event.state === "failed" && event.error && !this.#refreshing) {
          say(`${this.presentError(event.error)}\n`);
        } else if (event.state === "reconnecting") {
          say(this.errStyle.yellow(`⟳ ${server}: connection lost, reconnecting\n`));
        } else if (event.state === "connected" && Date.now() - this.startedAt > 1000) {
          say(this.errStyle.dim(`✓ ${server}: connected\n`));
        }
        break;
      case "list_changed": {
        // Servers announce changes freely (server-everything right after connecting);
        // only a real change of the tools is worth an interruption.
        if (event.list !== "tools") break;
        const change = this.#toolsChange(event.server);
        if (change) {
          say(this.errStyle.dim(`↻ ${server}: tools changed (${stripTerminalEscapes(change)})\n`));
        }
        break;
      }
      case "resource_updated":
        say(
          this.errStyle.dim(`↻ ${server}: ${stripTerminalEscapes(event.uri)} updated\n`),
        );
        break;
      case "log":
        if (LOUD_LOG_LEVELS.has(event.level) || this.runtime.logger.debugMode) {
          const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
          say(
            this.errStyle.dim(`[${server}] ${event.level}: ${stripTerminalEscapes(data)}\n`),
          );
        }
        break;
    }
  }

  #onMemoryEvent(event: MemoryEvent): void {
    const error = "error" in event ? event.error : undefined;
    const quiet = event.type === "restored" || event.type === "replayed" ||
      event.type === "write-recovered";
    this.#notify(
      quiet ? this.errStyle.dim(`${event.message}\n`) : this.errStyle.yellow(`${event.message}\n`),
    );
    if (error && event.type !== "unavailable") this.#notify(`${this.presentError(error)}\n`);
    if (error && event.type === "unavailable") {
      this.#notify(this.errStyle.dim(`  cause:  ${error.reason}\n  remedy: ${error.remedy}\n`));
    }
  }

  /** Closes servers, memory and the model client, in that order. */
  async close(): Promise<void> {
    this.interrupt();
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.editor.close();
    await this.manager?.close();
    await this.memory?.close();
    this.model?.close();
  }
}

/**
 * Where prompts and questions go: to the person at the terminal, never into a file the
 * answer is redirected to. stderr, unless it is redirected and stdout is the terminal
 * (`patchbay 2> log`); `run … > answer.txt` asks on stderr and leaves the file the answer.
 */
function promptStream(): "stdout" | "stderr" {
  return !Deno.stderr.isTerminal() && Deno.stdout.isTerminal() ? "stdout" : "stderr";
}

function terminalWidth(): number {
  try {
    return Math.min(Deno.consoleSize().columns, 120);
  } catch {
    return 80;
  }
}
