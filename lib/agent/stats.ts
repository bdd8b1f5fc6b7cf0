/**
 * Usage of the session, for `/api_stats` and for enforcing the AgentConfig limits: model
 * requests and tokens (session, per model, chat and sampling apart), tool calls per server
 * with their failures, and what each limit leaves.
 *
 * Session limits count every model request patchbay makes, chat and sampling alike: a
 * server's sampling requests cost the same tokens as the user's own.
 *
 * @module
 */

import type { AgentLimits } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { TokenUsage } from "../llm/provider.ts";
import type { PricePerMillionTokens } from "../llm/prices.ts";
import { plural } from "../text/text.ts";
import { cacheLine, type CostEstimate, costLine, estimateCost } from "./usage_cost.ts";

/** Tokens and requests of one slice of the session. */
export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Requests whose usage was estimated (the provider reported none). */
  estimatedRequests: number;
  /** Prompt tokens the provider's prompt cache served (part of `promptTokens`). */
  cacheReadTokens: number;
  /** Prompt tokens written to the provider's prompt cache (part of `promptTokens`). */
  cacheWriteTokens: number;
}

/** How a tool call ended. */
export type ToolOutcome = "ok" | "error" | "timeout" | "cancelled" | "declined";

/** Tool calls to one server. */
export interface ToolTotals {
  calls: number;
  errors: number;
  timeouts: number;
  cancelled: number;
  declined: number;
  /** Milliseconds spent in calls that ran. */
  totalMs: number;
}

/** One limit and what is left of it. */
export interface LimitStatus {
  /** The AgentConfig field. */
  name: "request_limit" | "total_tokens_limit" | "sampling_request_limit";
  used: number;
  limit: number | undefined;
  /** `"unlimited"` when unset; never negative. */
  remaining: number | "unlimited";
}

/** A plain-data copy of the statistics at one moment. */
export interface StatsSnapshot {
  startedAt: Date;
  /** Chat and sampling together. */
  session: UsageTotals;
  chat: UsageTotals;
  sampling: UsageTotals;
  byModel: Record<string, UsageTotals>;
  samplingByServer: Record<string, UsageTotals>;
  tools: Record<string, ToolTotals>;
  /** Retries of failed model requests (not counted as requests). */
  retries: number;
  /** Model requests that failed after their retries. */
  failedRequests: number;
  limits: LimitStatus[];
  maxSteps: number;
  toolCallTimeoutSeconds: number;
  /** `AgentConfig.sampling_per_tool_call`, and the most one tool call has made so far. */
  samplingPerToolCall: { limit: number; mostInOneCall: number };
  /** What the session cost, estimated from the models' prices (`lib/llm/prices.ts`). */
  cost: CostEstimate;
}

