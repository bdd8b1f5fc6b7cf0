/**
 * The agent loop: one user message in, model steps and tool calls until the model answers
 * without calling tools, within the AgentConfig limits.
 *
 * Each step sends the system prompt, the history trimmed to `LLM.max_context_length`, and
 * the tool catalogue; streams the answer to the UI; and runs the tool calls it asks for
 * (see `tool_runner.ts`). Every message that becomes part of the conversation is passed to
 * `onMessage` as it is made, in order, so the caller can persist it; the history is
 * consistent after every turn, however it ended (answered, limited, failed, cancelled, or
 * the UI failed: its error is rethrown as it was thrown, see `ui_guard.ts`).
 *
 * @module
 */

import type { CatalogueTool, ToolHost } from "../connections/types.ts";
import type { AgentLimits, LlmConfig } from "../config/types.ts";
import { CancelledError, PatchbayError } from "../errors.ts";
import { STEPS } from "../errors/failure_table.ts";
import { imagesRefused, refusesImages } from "./image_refusal.ts";
import type {
  ChatMessage,
  GenerateResult,
  ModelProvider,
  TokenUsage,
  ToolDefinition,
} from "../llm/provider.ts";
import { estimateTextTokens, TokenEstimator } from "../llm/tokens.ts";
import { type Log, silentLog } from "../log/log.ts";
import type { StoredAttachment, StoredMessage } from "../memory/types.ts";
import { visionInEffect } from "../providers.ts";
import { DEFAULTS } from "../defaults.ts";
import type { ApprovalPolicy } from "./approval.ts";
import { repairHistory, toChatMessages, trimHistory } from "./history.ts";
import { saveImage } from "./image_store.ts";
import { ToolSearch } from "./tool_search.ts";
import { type SkillSource, SkillTool } from "./skill_tool.ts";
import { type Admission, admitRequest, maxStepsError } from "./limits.ts";
import type { UsageStats } from "./stats.ts";
import { systemPrompt } from "./system_prompt.ts";
import { runToolCalls } from "./tool_runner.ts";
import type { Surface } from "./tool_failure.ts";
import type { AgentUi, NoticeLevel } from "./ui.ts";
import { UiGuard } from "./ui_guard.ts";
import type { Hooks } from "../hooks/hooks.ts";
import type { HookStop } from "./tool_run_hooks.ts";
import { promptStep, stopStep, withHookContext } from "./turn_hook_steps.ts";
import { tracedTurn } from "../telemetry/turn_span.ts";

/** Appended to an answer the user interrupted, so the model knows on the next turn. */
export const INTERRUPTED_NOTE = "[answer interrupted by the user]";

/**
 * Most tool calls one answer of the model runs; it runs them at once. The model is
 * untrusted: one answer can name a hundred thousand calls within its size limit, each a
 * request to a server and a message in the conversation. Real parallel calls are a few;
 * the calls past this are dropped from the answer before it joins the conversation, and
 * the person is told.
 */
export const MAX_TOOL_CALLS_PER_STEP = 64;

/** Everything an {@linkcode Agent} works with. */
export interface AgentOptions {
  provider: ModelProvider;
  /** The tool catalogue and how to call it (the connection manager). */
  tools: ToolHost;
  ui: AgentUi;
  llm: Pick<
    LlmConfig,
    "maxTokens" | "temperature" | "maxContextLength" | "systemPrompt" | "vision"
  >;
  limits: AgentLimits;
  /** Shared with the sampling handler, so that limits count both. */
  stats: UsageStats;
  approval: ApprovalPolicy;
  /** Called with each message added to the conversation, in order (persist it here). */
  onMessage?: (message: StoredMessage) => void;
  /** A conversation to continue (repaired if it was cut short). */
  history?: readonly StoredMessage[];
  log?: Log;
  /** @default () => new Date() */
  now?: () => Date;
  /** Where tool failures are shown, which decides the commands remedies name. @default "repl" */
  surface?: Surface;
  /** The conversation's id, kept with the tasks its tool calls start. */
  conversation?: () => string | undefined;
  /**
   * Keeps an image a tool returned for the person and returns its path.
   * @default saved under the state folder's `images/`
   */
  saveImage?: (mimeType: string, data: string) => Promise<string>;
  /** The connected servers' skills, offered through `load_skill` (`skill_tool.ts`). */
  skills?: SkillSource;
  /** The session's hooks (docs/hooks.md). @default none */
  hooks?: Hooks;
}

