/**
 * The seam between the agent and whatever shows it to a person: the terminal REPL, a
 * non-interactive command, or a test's scripted stand-in. The agent reports what happens
 * through these calls and asks its questions through them; it never prints.
 *
 * Calls arrive in this order within a turn: for each model step, `textDelta`* then
 * `textDone` (only if text came), `usage`; then for each tool call `toolStart`,
 * `toolProgress`*, `toolEnd`. `retry`, `notice`, `approve*` and `sampling*` can arrive in
 * between. Text and names that come from servers or the model are passed on raw: the UI
 * must strip terminal escape sequences before printing them (`lib/terminal.ts`).
 *
 * A method that throws (stdout is a closed pipe) ends the turn: the agent stops the stream
 * and the running tool calls, keeps the conversation consistent, and rejects the turn with
 * exactly that error, never retried nor told to the model (`ui_guard.ts`).
 *
 * @module
 */

import type { ProgressUpdate } from "../connections/types.ts";
import type { TaskProgress } from "../connections/tasks/task_types.ts";
import type { PatchbayError } from "../errors.ts";
import type { RetryNotice, TokenUsage } from "../llm/provider.ts";
import type { ApprovalReason, LaunchChange, ToolApproval } from "./approval.ts";
import type { ToolOutcome } from "./stats.ts";

export type { ApprovalReason, ToolApproval } from "./approval.ts";
export type { ToolOutcome } from "./stats.ts";

/** A tool call as the user sees it. */
export interface ToolCallView {
  /** The model's id for the call; ties start, progress and end together. */
  id: string;
  /** Model-facing (catalogue) name. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** Parsed arguments (`undefined` when the model sent invalid JSON). */
  args: Record<string, unknown> | undefined;
  /** The arguments as one abridged line, ready to show. */
  argsPreview: string;
}

/** How a tool call ended. */
export interface ToolCallEnd {
  status: ToolOutcome;
  durationMs: number;
  /** The start of the result text, abridged to one line. */
  preview: string;
  /** For every status but `ok`: the error with its cause and remedy. */
  error?: PatchbayError;
  /** Characters cut from the result before it reached the model. */
  omittedChars: number;
}

/** A tool call waiting for the user's approval. */
export interface ToolApprovalRequest extends ToolCallView {
  title?: string;
  description?: string;
  /** Why the user is asked (again). */
  reason: ApprovalReason;
  /** For `server-changed`: which parts of the server's entry changed since the approval. */
  launchChange?: LaunchChange;
  /** The server's own hints (`readOnlyHint`, `destructiveHint`); untrusted. */
  annotations?: Record<string, unknown>;
  /** "always-project" may be answered: approvals can be remembered for this folder. */
  canRemember?: boolean;
  /**
   * For `hook`: why a hook asks (its reason, or that it failed). A hook's question is
   * answered by a person only: `--yes` does not answer it, and "always" is not offered.
   */
  hookReason?: string;
}

/** A server's sampling request waiting for the user's approval. */
export interface SamplingApprovalRequest {
  server: string;
  /** The model that would answer (patchbay's configured model). */
  model: string;
  systemPrompt?: string;
  /** The conversation the server sends, as text. */
  messages: { role: "user" | "assistant"; text: string }[];
  maxTokens: number;
  /** Models the server would prefer (hints only; patchbay uses its own). */
  modelHints: string[];
}

/** How a sampling request ended. */
export interface SamplingEnd {
  server: string;
  status: "ok" | "denied" | "error" | "cancelled";
  model?: string;
  usage?: TokenUsage;
  durationMs: number;
  /** The start of the answer, abridged, for `ok`. */
  preview?: string;
  error?: PatchbayError;
}

/** Usage of one model request, with the session's running totals. */
export interface StepUsage {
  /** Step within the turn, from 1. */
  step: number;
  model: string;
  usage: TokenUsage;
  durationMs: number;
  session: { requests: number; totalTokens: number };
}

export type NoticeLevel = "info" | "warning";

/**
 * What a notice is about, for scripts (`run --json` puts these fields beside the text):
 * a resource a mention attached, an image saved for the person, the tools a search loaded,
 * a skill the model loaded or that was refused.
 */
export type NoticeDetail =
  | {
    kind: "attachment";
    server: string;
    uri: string;
    mime_type?: string;
    bytes: number;
    path?: string;
  }
  | { kind: "image_saved"; server: string; tool: string; mime_type: string; path: string }
  /** Binary data a tool returned that is not an image (audio, a blob), saved. */
  | { kind: "file_saved"; server: string; tool: string; mime_type: string; path: string }
  | { kind: "tool_search"; loaded: string[] }
  | {
    kind: "skill";
    /** `loaded`: verified and given to the model; else nothing of it was used. */
    status: "loaded" | "refused" | "not_found" | "failed" | "cancelled";
    server?: string;
    /** `<server>:<skill path>`, or what the model asked for when no skill matched. */
    skill: string;
    /** The file within the skill (`SKILL.md`, `references/FORMS.md`). */
    file?: string;
    /** For every status but `loaded`: the error's code. */
    code?: string;
  }
  /** A hook failed (docs/hooks.md): the error as `--json` writes errors. */
  | {
    kind: "hook_failed";
    event: string;
    error: { code: string; message: string; cause: string; remedy: string };
  }
  /** A hook's words for the person (`systemMessage`), or a tool input a hook rewrote. */
  | { kind: "hook_message"; event: string }
  | { kind: "hook_rewrote_input"; server: string; tool: string; arguments: unknown };

/** Everything the agent tells or asks the person. */
export interface AgentUi {
  /** A piece of the model's answer, as it streams. */
  textDelta(text: string): void;
  /** The answer of the current step is complete (end the line). */
  textDone(): void;
  /** A model request failed and will be tried again after `notice.delayMs`. */
  retry(notice: RetryNotice): void;
  toolStart(call: ToolCallView): void;
  toolProgress(id: string, update: ProgressUpdate): void;
  /** The call runs as an MCP task: its status, as it changes (docs/tasks.md). */
  toolTask?(id: string, progress: TaskProgress): void;
  toolEnd(id: string, end: ToolCallEnd): void;
  /** Something worth saying that does not stop the turn; `detail` says it for scripts. */
  notice(level: NoticeLevel, text: string, detail?: NoticeDetail): void;
  /** After each model request. */
  usage(report: StepUsage): void;
  /** Asks whether to run a tool call. Aborting `signal` withdraws the question. */
  approveToolCall(request: ToolApprovalRequest, signal: AbortSignal): Promise<ToolApproval>;
  /** Asks whether to let a server use the model. Aborting `signal` withdraws it. */
  approveSampling(request: SamplingApprovalRequest, signal: AbortSignal): Promise<boolean>;
  /** A sampling request was answered, refused or failed. */
  samplingEnd(end: SamplingEnd): void;
}
