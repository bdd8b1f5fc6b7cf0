/**
 * One interactive session: the servers, the model, the conversation and its memory, and
 * the terminal they are shown on. The REPL loop reads input and hands it here; slash
 * commands act on the parts this object holds.
 *
 * Start-up order ({@linkcode ClientSession.open}): the model session first (it checks
 * LLM_API_KEY; an unusable key is kept as `modelError`, shown when a message is sent, and
 * its sampling handler, or the refusal that says why, must reach the servers before they
 * connect), then memory and the conversation (a `--resume` that cannot be honoured fails
 * before any server starts), then the servers, then the agent over them.
 *
 * The interactive client does not wait for the servers (`servers: "background"`): its
 * prompt comes first, each server is announced as it connects or fails (above the line
 * being typed), and a message sent meanwhile waits `AgentConfig.connect_wait` for the
 * servers still connecting, then goes with the tools of those that are connected. The
 * other modes wait for every server first, and Ctrl+C then skips the ones still connecting.
 *
 * @module
 */

import type { Surface } from "../agent/tool_failure.ts";
import process from "node:process";
import type { Agent, TurnResult } from "../agent/agent.ts";
import { findMentions, readMentions } from "../agent/mentions.ts";
import { MAX_IMAGES_KEPT, saveImage } from "../agent/image_store.ts";
import { formatBytes } from "../agent/content.ts";
import { showName } from "../names.ts";
import type { StoredAttachment } from "../memory/types.ts";
import type { AgentUi, ToolCallEnd } from "../agent/ui.ts";
import { createModelSession, type ModelSession } from "../agent/model_session.ts";
import type { RememberedApprovals } from "../agent/approval.ts";
import { ApprovalStore } from "../agent/approval_store.ts";
import { openConnections } from "../connections/open.ts";
import type { ConnectionManager, ServerChanges } from "../connections/manager.ts";
import type { ServerConfig } from "../config/types.ts";
import type { ServerRequestHandlers, ServerStatus } from "../connections/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { RefusedGrants } from "../deno_permission/refused_grant.ts";
import { CancelledError, ConversationHeldError, PatchbayError } from "../errors.ts";
import type { Conversation, Memory } from "../memory/mod.ts";
import { openMemory } from "../memory/mod.ts";
import { describeOAuthEvent } from "../oauth/messages.ts";
import { abortable } from "../async/abortable.ts";
import { statePath } from "../paths.ts";
import type { Runtime } from "../startup.ts";
import { stderrStyle, stdoutStyle, type Style } from "../style.ts";
import { plural } from "../text.ts";
import { createElicitationHandler, createFormDefaultsHandler } from "../ui/elicitation.ts";
import { LineEditor } from "./line_editor.ts";
import type { TerminalOutput } from "../ui/output.ts";
import { formatDuration, TerminalUi } from "../ui/terminal_ui.ts";
import { EventNotices } from "./event_notices.ts";
import { names } from "./notices.ts";

/**
 * Renders the server list in the colours of the stream it is written to (the banner's
 * stderr, `/connections`' stdout); injected so lib/ does not depend on the command layer.
 */
export type StatusRenderer = (
  session: ClientSession,
  style: Style,
  options?: { compact?: boolean },
) => string;