/** What a completed turn produced. */
export interface TurnResult {
  /** The final answer (`null` if the model ended without text). */
  text: string | null;
  /** Model requests made in the turn. */
  steps: number;
  toolCalls: number;
  /** Tokens of the turn's requests (estimated if any request's were). */
  usage: TokenUsage;
}

/** Options of {@linkcode Agent.runTurn}. */
export interface TurnOptions {
  /** Aborting stops the stream and running tool calls; the turn rejects with `CancelledError`. */
  signal?: AbortSignal;
  /** Resources the message mentioned (`@server:uri`), read already; stored with it. */
  attachments?: StoredAttachment[];
}

/** One conversation with the model. */
export class Agent {
  #options: AgentOptions;
  #history: StoredMessage[];
  #estimator = new TokenEstimator();
  #log: Log;
  #now: () => Date;
  #running = false;
  #trimNoticeShown = false;
  /** The answer cap of the last request was lowered to stay within total_tokens_limit. */
  #lastCapped = false;
  #search: ToolSearch;
  #skills: SkillTool;
  /** What the `SessionStart` hooks gave the model: with the system prompt of each request. */
  #sessionContext: readonly string[] = [];

  constructor(options: AgentOptions) {
    this.#options = options;
    this.#search = new ToolSearch(options.limits.toolSearch ?? DEFAULTS.agent.toolSearch);
    this.#skills = new SkillTool(options.skills, options.surface);
    this.#log = options.log ?? silentLog;
    this.#now = options.now ?? (() => new Date());
    this.#history = repairHistory(options.history ?? [], this.#now());
  }

  /** Whether a turn is running. */
  get running(): boolean {
    return this.#running;
  }

  /** The conversation so far (without the system prompt). */
  get history(): readonly StoredMessage[] {
    return this.#history;
  }

  /** Whether images go to the model as image parts (`LLM.vision`, `auto` decided). */
  get vision(): boolean {
    const { llm, provider } = this.#options;
    return visionInEffect(llm.vision ?? DEFAULTS.llm.vision, provider.provider, provider.model);
  }

  /** Context from the `SessionStart` hooks, sent with the system prompt from now on. */
  setSessionContext(context: readonly string[]): void {
    this.#sessionContext = context;
  }

  /** Starts a new conversation (usage statistics and approvals stay with the session). */
  clear(): void {
    this.#history = [];
    this.#search.clear();
    this.#trimNoticeShown = false;
  }

