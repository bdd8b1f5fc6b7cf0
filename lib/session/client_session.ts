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
 * The session's parts live by job: its options in `session_options.ts`, the steps of
 * start-up (remembered approvals, resuming, connecting) in `session_start.ts`, what a
 * message needs before it goes (servers waited for, mentions read) in `turn_setup.ts`.
 *
 * @module
 */

import type { Surface } from "../agent/tool_failure.ts";
import process from "node:process";
import type { Agent, TurnResult } from "../agent/agent.ts";
import type { StoredAttachment } from "../memory/types.ts";
import type { OutgoingMessage } from "../agent/mentions.ts";
import type { AgentUi } from "../agent/ui.ts";
import { createModelSession, type ModelSession } from "../agent/model_session.ts";
import type { ConnectionManager, ServerChanges } from "../connections/manager.ts";
import type { ServerConfig } from "../config/types.ts";
import type { ServerRequestHandlers, ServerStatus } from "../connections/types.ts";
import { RefusedGrants } from "../deno_permission/refused_grant.ts";
import { CancelledError, PatchbayError } from "../errors.ts";
import type { Memory } from "../memory/mod.ts";
import { openMemory } from "../memory/mod.ts";
import { abortable } from "../async/abortable.ts";
import { statePath } from "../paths.ts";
import type { Runtime } from "../cli/startup.ts";
import { stderrStyle, stdoutStyle, type Style } from "../terminal/style.ts";
import { plural } from "../text/text.ts";
import { LineEditor } from "../terminal/line_editor.ts";
import { SkillRegistry } from "../skills/registry.ts";
import type { TerminalOutput } from "../ui/output.ts";
import { TerminalUi } from "../ui/terminal_ui.ts";
import { EventNotices } from "./event_notices.ts";
import type * as Options from "./options.ts";
import {
  connectServers,
  keepingRefusedGrants,
  promptStream,
  rememberedApprovals,
  resumeConversation,
  terminalWidth,
} from "./start.ts";
import { mentionAttachments, turnFooter, waitForServers } from "./turn_setup.ts";
import { SessionTasks } from "./tasks.ts";
import { SessionHooks } from "./hooks.ts";
import type { SessionEndReason } from "../hooks/turn_hooks.ts";
import type { Conversation } from "../memory/mod.ts";

