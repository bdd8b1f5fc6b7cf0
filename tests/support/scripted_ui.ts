/**
 * An {@linkcode AgentUi} that records everything and answers questions from a script, so
 * that tests (and the agent benchmark) can drive the agent without a terminal and assert on
 * what a person would have seen. The program itself never uses it: runs use the REPL's
 * terminal UI, or `lib/ui/json_ui.ts` with `--json`.
 *
 * @module
 */

import type { ProgressUpdate } from "../../lib/connections/types.ts";
import type { RetryNotice } from "../../lib/llm/provider.ts";
import type {
  AgentUi,
  NoticeLevel,
  SamplingApprovalRequest,
  SamplingEnd,
  StepUsage,
  ToolApproval,
  ToolApprovalRequest,
  ToolCallEnd,
  ToolCallView,
} from "../../lib/agent/ui.ts";

/** One recorded call. */
export type UiEvent =
  | { type: "text"; text: string }
  | { type: "textDone" }
  | { type: "retry"; notice: RetryNotice }
  | { type: "toolStart"; call: ToolCallView }
  | { type: "toolProgress"; id: string; update: ProgressUpdate }
  | { type: "toolEnd"; id: string; end: ToolCallEnd }
  | { type: "notice"; level: NoticeLevel; text: string }
  | { type: "usage"; report: StepUsage }
  | { type: "approveTool"; request: ToolApprovalRequest; answer: ToolApproval }
  | { type: "approveSampling"; request: SamplingApprovalRequest; answer: boolean }
  | { type: "samplingEnd"; end: SamplingEnd };

/** Options of {@linkcode ScriptedUi}. */
export interface ScriptedUiOptions {
  /** Answers to tool approvals, in order, or a rule. @default always "yes" */
  toolApprovals?: ToolApproval[] | ((request: ToolApprovalRequest) => ToolApproval);
  /** Answers to sampling approvals, in order, or a rule. @default always true */
  samplingApprovals?: boolean[] | ((request: SamplingApprovalRequest) => boolean);
  /** Called after each event is recorded (tests abort turns from here). */
  onEvent?: (event: UiEvent, ui: ScriptedUi) => void;
}

/** Records every call; answers from the script. */
export class ScriptedUi implements AgentUi {
  readonly events: UiEvent[] = [];
  #options: ScriptedUiOptions;
  #toolAnswers: ToolApproval[];
  #samplingAnswers: boolean[];

  constructor(options: ScriptedUiOptions = {}) {
    this.#options = options;
    this.#toolAnswers = Array.isArray(options.toolApprovals) ? [...options.toolApprovals] : [];
    this.#samplingAnswers = Array.isArray(options.samplingApprovals)
      ? [...options.samplingApprovals]
      : [];
  }

  /** All streamed text so far. */
  get text(): string {
    return this.events.map((e) => e.type === "text" ? e.text : "").join("");
  }

  /** Events of one type. */
  ofType<T extends UiEvent["type"]>(type: T): Extract<UiEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<UiEvent, { type: T }> => e.type === type);
  }

  /** Notices' texts (for assertions). */
  get notices(): string[] {
    return this.ofType("notice").map((e) => `${e.level}: ${e.text}`);
  }

  #record(event: UiEvent): void {
    this.events.push(event);
    this.#options.onEvent?.(event, this);
  }

  textDelta(text: string): void {
    this.#record({ type: "text", text });
  }
  textDone(): void {
    this.#record({ type: "textDone" });
  }
  retry(notice: RetryNotice): void {
    this.#record({ type: "retry", notice });
  }
  toolStart(call: ToolCallView): void {
    this.#record({ type: "toolStart", call });
  }
  toolProgress(id: string, update: ProgressUpdate): void {
    this.#record({ type: "toolProgress", id, update });
  }
  toolEnd(id: string, end: ToolCallEnd): void {
    this.#record({ type: "toolEnd", id, end });
  }
  notice(level: NoticeLevel, text: string): void {
    this.#record({ type: "notice", level, text });
  }
  usage(report: StepUsage): void {
    this.#record({ type: "usage", report });
  }
  samplingEnd(end: SamplingEnd): void {
    this.#record({ type: "samplingEnd", end });
  }

  approveToolCall(request: ToolApprovalRequest, signal: AbortSignal): Promise<ToolApproval> {
    signal.throwIfAborted();
    const rule = this.#options.toolApprovals;
    const answer = typeof rule === "function" ? rule(request) : this.#toolAnswers.shift() ?? "yes";
    this.#record({ type: "approveTool", request, answer });
    return Promise.resolve(answer);
  }

  approveSampling(request: SamplingApprovalRequest, signal: AbortSignal): Promise<boolean> {
    signal.throwIfAborted();
    const rule = this.#options.samplingApprovals;
    const answer = typeof rule === "function"
      ? rule(request)
      : this.#samplingAnswers.shift() ?? true;
    this.#record({ type: "approveSampling", request, answer });
    return Promise.resolve(answer);
  }
}
