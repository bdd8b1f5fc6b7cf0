/**
 * The agent's UI seam as a stream of newline-delimited JSON events on stdout, for
 * scripts (`patchbay run --json`). Every line is one JSON object with a `type`; the
 * stream ends with `done` or `error`. Approvals cannot be asked here: `--yes` approves,
 * otherwise calls are declined and a `notice` says why.
 *
 * @module
 */

import type { TaskProgress } from "../connections/tasks/task_types.ts";
import type { ProgressUpdate } from "../connections/types.ts";
import type { RetryNotice, TokenUsage } from "../llm/provider.ts";
import type * as seam from "../agent/ui.ts";
import type { Redactor } from "../redact/redact.ts";

/** Options of {@linkcode JsonEventsUi}. */
export interface JsonEventsOptions {
  /** Receives one line of JSON (without the newline). */
  write: (line: string) => void;
  autoApprove: boolean;
  /** Hides secrets that reach an event. */
  redactor?: Redactor;
}

/**
 * Token usage as the fields of an event (`usage`, and `done`'s `usage`): the prompt whole,
 * and the parts of it the provider's prompt cache served (`cache_read_tokens`) and stored
 * (`cache_write_tokens`), 0 when it reported none.
 */
export function usageJson(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    cache_read_tokens: usage.cacheReadTokens ?? 0,
    cache_write_tokens: usage.cacheWriteTokens ?? 0,
    estimated: usage.estimated ?? false,
  };
}

/** The agent's UI ({@linkcode seam.AgentUi}) writing NDJSON events. */
export class JsonEventsUi implements seam.AgentUi {
  readonly #options: JsonEventsOptions;
  /** The text streamed since the last `text_done`, which that event carries whole. */
  #text = "";

  constructor(options: JsonEventsOptions) {
    this.#options = options;
  }

  /** Writes one event. */
  emit(type: string, fields: Record<string, unknown> = {}): void {
    const line = JSON.stringify({ type, ...fields });
    this.#options.write(this.#options.redactor ? this.#options.redactor.redact(line) : line);
  }

  textDelta(text: string): void {
    this.#text += text;
    this.emit("text_delta", { text });
  }
  textDone(): void {
    this.emit("text_done", { text: this.#text });
    this.#text = "";
  }
  retry(notice: RetryNotice): void {
    // What the failed attempt streamed is not part of the answer.
    if (notice.discardedPartial) this.#text = "";
    this.emit("retry", {
      attempt: notice.attempt,
      max_retries: notice.maxRetries,
      delay_ms: notice.delayMs,
      reason: notice.reason,
      discarded_partial: notice.discardedPartial,
    });
  }
  toolStart(call: seam.ToolCallView): void {
    this.emit("tool_call", {
      id: call.id,
      server: call.server,
      tool: call.tool,
      arguments: call.args ?? null,
    });
  }
  toolProgress(id: string, update: ProgressUpdate): void {
    this.emit("tool_progress", { id, ...update });
  }
  toolTask(id: string, progress: TaskProgress): void {
    this.emit("tool_task", {
      id,
      task_id: progress.taskId,
      status: progress.status,
      ...(progress.statusMessage ? { status_message: progress.statusMessage } : {}),
    });
  }
  toolEnd(id: string, end: seam.ToolCallEnd): void {
    this.emit("tool_result", {
      id,
      status: end.status,
      duration_ms: Math.round(end.durationMs),
      preview: end.preview,
      omitted_chars: end.omittedChars,
      ...(end.error
        ? {
          error: {
            code: end.error.code,
            message: end.error.message,
            cause: end.error.reason,
            remedy: end.error.remedy,
          },
        }
        : {}),
    });
  }
  notice(level: seam.NoticeLevel, text: string, detail?: seam.NoticeDetail): void {
    this.emit("notice", { level, text, ...detail });
  }
  usage(report: seam.StepUsage): void {
    this.emit("usage", {
      step: report.step,
      model: report.model,
      ...usageJson(report.usage),
      duration_ms: Math.round(report.durationMs),
    });
  }
  approveToolCall(request: seam.ToolApprovalRequest): Promise<seam.ToolApproval> {
    if (request.reason === "hook") {
      // A hook's question is for a person; --yes does not answer it (docs/hooks.md).
      this.notice(
        "warning",
        `declined ${request.server}/${request.tool}: ${request.hookReason ?? "a hook asks"}; ` +
          "a hook's question needs a person at a terminal",
      );
      return Promise.resolve("no");
    }
    if (this.#options.autoApprove) return Promise.resolve("yes");
    this.notice(
      "warning",
      `declined ${request.server}/${request.tool}: tool calls need approval; pass --yes or mark the server "trusted"`,
    );
    return Promise.resolve("no");
  }
  approveSampling(request: seam.SamplingApprovalRequest): Promise<boolean> {
    if (this.#options.autoApprove) return Promise.resolve(true);
    this.notice(
      "warning",
      `declined sampling for ${request.server}: pass --yes or set "sampling": "allow"`,
    );
    return Promise.resolve(false);
  }
  samplingEnd(end: seam.SamplingEnd): void {
    this.emit("sampling", {
      server: end.server,
      status: end.status,
      duration_ms: Math.round(end.durationMs),
      ...(end.usage ? { total_tokens: end.usage.totalTokens } : {}),
    });
  }
}