const emptyTotals = (): UsageTotals => ({
  requests: 0,
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
  estimatedRequests: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

const emptyTools = (): ToolTotals => ({
  calls: 0,
  errors: 0,
  timeouts: 0,
  cancelled: 0,
  declined: 0,
  totalMs: 0,
});

/** The session's counters. */
export class UsageStats {
  readonly startedAt: Date;
  readonly limits: AgentLimits;
  #chat = emptyTotals();
  #sampling = emptyTotals();
  #byModel = new Map<string, UsageTotals>();
  #samplingByServer = new Map<string, UsageTotals>();
  #tools = new Map<string, ToolTotals>();
  #retries = 0;
  #failed = 0;
  /** The share of the limits held by admitted requests that have not ended (limits.ts). */
  #held = { requests: 0, tokens: 0 };
  /** Sampling requests admitted (answered, failed or under way), as their limit counts. */
  #samplingAdmitted = 0;
  /** Per server: its tool calls running, and the sampling requests made while they run. */
  #toolCallsOpen = new Map<string, { calls: number; sampled: number }>();
  #mostSampledInOneCall = 0;
  #price: PricePerMillionTokens | undefined;

  /** `price`: `LLM.price`, which replaces the price table's for every model of the session. */
  constructor(limits: AgentLimits, startedAt = new Date(), price?: PricePerMillionTokens) {
    this.limits = limits;
    this.startedAt = startedAt;
    this.#price = price;
  }

  /** Records one completed model request. */
  recordRequest(
    kind: "chat" | "sampling",
    model: string,
    usage: TokenUsage,
    details: { retries?: number; server?: string } = {},
  ): void {
    add(kind === "chat" ? this.#chat : this.#sampling, usage);
    add(entry(this.#byModel, model, emptyTotals), usage);
    if (kind === "sampling") {
      add(entry(this.#samplingByServer, details.server ?? "unknown", emptyTotals), usage);
    }
    this.#retries += details.retries ?? 0;
  }

  /** Records a model request that failed for good (after `retries` retries). */
  recordFailure(retries = 0): void {
    this.#failed++;
    this.#retries += retries;
  }

  /** Records one tool call's outcome. */
  recordToolCall(server: string, outcome: ToolOutcome, durationMs: number): void {
    const totals = entry(this.#tools, server, emptyTools);
    totals.calls++;
    totals.totalMs += durationMs;
    if (outcome === "error") totals.errors++;
    if (outcome === "timeout") totals.timeouts++;
    if (outcome === "cancelled") totals.cancelled++;
    if (outcome === "declined") totals.declined++;
  }

  /**
   * A tool call of `server` started: the sampling requests it makes until
   * {@linkcode toolCallEnded} count toward `sampling_per_tool_call`. A server's requests
   * carry no mark of the call that caused them, so while several calls of one server
   * overlap, they share one count (the stricter reading).
   */
  toolCallStarted(server: string): void {
    const open = entry(this.#toolCallsOpen, server, () => ({ calls: 0, sampled: 0 }));
    open.calls++;
  }

  /** A tool call of `server` ended (however it ended). */
  toolCallEnded(server: string): void {
    const open = this.#toolCallsOpen.get(server);
    if (!open) return;
    open.calls--;
    if (open.calls <= 0) this.#toolCallsOpen.delete(server);
  }

  /** Sampling requests `server` made in its running tool call(s); `undefined` when none runs. */
  samplingInToolCall(server: string): number | undefined {
    return this.#toolCallsOpen.get(server)?.sampled;
  }

  /** Sampling requests admitted in the session (answered, failed or under way). */
  get samplingRequests(): number {
    return this.#samplingAdmitted;
  }

  /** Counts one admitted sampling request of `server` (limits.ts `admitSampling`). */
  countSampling(server: string): void {
    this.#samplingAdmitted++;
    const open = this.#toolCallsOpen.get(server);
    if (open) {
      open.sampled++;
      this.#mostSampledInOneCall = Math.max(this.#mostSampledInOneCall, open.sampled);
    }
  }

  /** Adds to (or, negative, gives back) the share held by requests under way. */
  hold(requests: number, tokens: number): void {
    this.#held.requests += requests;
    this.#held.tokens += tokens;
  }

  /** Admitted requests that have not ended yet. */
  get heldRequests(): number {
    return this.#held.requests;
  }

  /** Tokens held by requests under way: their estimated prompts and answer caps. */
  get heldTokens(): number {
    return this.#held.tokens;
  }

  /** Requests made in the session (chat and sampling), as the limits count them. */
  get requests(): number {
    return this.#chat.requests + this.#sampling.requests;
  }

  /** Tokens used in the session (chat and sampling), as the limits count them. */
  get totalTokens(): number {
    return this.#chat.totalTokens + this.#sampling.totalTokens;
  }

  snapshot(): StatsSnapshot {
    const session = emptyTotals();
    for (const part of [this.#chat, this.#sampling]) {
      session.requests += part.requests;
      session.promptTokens += part.promptTokens;
      session.completionTokens += part.completionTokens;
      session.totalTokens += part.totalTokens;
      session.estimatedRequests += part.estimatedRequests;
      session.cacheReadTokens += part.cacheReadTokens;
      session.cacheWriteTokens += part.cacheWriteTokens;
    }
    const byModel = copyMap(this.#byModel);
    return {
      startedAt: this.startedAt,
      session,
      chat: { ...this.#chat },
      sampling: { ...this.#sampling },
      byModel,
      samplingByServer: copyMap(this.#samplingByServer),
      tools: copyMap(this.#tools),
      retries: this.#retries,
      failedRequests: this.#failed,
      limits: [
        limitStatus("request_limit", this.requests, this.limits.requestLimit),
        limitStatus("total_tokens_limit", this.totalTokens, this.limits.totalTokensLimit),
        limitStatus(
          "sampling_request_limit",
          this.#samplingAdmitted,
          this.limits.samplingRequestLimit ?? DEFAULTS.agent.samplingRequestLimit,
        ),
      ],
      maxSteps: this.limits.maxSteps,
      toolCallTimeoutSeconds: this.limits.toolCallTimeoutSeconds,
      samplingPerToolCall: {
        limit: this.limits.samplingPerToolCall ?? DEFAULTS.agent.samplingPerToolCall,
        mostInOneCall: this.#mostSampledInOneCall,
      },
      cost: estimateCost(byModel, this.#price),
    };
  }
}

function limitStatus(
  name: LimitStatus["name"],
  used: number,
  limit: number | undefined,
): LimitStatus {
  return {
    name,
    used,
    limit,
    remaining: limit === undefined ? "unlimited" : Math.max(0, limit - used),
  };
}

function add(totals: UsageTotals, usage: TokenUsage): void {
  totals.requests++;
  totals.promptTokens += usage.promptTokens;
  totals.completionTokens += usage.completionTokens;
  totals.totalTokens += usage.totalTokens;
  totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
  totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  if (usage.estimated) totals.estimatedRequests++;
}

function entry<T>(map: Map<string, T>, key: string, create: () => T): T {
  let value = map.get(key);
  if (!value) map.set(key, value = create());
  return value;
}

function copyMap<T extends object>(map: Map<string, T>): Record<string, T> {
  return Object.fromEntries([...map].map(([k, v]) => [k, { ...v }]));
}

const number = (n: number) => n.toLocaleString("en-US");

/** Options of {@linkcode formatStats}. */
export interface FormatStatsOptions {
  /** @default new Date() */
  now?: Date;
}

/** The text `/api_stats` prints. Pure: the same snapshot always gives the same text. */
export function formatStats(stats: StatsSnapshot, options: FormatStatsOptions = {}): string {
  const now = options.now ?? new Date();
  const lines: string[] = [];
  lines.push(
    `Session usage (since ${stats.startedAt.toISOString()}, ${
      duration(now.getTime() - stats.startedAt.getTime())
    })`,
  );
  lines.push(
    `  Requests:          ${number(stats.session.requests)}` +
      (stats.sampling.requests > 0
        ? ` (chat ${number(stats.chat.requests)}, sampling ${number(stats.sampling.requests)})`
        : ""),
  );
  lines.push(`  Prompt tokens:     ${number(stats.session.promptTokens)}`);
  lines.push(...cacheLine(stats.session));
  lines.push(`  Completion tokens: ${number(stats.session.completionTokens)}`);
  lines.push(
    `  Total tokens:      ${number(stats.session.totalTokens)}` +
      estimatedNote(stats.session),
  );
  lines.push(...costLine(stats.cost));
  if (stats.retries > 0 || stats.failedRequests > 0) {
    lines.push(
      `  Retries:           ${number(stats.retries)}; failed requests: ${
        number(stats.failedRequests)
      }`,
    );
  }

  const models = Object.entries(stats.byModel);
  if (models.length > 0) {
    lines.push("", "By model");
    for (const [model, totals] of models.sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(
        `  ${model}: ${plural(totals.requests, "request")}, ${number(totals.promptTokens)} prompt${
          totals.cacheReadTokens > 0 ? ` (${number(totals.cacheReadTokens)} from cache)` : ""
        } + ${number(totals.completionTokens)} completion = ${number(totals.totalTokens)} tokens${
          estimatedNote(totals)
        }`,
      );
    }
  }

  const sampling = Object.entries(stats.samplingByServer);
  if (sampling.length > 0) {
    lines.push("", "Sampling (model requests made for servers)");
    for (const [server, totals] of sampling.sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(
        `  ${server}: ${plural(totals.requests, "request")}, ${number(totals.totalTokens)} tokens${
          estimatedNote(totals)
        }`,
      );
    }
  }

  lines.push("", "Tool calls");
  const tools = Object.entries(stats.tools);
  if (tools.length === 0) lines.push("  none yet");
  for (const [server, t] of tools.sort(([a], [b]) => a.localeCompare(b))) {
    const problems = [
      t.errors > 0 ? plural(t.errors, "error") : undefined,
      t.timeouts > 0 ? plural(t.timeouts, "timeout") : undefined,
      t.cancelled > 0 ? `${number(t.cancelled)} cancelled` : undefined,
      t.declined > 0 ? `${number(t.declined)} declined` : undefined,
    ].filter(Boolean);
    lines.push(
      `  ${server}: ${plural(t.calls, "call")}` +
        (problems.length > 0 ? ` (${problems.join(", ")})` : "") +
        (t.totalMs > 0 ? `, ${(t.totalMs / 1000).toFixed(1)} s in tools` : ""),
    );
  }

  lines.push("", "Limits (AgentConfig)");
  for (const limit of stats.limits) {
    lines.push(
      limit.limit === undefined
        ? `  ${limit.name}: unlimited (${number(limit.used)} used)`
        : `  ${limit.name}: ${number(limit.used)} of ${number(limit.limit)} used, ${
          number(limit.remaining as number)
        } remaining`,
    );
  }
  lines.push(`  max_steps: ${number(stats.maxSteps)} per turn`);
  lines.push(`  tool_call_timeout: ${stats.toolCallTimeoutSeconds} s`);
  if (stats.samplingPerToolCall) {
    const { limit, mostInOneCall } = stats.samplingPerToolCall;
    lines.push(
      `  sampling_per_tool_call: ${number(limit)} per tool call (most in one call so far: ` +
        `${number(mostInOneCall)})`,
    );
  }
  return lines.join("\n");
}

function estimatedNote(totals: UsageTotals): string {
  if (totals.estimatedRequests === 0) return "";
  return totals.estimatedRequests === totals.requests
    ? " (estimated: the provider reported no usage)"
    : ` (${number(totals.estimatedRequests)} of ${
      plural(totals.requests, "request")
    } estimated: the provider reported no usage)`;
}

function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