/** Renders the server list in the colours of the stream it is written to. */
export type StatusRenderer = Options.StatusRenderer<ClientSession>;
/** Options of {@linkcode ClientSession.open}. */
export type ClientSessionOptions = Options.ClientSessionOptions<ClientSession>;

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
  /** The connected servers' skills (`/skills`, and the model's `load_skill`). */
  skills!: SkillRegistry;
  /** Skills `/skills use` loaded, which go with the next message. */
  readonly queuedSkills: StoredAttachment[] = [];
  /** The MCP tasks tool calls start, and their outcomes delivered (`session_tasks.ts`). */
  tasks?: SessionTasks;
  /** The session's hooks (docs/hooks.md). */
  hooks!: SessionHooks;
  /** The `SessionStart` hooks of the start, which the first message waits for. */
  #hooksStarted: Promise<void> = Promise.resolve();
  /** `/refresh` asked the launcher for a restart under an extended plan: the loop ends. */
  restartRequested = false;
  /**
   * Images `/call` brought (outside the conversation), each with how many messages the
   * conversation had then, for `/image`; `/clear` forgets them.
   */
  readonly calledImages: { at: number; image: StoredAttachment }[] = [];
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
      // Answers to a terminal are wrapped between words; to a pipe or a file, as they came.
      wrapColumns: () => Deno.stdout.isTerminal() ? terminalWidth() : Infinity,
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
    // Under a policy that requires approval, an answer lasts the session: none is
    // remembered for the folder, and none remembered before is used.
    const remembered = runtime.config.policy?.requireApproval
      ? undefined
      : await rememberedApprovals({
        output: this.output,
        presentError: this.presentError,
        notify: (text) => this.#notify(text),
      });
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
      ? await resumeConversation(this.memory, options.resume, this, options.signal)
      : this.memory.newSession();
    if (options.resume) {
      this.output.err(
        `Resuming session ${conversation.id} (${
          plural(conversation.messages.length, "message")
        })\n`,
      );
    }
    this.hooks = new SessionHooks({
      runtime,
      memory: () => this.memory,
      yes: options.yes ?? false,
      surface: this.#surface,
      tell: (notice) =>
        this.ui instanceof TerminalUi
          ? this.#notify(`${this.errStyle.yellow(`warning: ${notice.text}`)}\n`)
          : this.ui.notice(notice.level, notice.text, notice.detail),
    });
    await this.#connect(options);
    this.skills = new SkillRegistry(this.manager, { log: runtime.logger.child("skills") });
    this.tasks = new SessionTasks({
      manager: this.manager,
      memory: this.memory,
      redactor: runtime.logger.redactor,
      log: runtime.logger.child("tasks"),
      surface: this.#surface,
      notify: (text) => this.#notify(`${text}\n`),
      presentError: this.presentError,
      busy: () => this.busy || (this.agent?.running ?? false),
    });
    this.agent = this.model?.createAgent(this.manager, {
      skills: this.skills,
      history: conversation.messages,
      conversation: () => this.memory.session.id,
      // The folder goes with what the person asked: `patchbay sessions` lists by it.
      onMessage: (message) =>
        void this.memory.session.append(
          message.role === "user" ? { ...message, folder: Deno.cwd() } : message,
        ),
      surface: this.#surface,
      hooks: this.hooks.hooks,
    });
    this.tasks.agent = this.agent;
    // Tasks earlier sessions left: the interactive client follows them all, in the
    // background; `run` waits for those of the conversation it resumes that are over.
    if (this.#surface === "repl") void this.tasks.start("all");
    else if (options.resume) await this.tasks.start("conversation");
    // The prompt need not wait for the SessionStart hooks; the first message does.
    const source = options.resume ? "resume" : "startup";
    this.#hooksStarted = this.hooks.start(source, this.agent, options.signal);
    if (options.servers !== "background") await this.#hooksStarted;
  }

  /** `/clear`: a new conversation, the `SessionEnd` and `SessionStart` hooks around it. */
  async newConversation(): Promise<Conversation> {
    await this.hooks.end("clear");
    this.agent?.clear();
    const conversation = this.memory.newSession();
    await this.hooks.start("clear", this.agent);
    return conversation;
  }

  async #connect(options: ClientSessionOptions): Promise<void> {
    const background = options.servers === "background";
    this.manager = await connectServers({
      runtime: this.runtime,
      output: this.output,
      editor: this.editor,
      interactive: this.interactive,
      promptStyle: this.promptStyle,
      errStyle: this.errStyle,
      sampling: this.model?.sampling ?? this.#refuseSampling(),
      notify: (text) => this.#notify(text),
      surface: this.#surface,
      background,
      acceptFormDefaults: options.acceptFormDefaults ?? false,
      signal: options.signal,
      skip: options.skip,
      onSkip: options.onSkip,
    });
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

  /**
   * Sends `message` to the model and shows the answer; errors are shown, never thrown.
   * Only what the person typed (`message.typed`) is read for mentions.
   */
  async runTurn(message: OutgoingMessage): Promise<TurnResult | undefined> {
    if (!this.agent) {
      this.output.err(`${this.presentError(this.modelError)}\n`);
      return undefined;
    }
    const agent = this.agent;
    const controller = new AbortController();
    this.#turn = controller;
    const started = performance.now();
    try {
      await waitForServers({
        manager: this.manager,
        connectWaitSeconds: this.runtime.config.agent.connectWaitSeconds,
        output: this.output,
        editor: this.editor,
        errStyle: this.errStyle,
      }, controller.signal);
      const mentioned = await this.editor.whileBusy(
        () => this.mentionAttachments(message.typed, controller.signal),
        () => controller.abort(),
      );
      const attachments = [
        ...this.queuedSkills.splice(0),
        ...message.attachments ?? [],
        ...mentioned,
      ];
      await this.#hooksStarted;
      if (this.ui instanceof TerminalUi) this.ui.thinking();
      const result = await this.editor.whileBusy(
        () => agent.runTurn(message.text, { signal: controller.signal, attachments }),
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
      await this.tasks?.turnEnded();
    }
  }

  /**
   * The resources `typed` mentions (`@server:uri`, see lib/agent/mentions.ts), read now and
   * each named to the person (an image with the path it was saved to). `typed` is what the
   * person typed, never a server's text. Throws `MentionReadError` for one that cannot be
   * read: the message must then not be sent.
   */
  mentionAttachments(typed: string, signal?: AbortSignal): Promise<StoredAttachment[]> {
    const servers = this.runtime.config.servers.map((server) => server.name);
    return mentionAttachments(typed, { servers, manager: this.manager, ui: this.ui }, signal);
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
    this.output.err(this.errStyle.dim(`  ${turnFooter(result, ms)}\n`));
  }

  /**
   * Writes a warning that comes unprompted from outside the session's own events (a wire
   * trace that stopped writing) the way its events are written, around the prompt.
   */
  warn(text: string): void {
    this.#notify(`${this.errStyle.yellow(text)}\n`);
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

  /**
   * Runs the `SessionEnd` hooks (`reason`), then closes servers, memory and the model
   * client, in that order.
   */
  async close(reason: SessionEndReason = "other"): Promise<void> {
    this.interrupt();
    await this.hooks?.end(reason);
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.editor.close();
    await this.tasks?.close();
    await this.manager?.close();
    await this.memory?.close();
    await this.model?.approval.flush();
    this.model?.close();
  }
}