  /**
   * Runs one turn. Resolves with the answer; rejects with a `PatchbayError`:
   * `LimitReachedError` (a session limit or max_steps), `CancelledError` (the signal), or the
   * provider's error (`AuthenticationFailedError`, `RateLimitError`, ...); or with exactly
   * what the UI threw (EPIPE when stdout is a closed pipe). The history is consistent in
   * every case: each tool call has its result.
   */
  async runTurn(input: string, options: TurnOptions = {}): Promise<TurnResult> {
    if (this.#running) throw new Error("Agent.runTurn called while a turn is running");
    this.#running = true;
    try {
      // The turn's span: the root of the trace its requests and tool calls belong to.
      return await tracedTurn(
        this.#options.provider,
        input,
        () =>
          this.#turn(input, options.signal ?? new AbortController().signal, options.attachments),
      );
    } finally {
      this.#running = false;
    }
  }

  async #turn(
    input: string,
    signal: AbortSignal,
    attachments: StoredAttachment[] | undefined,
  ): Promise<TurnResult> {
    const { limits, stats } = this.#options;
    if (signal.aborted) throw new CancelledError("the turn");
    const guard = new UiGuard();
    const { hooks, ui: hookUi, surface } = this.#options;
    const hookContext = { hooks, ui: hookUi, guard, signal, surface };
    // A prompt a hook refuses never joins the conversation.
    const content = await promptStep(input, hookContext);
    if (signal.aborted) throw new CancelledError("the turn");
    // The user's message joins the history at once (the first request needs it) but is
    // only reported to `onMessage` once that request is admitted: a turn refused by a limit
    // leaves no trace.
    const user: StoredMessage = {
      role: "user",
      content,
      timestamp: this.#now().toISOString(),
      ...(attachments?.length ? { attachments } : {}),
    };
    this.#history.push(user);
    let committed = false;
    const commit = () => {
      if (committed) return;
      committed = true;
      this.#emit(user);
    };
    try {
      const turnUsage: TokenUsage = {
        promptTokens: 0,
        completionTokens: 0,
        totalTokens: 0,
        estimated: false,
      };
      let toolCalls = 0;
      let stopHookActive = false;
      const hookStop: HookStop = {};
      for (let step = 1; step <= limits.maxSteps; step++) {
        if (signal.aborted) throw new CancelledError("the turn");
        const catalogue = this.#options.tools.tools();
        const tell = (level: NoticeLevel, text: string) =>
          guard.tell(() => this.#options.ui.notice(level, text));
        await this.#skills.refresh(signal, tell);
        const { result: answered, streamed, durationMs } = await this.#step(
          catalogue,
          signal,
          guard,
          commit,
        );
        const result = this.#boundToolCalls(answered, guard);
        addUsage(turnUsage, result.usage);
        this.#append({
          role: "assistant",
          content: result.content,
          ...(result.toolCalls.length > 0 ? { toolCalls: result.toolCalls } : {}),
          model: result.model,
          timestamp: this.#now().toISOString(),
        });
        // Told once the answer is in the conversation, so a failing UI loses nothing.
        const { ui } = this.#options;
        if (streamed) guard.tell(() => ui.textDone());
        guard.tell(() =>
          ui.usage({
            step,
            model: result.model,
            usage: result.usage,
            durationMs,
            session: { requests: stats.requests, totalTokens: stats.totalTokens },
          })
        );
        if (result.toolCalls.length === 0) {
          this.#warnAboutFinish(result, guard);
          guard.throwIfFailed();
          const goOn = await stopStep(result.content, stopHookActive, hookContext);
          if (goOn === undefined) {
            return { text: result.content, steps: step, toolCalls, usage: turnUsage };
          }
          // A Stop hook makes the turn go on (within max_steps), its reason told to the model.
          stopHookActive = true;
          this.#append({ role: "user", content: goOn, timestamp: this.#now().toISOString() });
          continue;
        }
        toolCalls += result.toolCalls.length;
        // Searches and skills are answered here; the other calls go to their servers.
        const searches = result.toolCalls.filter((c) => this.#search.handles(c.name, catalogue));
        const skills = result.toolCalls.filter((c) => this.#skills.handles(c.name));
        const served = result.toolCalls.filter((c) => !searches.includes(c) && !skills.includes(c));
        for (const call of served) this.#search.markUsed(call.name);
        // Run even when the UI has failed: every call then ends cancelled, so each has its
        // result in the history.
        const ran = await runToolCalls(served, catalogue, {
          host: this.#options.tools,
          ui,
          guard,
          stats,
          approval: this.#options.approval,
          toolCallTimeoutSeconds: limits.toolCallTimeoutSeconds,
          signal,
          log: this.#log,
          now: this.#now,
          surface: this.#options.surface,
          saveImage: this.#options.saveImage ?? saveImage,
          conversation: this.#options.conversation?.(),
          hooks: this.#options.hooks,
          hookStop,
        });
        const loaded = await Promise.all(
          skills.map((call) => this.#skills.answer(call, signal, this.#now())),
        );
        const messages = result.toolCalls.map((call) => {
          const skill = loaded[skills.indexOf(call)];
          if (skill) {
            guard.tell(() => ui.notice(skill.level, skill.notice, skill.detail));
            return skill.message;
          }
          if (!searches.includes(call)) return ran[served.indexOf(call)];
          const answer = this.#search.answer(call, catalogue, this.#now());
          guard.tell(() =>
            ui.notice("info", answer.notice, { kind: "tool_search", loaded: answer.loaded })
          );
          return answer.message;
        });
        for (const message of messages) this.#append(message);
        guard.throwIfFailed();
        if (signal.aborted) throw new CancelledError("the turn");
        // A hook ended the turn ("continue": false): every call has its result.
        if (hookStop.error) throw hookStop.error;
      }
      throw maxStepsError(limits.maxSteps);
    } catch (error) {
      if (!committed) this.#history.splice(this.#history.indexOf(user), 1);
      throw error;
    }
  }

  /** `result` with at most {@linkcode MAX_TOOL_CALLS_PER_STEP} tool calls; the cut told. */
  #boundToolCalls(result: GenerateResult, guard: UiGuard): GenerateResult {
    const count = result.toolCalls.length;
    if (count <= MAX_TOOL_CALLS_PER_STEP) return result;
    const { ui } = this.#options;
    guard.tell(() =>
      ui.notice(
        "warning",
        `the model asked for ${count} tool calls in one answer; the first ` +
          `${MAX_TOOL_CALLS_PER_STEP} run, the other ${
            count - MAX_TOOL_CALLS_PER_STEP
          } were dropped`,
      )
    );
    return { ...result, toolCalls: result.toolCalls.slice(0, MAX_TOOL_CALLS_PER_STEP) };
  }

