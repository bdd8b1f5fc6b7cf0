/**
 * Runs the tool calls of one model step: asks for approval where the policy says so (one
 * question at a time), then runs the approved calls concurrently, each bounded by
 * `AgentConfig.tool_call_timeout` and by the turn's abort signal. Every call ends in
 * exactly one tool message, whatever happened, so the conversation never holds a tool
 * call without its result; failures become text the model can act on, never exceptions.
 *
 * @module
 */

import type { CatalogueTool, ToolHost } from "../connections/types.ts";
import {
  PatchbayError,
  PermissionDeniedError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../errors.ts";
import type { ToolCall } from "../llm/provider.ts";
import type { Log } from "../log.ts";
import type { StoredMessage } from "../memory/types.ts";
import { abridge, didYouMean } from "../text.ts";
import type { ApprovalPolicy } from "./approval.ts";
import { convertToolResult } from "./content.ts";
import type { ToolOutcome, UsageStats } from "./stats.ts";
import type { AgentUi, ToolCallView } from "./ui.ts";

/**
 * Time past `tool_call_timeout` after which the agent abandons a call itself, in case the
 * tool host does not enforce the timeout it was given.
 */
export const TOOL_TIMEOUT_GRACE_MS = 1_000;

/** Length of the one-line argument and result previews shown to the user. */
export const PREVIEW_CHARS = 160;

/** What the model reads for a call the user interrupted. */
export const CANCELLED_RESULT = "Cancelled by the user before the tool finished.";

/** What the model reads for a call the user declined. */
export const DECLINED_RESULT = "The user declined to run this tool call. Do not retry it " +
  "unless the user asks; continue without it or ask the user how to proceed.";

/** Everything {@linkcode runToolCalls} works with. */
export interface ToolRunOptions {
  host: ToolHost;
  ui: AgentUi;
  stats: UsageStats;
  approval: ApprovalPolicy;
  /** `AgentConfig.tool_call_timeout`. */
  timeoutSeconds: number;
  /** The turn's signal: aborting cancels every call still running. */
  signal: AbortSignal;
  log: Log;
  now?: () => Date;
}

interface Finished {
  status: ToolOutcome;
  /** What the model reads. */
  text: string;
  error?: PatchbayError;
  durationMs: number;
  omittedChars: number;
}

interface Planned {
  call: ToolCall;
  view: ToolCallView;
  tool?: CatalogueTool;
  args?: Record<string, unknown>;
  /** Settled before running (unknown tool, invalid arguments, declined, cancelled). */
  early?: Finished;
}

/** Runs one step's calls; returns their tool messages in the order of `calls`. */
export async function runToolCalls(
  calls: readonly ToolCall[],
  catalogue: readonly CatalogueTool[],
  options: ToolRunOptions,
): Promise<StoredMessage[]> {
  const planned = calls.map((call) => plan(call, catalogue));
  await askApprovals(planned, catalogue, options);
  const finished = await Promise.all(planned.map((p) => settle(p, options)));
  const now = options.now ?? (() => new Date());
  return planned.map((p, i) => ({
    role: "tool" as const,
    content: finished[i].text,
    toolCallId: p.call.id,
    ...(p.tool ? { server: p.tool.server, tool: p.tool.originalName } : {}),
    ...(finished[i].status === "ok" ? {} : { isError: true }),
    timestamp: now().toISOString(),
  }));
}

function plan(call: ToolCall, catalogue: readonly CatalogueTool[]): Planned {
  const tool = catalogue.find((t) => t.name === call.name);
  const parsed = parseArguments(call.arguments);
  const view: ToolCallView = {
    id: call.id,
    name: call.name,
    server: tool?.server ?? "?",
    tool: tool?.originalName ?? call.name,
    args: parsed.ok ? parsed.value : undefined,
    argsPreview: abridge(
      parsed.ok ? JSON.stringify(parsed.value) : call.arguments.replace(/\s+/g, " "),
      PREVIEW_CHARS,
    ),
  };
  if (!tool) {
    const names = catalogue.map((t) => t.name);
    const guess = didYouMean(call.name, names);
    const text = `Tool execution failed: there is no tool named "${call.name}".` +
      (guess ? ` Did you mean "${guess}"?` : "") +
      (names.length > 0
        ? ` Available tools: ${abridge(names.join(", "), 2000)}.`
        : " No tools are available.");
    return {
      call,
      view,
      early: {
        status: "error",
        text,
        error: new ToolExecutionError(
          call.name,
          `the model asked for a tool that does not exist` +
            (guess ? ` (closest: ${guess})` : ""),
        ),
        durationMs: 0,
        omittedChars: 0,
      },
    };
  }
  if (!parsed.ok) {
    const qualified = `${tool.server}/${tool.originalName}`;
    return {
      call,
      view,
      tool,
      early: {
        status: "error",
        text: `Tool execution failed: the arguments are not a JSON object (${parsed.error}). ` +
          "Call the tool again with a JSON object matching its input schema.",
        error: new ToolExecutionError(
          qualified,
          `the model sent invalid arguments: ${parsed.error}`,
        ),
        durationMs: 0,
        omittedChars: 0,
      },
    };
  }
  return { call, view, tool, args: parsed.value };
}

function parseArguments(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  // Models send "" for tools without parameters.
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return { ok: true, value };
    return { ok: false, error: `got ${Array.isArray(value) ? "an array" : typeof value}` };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** Asks about each call that needs it, one question at a time, in call order. */
async function askApprovals(
  planned: Planned[],
  catalogue: readonly CatalogueTool[],
  options: ToolRunOptions,
): Promise<void> {
  for (const p of planned) {
    if (p.early || !p.tool) continue;
    if (options.signal.aborted) {
      p.early = cancelled(0);
      continue;
    }
    const reason = options.approval.check(p.tool);
    if (!reason) continue;
    let answer;
    try {
      answer = await options.ui.approveToolCall({
        ...p.view,
        title: p.tool.title,
        description: p.tool.description,
        reason,
        annotations: p.tool.annotations as Record<string, unknown> | undefined,
      }, options.signal);
    } catch (error) {
      if (options.signal.aborted) {
        p.early = cancelled(0);
        continue;
      }
      throw error;
    }
    options.approval.record(answer, p.tool, catalogue);
    if (answer === "no") {
      p.early = {
        status: "declined",
        text: DECLINED_RESULT,
        error: new ToolExecutionError(
          `${p.tool.server}/${p.tool.originalName}`,
          "you declined the call",
        ),
        durationMs: 0,
        omittedChars: 0,
      };
    }
  }
}

/** Runs (or reports) one call, and tells the UI and the statistics how it ended. */
async function settle(p: Planned, options: ToolRunOptions): Promise<Finished> {
  options.ui.toolStart(p.view);
  const finished = p.early ?? await execute(p, options);
  if (p.tool) options.stats.recordToolCall(p.tool.server, finished.status, finished.durationMs);
  options.ui.toolEnd(p.call.id, {
    status: finished.status,
    durationMs: finished.durationMs,
    preview: abridge(finished.text.replace(/\s+/g, " ").trim(), PREVIEW_CHARS),
    error: finished.error,
    omittedChars: finished.omittedChars,
  });
  options.log.debug("tool call ended", {
    tool: p.call.name,
    status: finished.status,
    ms: Math.round(finished.durationMs),
  });
  return finished;
}

async function execute(p: Planned, options: ToolRunOptions): Promise<Finished> {
  const tool = p.tool!;
  const qualified = `${tool.server}/${tool.originalName}`;
  const seconds = options.timeoutSeconds;
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const controller = new AbortController();
  const onTurnAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onTurnAbort, { once: true });
  let guardFired = false;
  const guard = setTimeout(() => {
    guardFired = true;
    controller.abort(new ToolTimeoutError(qualified, seconds));
  }, seconds * 1000 + TOOL_TIMEOUT_GRACE_MS);
  try {
    // The race makes an abort take effect at once even if a host is slow to honour it; the
    // host still receives the signal and cancels the request on the server.
    const result = await Promise.race([
      options.host.callTool(tool.name, p.args!, {
        signal: controller.signal,
        timeoutSeconds: seconds,
        onProgress: (update) => options.ui.toolProgress(p.call.id, update),
      }),
      rejectOnAbort(controller.signal),
    ]);
    const converted = convertToolResult(result);
    if (!converted.isError) {
      return {
        status: "ok",
        text: converted.text,
        durationMs: elapsed(),
        omittedChars: converted.omittedChars,
      };
    }
    return {
      status: "error",
      text: `Tool execution failed: ${converted.text}`,
      error: toolError(qualified, converted.text),
      durationMs: elapsed(),
      omittedChars: converted.omittedChars,
    };
  } catch (error) {
    if (guardFired || error instanceof ToolTimeoutError) {
      return {
        status: "timeout",
        text: `Tool timeout: ${qualified} did not finish within ${seconds} s ` +
          "(AgentConfig.tool_call_timeout) and was cancelled.",
        error: error instanceof ToolTimeoutError ? error : new ToolTimeoutError(qualified, seconds),
        durationMs: elapsed(),
        omittedChars: 0,
      };
    }
    if (options.signal.aborted) return cancelled(elapsed());
    const described = error instanceof PatchbayError
      ? `${error.message}: ${error.reason}`
      : error instanceof Error
      ? error.message
      : String(error);
    return {
      status: "error",
      text: `Tool execution failed: ${described}`,
      error: error instanceof PatchbayError && !looksLikePermissionError(described)
        ? error
        : toolError(qualified, described, error),
      durationMs: elapsed(),
      omittedChars: 0,
    };
  } finally {
    clearTimeout(guard);
    options.signal.removeEventListener("abort", onTurnAbort);
  }
}

function cancelled(durationMs: number): Finished {
  return {
    status: "cancelled",
    text: CANCELLED_RESULT,
    durationMs,
    omittedChars: 0,
  };
}

/** `Permission denied` when the server's words say the OS refused a file; else a tool failure. */
function toolError(qualified: string, text: string, cause?: unknown): PatchbayError {
  const reason = abridge(text.replace(/\s+/g, " ").trim(), 300);
  if (looksLikePermissionError(text)) {
    return new PermissionDeniedError(
      `${qualified} could not access a file`,
      `the server reported: ${reason}`,
    );
  }
  return new ToolExecutionError(qualified, reason, cause);
}

/** The wording operating systems and runtimes use for refused file access. */
export function looksLikePermissionError(text: string): boolean {
  return /\bEACCES\b|\bEPERM\b|permission denied|operation not permitted|access is denied/i
    .test(text);
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