/** Options of {@linkcode ClientSession.open}. */
export interface ClientSessionOptions {
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
   * `background`: start-up does not wait for the servers, which are announced as they
   * connect once {@linkcode ClientSession.goLive} was called (the interactive client).
   * `wait`: start-up waits for every server (one-shot mode, piped input). @default "wait"
   */
  servers?: "wait" | "background";
  /**
   * `wait` mode: aborting while servers connect skips those still connecting (Ctrl+C in
   * one-shot mode); `onSkip` is told which (none: nothing was connecting).
   */
  skip?: AbortSignal;
  onSkip?: (servers: string[]) => void;
  /**
   * Draws the server block: in the banner, for `/connections` and `/refresh`, and in
   * `background` mode once the last server of start-up has connected or failed. Given once
   * here (it lives in the command layer, so lib/ does not depend on it); the REPL reads it
   * through {@linkcode ClientSession.renderServers}. Absent (one-shot mode): no block.
   */
  renderServers?: StatusRenderer;
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
   * Where tool failures are shown: `script` for `patchbay run`, whose remedies name flags
   * and commands instead of slash commands. @default "repl"
   */
  surface?: Surface;
  /**
   * Answer servers' forms with their defaults instead of asking (`--accept-form-defaults`).
   * @default false
   */
  acceptFormDefaults?: boolean;
  /**
   * The grants kept from the errors {@linkcode presentError} showed (an OAuth server's moved
   * authorization server): `/refresh` asks the launcher for them.
   * @default none kept
   */
  refusedGrants?: RefusedGrants;
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
  readonly #surface: Surface;
  readonly presentError: (error: unknown) => string;
  /** Grants the errors shown carried, which a restart under a wider plan adds. */
  readonly refusedGrants: RefusedGrants;
  readonly startedAt = Date.now();
  manager!: ConnectionManager;
  memory!: Memory;
  /** The model side, unless LLM_API_KEY was unusable. */
  model?: ModelSession;
  /** Why there is no model side. */
  modelError?: PatchbayError;
  agent?: Agent;
  /** `/refresh` asked the launcher for a restart under an extended plan: the loop ends. */
  restartRequested = false;
  #turn?: AbortController;
  #exitRequested = false;
  #unsubscribe: (() => void)[] = [];
  /** What is said unprompted about servers and memory, and when. */
  readonly #notices: EventNotices;
  #renderServers?: StatusRenderer;
  /** Servers start behind the prompt, once {@linkcode goLive} was called. */
  #background = false;
  #startupBegun = false;