  #warnAboutFinish(result: GenerateResult, guard: UiGuard): void {
    const { ui } = this.#options;
    if (result.finishReason === "length") {
      const text = this.#lastCapped
        ? "The answer was cut off to stay within AgentConfig.total_tokens_limit; raise " +
          "the limit to let the session go on."
        : "The answer was cut off at LLM.max_tokens; raise it in servers_config.json for " +
          "longer answers, or ask the model to continue.";
      guard.tell(() => ui.notice("warning", text));
    } else if (result.finishReason === "content_filter") {
      guard.tell(() => ui.notice("warning", "The provider's content filter stopped the answer."));
    }
  }

  /**
   * One model request: admitted by the limits (holding its share until it ends), streamed
   * to the UI, accounted.
   */
  async #step(
    catalogue: readonly CatalogueTool[],
    signal: AbortSignal,
    guard: UiGuard,
    onAdmitted: () => void,
  ): Promise<{ result: GenerateResult; streamed: boolean; durationMs: number }> {
    const { provider, ui, stats, limits, llm } = this.#options;
    const tools = [...this.#search.definitions(catalogue), ...this.#skills.definitions()];
    const messages = this.#requestMessages(tools, guard);
    const sendsImages = messages.some((m) =>
      m.role === "user" && Array.isArray(m.content) && m.content.some((p) => p.type === "image")
    );
    guard.throwIfFailed();
    const rawPrompt = this.#estimator.raw(messages, tools);
    const admission = admitRequest(
      stats,
      limits,
      this.#estimator.scale(rawPrompt),
      llm.maxTokens,
    );
    try {
      onAdmitted();
      let partial = "";
      // Whether the UI has text on the current line, which `textDone` ends.
      let streamed = false;
      let retries = 0;
      const started = performance.now();
      let result: GenerateResult;
      try {
        result = await provider.generate({
          messages,
          tools,
          maxTokens: admission.maxTokens,
          temperature: llm.temperature,
          signal,
          onDelta: (text) => {
            partial += text;
            streamed = true;
            guard.call(() => ui.textDelta(text));
          },
          // Before `onRetry`: the text of the failed attempt is still in `partial`.
          admitRetry: (notice) => admission.retry(notice, partial),
          onRetry: (notice) => {
            retries++;
            if (notice.discardedPartial) partial = "";
            guard.call(() => ui.retry(notice));
          },
        });
      } catch (error) {
        if (guard.failed) {
          // The UI's own error (rethrown by the turn); the request was abandoned with it.
          this.#recordInterrupted(rawPrompt, partial, admission, retries);
          throw error;
        }
        if (streamed) guard.tell(() => ui.textDone());
        if (error instanceof CancelledError || signal.aborted) {
          this.#recordInterrupted(rawPrompt, partial, admission, retries);
          throw error instanceof CancelledError ? error : new CancelledError("the turn");
        }
        // Attempts that reached the model before failing may have been billed.
        const spent = admission.withSpent();
        if (spent) stats.recordRequest("chat", provider.model, spent);
        stats.recordFailure(retries);
        if (sendsImages && refusesImages(error)) {
          throw imagesRefused(error);
        }
        throw error instanceof PatchbayError
          ? error
          : new PatchbayError("internal", String(error), {
            reason: "the model request failed in an unexpected way",
            remedy: STEPS.modelUnexpected,
            cause: error,
          });
      }
      if (!result.usage.estimated) this.#estimator.calibrate(rawPrompt, result.usage.promptTokens);
      stats.recordRequest("chat", result.model, admission.withSpent(result.usage)!, {
        retries: result.retries,
      });
      this.#lastCapped = admission.capped;
      return { result, streamed, durationMs: performance.now() - started };
    } finally {
      admission.release();
    }
  }

  /** The system prompt and as much of the history as fits the context budget. */
  #requestMessages(tools: ToolDefinition[], guard: UiGuard): ChatMessage[] {
    const { llm, ui } = this.#options;
    const prompt = withHookContext(systemPrompt(llm.systemPrompt), this.#sessionContext);
    const system: ChatMessage = { role: "system", content: prompt };
    const fixed = this.#estimator.prompt([system], tools);
    const budget = llm.maxContextLength - fixed;
    const trimmed = trimHistory(this.#history, Math.max(0, budget), this.#estimator);
    if (trimmed.dropped > 0 && !this.#trimNoticeShown) {
      this.#trimNoticeShown = true;
      guard.tell(() =>
        ui.notice(
          "info",
          `The conversation is longer than LLM.max_context_length (${llm.maxContextLength} ` +
            "tokens); older messages are no longer sent to the model.",
        )
      );
    }
    if (trimmed.overBudget) {
      guard.tell(() =>
        ui.notice(
          "warning",
          `The latest exchange alone needs about ${trimmed.tokens + fixed} tokens, more than ` +
            `LLM.max_context_length (${llm.maxContextLength}); the provider may reject it.`,
        )
      );
    }
    return [system, ...toChatMessages(trimmed.messages, { vision: this.vision })];
  }

  /** An interrupted answer: its text (marked) joins the history, its usage is estimated. */
  #recordInterrupted(
    rawPrompt: number,
    partial: string,
    admission: Admission,
    retries: number,
  ): void {
    const completion = estimateTextTokens(partial);
    const promptTokens = this.#estimator.scale(rawPrompt);
    // The provider billed the prompt and whatever it streamed, though it never said how much.
    const usage = admission.withSpent({
      promptTokens,
      completionTokens: completion,
      totalTokens: promptTokens + completion,
      estimated: true,
    })!;
    this.#options.stats.recordRequest("chat", this.#options.provider.model, usage, { retries });
    if (partial.trim() === "") return;
    this.#append({
      role: "assistant",
      content: `${partial}\n${INTERRUPTED_NOTE}`,
      model: this.#options.provider.model,
      timestamp: this.#now().toISOString(),
    });
  }

  /**
   * Adds a message that is not part of a turn (a task's outcome arriving later, see
   * docs/tasks.md) to the conversation, between turns only: the history stays consistent.
   */
  note(message: StoredMessage): void {
    if (this.#running) throw new Error("Agent.note called while a turn is running");
    this.#append(message);
  }

  #append(message: StoredMessage): void {
    this.#history.push(message);
    this.#emit(message);
  }

  #emit(message: StoredMessage): void {
    try {
      this.#options.onMessage?.(message);
    } catch (error) {
      // Persisting is the caller's business; a failing hook must not break the turn.
      this.#log.error("onMessage hook failed", { error });
    }
  }
}

function addUsage(total: TokenUsage, usage: TokenUsage): void {
  total.promptTokens += usage.promptTokens;
  total.completionTokens += usage.completionTokens;
  total.totalTokens += usage.totalTokens;
  total.estimated ||= usage.estimated;
  if (usage.cacheReadTokens) {
    total.cacheReadTokens = (total.cacheReadTokens ?? 0) + usage.cacheReadTokens;
  }
  if (usage.cacheWriteTokens) {
    total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + usage.cacheWriteTokens;
  }
}