  private constructor(options: ClientSessionOptions) {
    this.runtime = options.runtime;
    this.output = options.output;
    const prompts = promptStream();
    this.promptStyle = prompts === "stdout" ? this.style : this.errStyle;
    this.presentError = options.presentError;
    this.refusedGrants = options.refusedGrants ?? new RefusedGrants();
    this.editor = new LineEditor({
      output: prompts === "stdout" ? process.stdout : process.stderr,
      historyFile: statePath("history"),
      // People paste keys into prompts; the history file gets what the log would show.
      redact: (text) => options.runtime.logger.redactor.redact(text),
    });
    this.interactive = options.interactive ?? this.editor.interactive;
    this.#surface = options.surface ?? "repl";
    this.#renderServers = options.renderServers;
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
    this.#notices = new EventNotices({
      style: this.errStyle,
      notify: (text) => this.#notify(text),
      presentError: this.presentError,
      renderServers: options.renderServers && (() => this.renderServers(this.errStyle)),
      debugMode: () => this.runtime.logger.debugMode,
    });
  }

  /** Starts the model side, the servers, and memory; resumes a conversation if asked. */
  static async open(options: ClientSessionOptions): Promise<ClientSession> {
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

  async #open(options: ClientSessionOptions): Promise<void> {
    const { runtime } = this;
    this.runtime.logger.setMirrorSink((line) => this.#notify(`${line}\n`));
    await this.editor.loadHistory();
    const remembered = await this.#rememberedApprovals();
    try {
      this.model = createModelSession({
        config: runtime.config,
        env: runtime.env,
        // A tool call's error is shown by the UI, not the presenter: its grant is kept here.
        ui: keepingRefusedGrants(this.ui, this.refusedGrants),
        redactor: runtime.logger.redactor,
        log: runtime.logger.child("model"),
        remembered,
      });
    } catch (error) {
      if (!(error instanceof PatchbayError)) throw error;
      this.modelError = error;
    }
    // Memory first: a --resume that cannot be honoured fails before any server starts.
    this.memory = await openMemory(runtime.config.memory, runtime.env, {
      log: runtime.logger.child("memory"),
      redactor: runtime.logger.redactor,
      onEvent: (event) => this.#notices.memoryEvent(event),
      signal: options.signal,
    });
    const conversation = options.resume
      ? await this.#resume(options.resume, options.signal)
      : this.memory.newSession();
    if (options.resume) {
      this.output.err(
        `Resuming session ${conversation.id} (${
          plural(conversation.messages.length, "message")
        })\n`,
      );
    }
    await this.#connect(options);
    this.agent = this.model?.createAgent(this.manager, {
      history: conversation.messages,
      // The folder goes with what the person asked: `patchbay sessions` lists by it.
      onMessage: (message) =>
        void this.memory.session.append(
          message.role === "user" ? { ...message, folder: Deno.cwd() } : message,
        ),
      surface: this.#surface,
    });
  }

  /**
   * The approvals remembered for this folder. A file that cannot be read is said so and
   * left alone: nothing is remembered (or overwritten) this session.
   */
  async #rememberedApprovals(): Promise<RememberedApprovals | undefined> {
    const store = new ApprovalStore();
    const folder = Deno.cwd();
    try {
      const approvals = (await store.list()).filter((a) => a.folder === folder);
      return {
        folder,
        approvals,
        store,
        // Still approved for this session; the person is told it was not kept.
        onError: (error) => this.#notify(`${this.presentError(error)}\n`),
      };
    } catch (error) {
      if (!(error instanceof PatchbayError)) throw error;
      this.output.err(`${this.presentError(error)}\n`);
      return undefined;
    }
  }

  /**
   * Resumes `target`; when another process has it open, a person at the terminal may
   * continue it as a new branch instead (a script gets the error, which says how).
   */
  async #resume(target: true | string, signal?: AbortSignal): Promise<Conversation> {
    try {
      return await this.memory.resume(target, Deno.cwd());
    } catch (error) {
      if (!(error instanceof ConversationHeldError) || !this.interactive) throw error;
      const { sessionId, holder } = error;
      const answer = await this.editor.choose(
        `Conversation ${sessionId} is open in another patchbay (process ${holder.pid}, ` +
          `since ${holder.since}).\nContinue it here as a new branch (a copy under a new id; ` +
          "the other process keeps the original)? [y/N] ",
        ["y", "n"],
        "n",
        "n",
        signal,
      );
      if (answer !== "y") throw error;
      const branch = await this.memory.branch(sessionId);
      this.output.err(`Branched conversation ${sessionId} as ${branch.id}\n`);
      return branch;
    }
  }

  async #connect(options: ClientSessionOptions): Promise<void> {
    const { runtime } = this;
    const background = options.servers === "background";
    const acceptFormDefaults = options.acceptFormDefaults ?? false;
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
    if (enabled > 0 && !background) {
      this.output.spin(
        `connecting to ${plural(enabled, "server")}…${options.skip ? " (Ctrl+C skips)" : ""}`,
      );
    }
    try {
      ({ manager: this.manager } = await openConnections({
        ...runtime.config,
        env: runtime.env,
        logger: runtime.logger,
      }, {
        signal: options.signal,
        skip: options.skip,
        onSkip: options.onSkip,
        wait: !background,
        handlers,
        onOAuthEvent: (event) => {
          const text = describeOAuthEvent(event);
          if (text) this.#notify(`${text}\n`);
        },
      }));
    } finally {
      this.output.stopSpinner();
    }
    this.#background = background;
    if (!background) this.#notices.live = true;
    this.#unsubscribe.push(this.#notices.follow(this.manager));
  }

  /**
   * From now on, servers are announced as they connect, fail, are lost or come back (the
   * banner, printed just before, shows where they stand until then). In `background` mode
   * this also starts them, once the prompt is drawn: starting processes takes the CPU the
   * prompt would otherwise wait for.
   */
  goLive(): void {
    this.#notices.live = true;
    if (!this.#background || this.#startupBegun) return;
    this.#startupBegun = true;
    setTimeout(() => {
      this.#notices.startupBegins(this.manager.pending());
      void this.manager.start();
    }, 0);
  }

  /** Sampling needs the model; without a usable key every request is refused, saying why. */
  #refuseSampling(): NonNullable<ServerRequestHandlers["sampling"]> {
    return () => Promise.reject(this.modelError ?? new CancelledError("sampling"));
  }

  /** The server block in `style`'s colours ({@linkcode ClientSessionOptions.renderServers}). */
  renderServers(style: Style, options?: { compact?: boolean }): string {
    return this.#renderServers?.(this, style, options) ?? "";
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
      await this.#waitForServers(controller.signal);
      const attachments = await this.editor.whileBusy(
        () => this.mentionAttachments(text, controller.signal),
        () => controller.abort(),
      );
      if (this.ui instanceof TerminalUi) this.ui.thinking();
      const result = await this.editor.whileBusy(
        () => agent.runTurn(text, { signal: controller.signal, attachments }),
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

  /**
   * The resources `text` mentions (`@server:uri`, see lib/agent/mentions.ts), read now and
   * each named to the person (an image with the path it was saved to). Throws
   * `MentionReadError` for one that cannot be read: the message must then not be sent.
   */
  async mentionAttachments(text: string, signal?: AbortSignal): Promise<StoredAttachment[]> {
    const servers = this.runtime.config.servers.map((server) => server.name);
    const mentions = findMentions(text, servers);
    if (mentions.length === 0) return [];
    const attachments = await readMentions(
      mentions,
      (server, uri, options) => this.manager.readResource(server, uri, options),
      {
        signal,
        saveImage: (mimeType, data) => saveImage(mimeType, data),
        onImagesLeftOut: (mention, count) =>
          this.ui.notice(
            "warning",
            `${showName(mention.server)}:${showName(mention.uri)}: ${count} more image${
              count === 1 ? "" : "s"
            } not kept (a message keeps at most ${MAX_IMAGES_KEPT})`,
          ),
      },
    );
    for (const attachment of attachments) {
      const what = attachment.kind === "text"
        ? `${formatBytes(new TextEncoder().encode(attachment.text ?? "").length)} of text`
        : `${attachment.mimeType ?? "binary"}, ${formatBytes(attachment.bytes ?? 0)}`;
      const saved = attachment.path ? `; saved to ${attachment.path}` : "";
      // The URI of each content is the server's own: one line, its controls shown.
      const shown = `Attached ${showName(attachment.server)}:${showName(attachment.uri)} (${
        showName(what)
      }${saved})`;
      this.ui.notice("info", shown, {
        kind: "attachment",
        server: attachment.server,
        uri: attachment.uri ?? "",
        ...(attachment.mimeType ? { mime_type: attachment.mimeType } : {}),
        bytes: attachment.kind === "text"
          ? new TextEncoder().encode(attachment.text ?? "").length
          : attachment.bytes ?? 0,
        ...(attachment.path ? { path: attachment.path } : {}),
      });
    }
    return attachments;
  }

  /**
   * A message sent while servers are still connecting waits for them up to
   * `AgentConfig.connect_wait` (Ctrl+C: not longer), then goes without those still
   * connecting, saying so. Their tools join from the first model step after they connect.
   */
  async #waitForServers(signal: AbortSignal): Promise<void> {
    let pending = this.manager.pending();
    if (pending.length === 0) return;
    const connectWaitSeconds = this.runtime.config.agent.connectWaitSeconds ??
      DEFAULTS.agent.connectWaitSeconds;
    if (connectWaitSeconds > 0) {
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.output.spin(
        `waiting for ${
          names(pending)
        } to connect (at most ${connectWaitSeconds} s; Ctrl+C goes on ` +
          "without)…",
      );
      try {
        pending = await this.editor.whileBusy(
          () => this.manager.settled({ timeoutMs: connectWaitSeconds * 1000, signal: stop.signal }),
          () => stop.abort(),
        );
      } finally {
        this.output.stopSpinner();
        signal.removeEventListener("abort", onAbort);
      }
    }
    if (signal.aborted) throw new CancelledError("the turn");
    if (pending.length === 0) return;
    const are = pending.length === 1 ? "is" : "are";
    this.output.err(
      this.errStyle.yellow(
        `… ${names(pending)} ${are} still connecting: this message goes without ` +
          `${pending.length === 1 ? "its" : "their"} tools (they join once connected)\n`,
      ),
    );
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

  /**
   * Reconnects servers; failures are left to the caller's status block, not printed twice.
   * Ctrl+C stops waiting (a server still connecting may take its whole `timeout`); the
   * attempts go on, and are announced when they end.
   */
  async refresh(server?: string): Promise<void> {
    await this.#reconnecting(
      server ? `refreshing ${server}…` : "refreshing every server…",
      () => this.manager.refresh(server, { force: true }),
    );
  }

  /**
   * `/refresh` with the configuration read again: `servers` replace the configured ones
   * (see {@linkcode ConnectionManager.apply}); those that stay are reconnected.
   */
  async applyServers(servers: readonly ServerConfig[]): Promise<ServerChanges> {
    return await this.#reconnecting("refreshing every server…", async () => {
      const changes = await this.manager.apply(servers);
      this.model?.setServers(servers);
      const started = new Set([...changes.added, ...changes.changed]);
      const kept = servers.filter((s) => !started.has(s.name)).map((s) => s.name);
      await Promise.all(kept.map((name) => this.manager.refresh(name, { force: true })));
      return changes;
    });
  }

  /**
   * `/mcp enable|disable`: switches a server on or off for this session only
   * ({@linkcode ConnectionManager.setEnabled}); enabling waits for it to connect or fail.
   */
  async switchServer(
    server: string,
    enabled: boolean | undefined,
  ): Promise<ServerStatus | undefined> {
    return await this.#reconnecting(
      `${enabled ? "connecting" : "closing"} ${server}…`,
      () => this.manager.setEnabled(server, enabled),
    );
  }

  /** Runs `work` with its notices left to the status block that follows, Ctrl+C to stop waiting. */
  async #reconnecting<T>(label: string, work: () => Promise<T>): Promise<T> {
    this.#notices.refreshing = true;
    try {
      return await this.request(
        label,
        (signal) =>
          abortable(
            work(),
            signal,
            () => new CancelledError("waiting for the refresh (it goes on; /connections shows it)"),
          ),
      );
    } finally {
      this.#notices.refreshing = false;
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

  /**
   * Writes an unprompted notice (server and memory events) around the prompt or a
   * question, or on a line of its own while an answer streams.
   */
  #notify(text: string): void {
    const own = !this.editor.asking && !this.output.atLineStart ? `\n${text}` : text;
    this.editor.interject(own, (t) => this.output.err(t));
  }

  /**
   * Forgets the conversation when nothing in it was answered (a one-shot run whose model
   * failed), so such runs do not fill the list of conversations. A resumed one is kept.
   */
  async discardUnanswered(): Promise<void> {
    const conversation = this.memory?.session;
    if (!conversation || conversation.messages.length === 0) return;
    if (conversation.messages.some((m) => m.role === "assistant")) return;
    await conversation.settle();
    await this.memory.delete(conversation.id).catch(() => {
      // Never stored (memory off, or the store away): nothing to forget.
    });
  }

  /** Closes servers, memory and the model client, in that order. */
  async close(): Promise<void> {
    this.interrupt();
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.editor.close();
    await this.manager?.close();
    await this.memory?.close();
    await this.model?.approval.flush();
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

/**
 * `ui`, keeping the grant a failed tool call's error carries (a refused authorization
 * server): the UI shows that error itself, so `/refresh` learns of the grant here.
 */
function keepingRefusedGrants(ui: AgentUi, refused: RefusedGrants): AgentUi {
  return new Proxy(ui, {
    get(target, key) {
      if (key === "toolEnd") {
        return (id: string, end: ToolCallEnd) => {
          refused.note(end.error);
          target.toolEnd(id, end);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
