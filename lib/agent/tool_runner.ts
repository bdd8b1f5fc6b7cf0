/**
 * Runs the tool calls of one model step: asks for approval where the policy says so (one
 * question at a time), then runs the approved calls concurrently, each bounded by
 * `AgentConfig.tool_call_timeout` and by the turn's abort signal. Every call ends in
 * exactly one tool message, whatever happened, so the conversation never holds a tool
 * call without its result; failures become text the model can act on, never exceptions.
 *
 * A failed call is named the same way for the person and for the model: its server and
 * the tool's own name (`fs/read_text_file`), not the catalogue name the model calls it by.
 * Each kind of failure gets its own remedy. When the UI fails (see `ui_guard.ts`), the
 * calls still running are cancelled and every call still gets its result; the agent then
 * rethrows the UI's error.
 *
 * @module
 */

import type { CatalogueTool, ToolHost, WithheldTool } from "../connections/types.ts";
import { withheldError } from "../connections/tool_filter.ts";
import { abortable } from "../async/abortable.ts";
import {
  type PatchbayError,
  ToolDeclinedError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../errors.ts";
import type { ToolCall } from "../llm/provider.ts";
import type { Log } from "../log/log.ts";
import type { StoredAttachment, StoredMessage } from "../memory/types.ts";
import type { ConvertedToolResult } from "./content.ts";
import { type SavedItem, savedLine, saveResultMedia } from "./result_media.ts";
import { MAX_IMAGE_BYTES, MAX_IMAGES_KEPT } from "./image_store.ts";
import { showName } from "../text/names.ts";
import { abridge, didYouMean } from "../text/text.ts";
import type { ApprovalPolicy } from "./approval.ts";
import { convertToolResult } from "./content.ts";
import type { ToolOutcome, UsageStats } from "./stats.ts";
import type { AgentUi, ToolCallView } from "./ui.ts";
import type { UiGuard } from "./ui_guard.ts";
import type { Hooks } from "../hooks/hooks.ts";
import { type HookStop, postToolStep, preToolStep } from "./tool_run_hooks.ts";
import { hookQuestionDeclined } from "./direct_call_hooks.ts";
import {
  errorResultFailure,
  qualifiedName,
  type Surface,
  thrownFailure,
  timeoutFailure,
  type ToolRemedies,
  toolRemedies,
} from "./tool_failure.ts";

/** Length of the one-line argument and result previews shown to the user. */
export const PREVIEW_CHARS = 160;

/** What the model reads for a call the user interrupted. */
export const CANCELLED_RESULT = "Cancelled by the user before the tool finished.";

/** What the model reads for a call the user declined. */
export const DECLINED_RESULT = "The user declined to run this tool call. Do not retry it " +
  "unless the user asks; continue without it or ask the user how to proceed.";

export { TOOL_REMEDY } from "./tool_failure.ts";

/** Everything {@linkcode runToolCalls} works with. */
export interface ToolRunOptions {
  host: ToolHost;
  ui: AgentUi;
  /** The turn's guard around `ui`: what the UI throws stops the calls, not the bookkeeping. */
  guard: UiGuard;
  stats: UsageStats;
  approval: ApprovalPolicy;
  /** `AgentConfig.tool_call_timeout`. */
  toolCallTimeoutSeconds: number;
  /** The turn's signal: aborting cancels every call still running. */
  signal: AbortSignal;
  log: Log;
  now?: () => Date;
  /** Where failures are shown, which decides the commands remedies name. @default "repl" */
  surface?: Surface;
  /**
   * Keeps an image a tool returned for the person and returns its path (told to the UI
   * as a notice). @default not kept
   */
  saveImage?: (mimeType: string, data: string) => Promise<string>;
  /** The conversation the calls belong to, kept with the tasks they start. */
  conversation?: string;
  /** The session's hooks (docs/hooks.md). @default none */
  hooks?: Hooks;
  /** Where a hook that ends the turn is kept (`"continue": false`). */
  hookStop?: HookStop;
}

interface Finished {
  status: ToolOutcome;
  /** What the model reads. */
  text: string;
  error?: PatchbayError;
  durationMs: number;
  omittedChars: number;
  /** The images of the result, as attachments of the tool message. */
  attachments?: StoredAttachment[];
  /** What the hooks added for the model (docs/hooks.md). */
  hookContext?: string;
}

interface Planned {
  call: ToolCall;
  view: ToolCallView;
  tool?: CatalogueTool;
  args?: Record<string, unknown>;
  /** Settled before running (unknown tool, invalid arguments, declined, cancelled). */
  early?: Finished;
  /** What the `PreToolUse` hooks added for the model, with the result. */
  hookContext?: string[];
}

/**
 * Runs one step's calls; returns their tool messages in the order of `calls`. Never throws
 * for a failed call; a UI failure is left in `options.guard` for the agent to rethrow.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  catalogue: readonly CatalogueTool[],
  options: ToolRunOptions,
): Promise<StoredMessage[]> {
  // The calls see one signal: the turn's abort, or the UI failing.
  const context: ToolRunOptions = {
    ...options,
    signal: AbortSignal.any([options.signal, options.guard.signal]),
  };
  const remedies = toolRemedies(options.surface ?? "repl");
  const withheld = options.host.withheld?.() ?? [];
  const planned = calls.map((call) => plan(call, catalogue, remedies, withheld));
  await askApprovals(planned, catalogue, context);
  const finished = await Promise.all(planned.map((p) => settle(p, context)));
  const now = options.now ?? (() => new Date());
  return planned.map((p, i) => ({
    role: "tool" as const,
    content: finished[i].text,
    toolCallId: p.call.id,
    ...(p.tool ? { server: p.tool.server, tool: p.tool.originalName } : {}),
    ...(finished[i].status === "ok" ? {} : { isError: true }),
    ...(finished[i].attachments?.length ? { attachments: finished[i].attachments } : {}),
    ...(finished[i].hookContext ? { hookContext: finished[i].hookContext } : {}),
    timestamp: now().toISOString(),
  }));
}

function plan(
  call: ToolCall,
  catalogue: readonly CatalogueTool[],
  remedies: ToolRemedies,
  withheld: readonly WithheldTool[] = [],
): Planned {
  const tool = catalogue.find((t) => t.name === call.name);
  const parsed = parseArguments(call.arguments);
  const hidden = tool ? undefined : withheld.find((w) => w.tool.name === call.name);
  // A withheld tool is still known by its server and own name, as its error says.
  const known = tool ?? hidden?.tool;
  const view: ToolCallView = {
    id: call.id,
    name: call.name,
    server: known?.server ?? "?",
    tool: known?.originalName ?? call.name,
    args: parsed.ok ? parsed.value : undefined,
    argsPreview: abridge(
      parsed.ok ? JSON.stringify(parsed.value) : call.arguments.replace(/\s+/g, " "),
      PREVIEW_CHARS,
    ),
  };
  if (hidden) return { call, view, early: withheldTool(hidden) };
  if (!tool) return { call, view, early: unknownTool(call.name, catalogue, remedies) };
  if (!parsed.ok) {
    const qualified = qualifiedName(tool);
    return {
      call,
      view,
      tool,
      early: {
        status: "error",
        text: `Tool execution failed: ${qualified}: the arguments are not a JSON object ` +
          `(${parsed.error}). Call the tool again with a JSON object matching its input schema.`,
        error: new ToolExecutionError(
          qualified,
          `the model sent arguments that are not a JSON object: ${parsed.error}`,
          undefined,
          remedies.invalidArguments,
        ),
        durationMs: 0,
        omittedChars: 0,
      },
    };
  }
  return { call, view, tool, args: parsed.value };
}

/**
 * A name no connected server offers. The model is given the names it can call; the person
 * is shown the closest tool as server and tool name.
 */
function unknownTool(
  name: string,
  catalogue: readonly CatalogueTool[],
  remedies: ToolRemedies,
): Finished {
  const names = catalogue.map((t) => t.name);
  const guess = didYouMean(name, names);
  const closest = catalogue.find((t) => t.name === guess);
  return {
    status: "error",
    text: `Tool execution failed: there is no tool named "${name}".` +
      (guess ? ` Did you mean "${guess}"?` : "") +
      (names.length > 0
        ? ` Available tools: ${abridge(names.join(", "), 2000)}.`
        : " No tools are available."),
    // The name is the model's own text: shown on one line, escaped, and not at any length.
    error: new ToolExecutionError(
      abridge(showName(name), 200),
      `the model asked for a tool named "${
        abridge(showName(name), 200)
      }", which no connected server offers` +
        (closest ? ` (closest: ${qualifiedName(closest)})` : ""),
      undefined,
      remedies.unknownTool,
    ),
    durationMs: 0,
    omittedChars: 0,
  };
}

/** A tool the configuration does not offer: the model is told not to try it again. */
function withheldTool({ tool, reason, policy }: WithheldTool): Finished {
  const who = policy !== undefined ? "the administrator's policy" : "the user's configuration";
  return {
    status: "error",
    text: `Tool execution failed: "${tool.name}" is not available: ${who} ` +
      `keeps it from being offered (${reason}). Do not call it again; continue without it.`,
    error: withheldError(tool, reason, policy),
    durationMs: 0,
    omittedChars: 0,
  };
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
    // The hooks first: they may refuse the call, ask about it, allow it or rewrite it.
    const hooked = await preToolStep(p, options);
    if (options.signal.aborted) p.early = cancelled(0);
    if (hooked.kind === "refused" && !p.early) {
      // The hook's reason is the person's word, not the server's: outside its output.
      const { text: hookContext, error } = hooked;
      const text = "The call was not made: a hook refused it (its reason follows).";
      p.early = { status: "declined", text, error, hookContext, durationMs: 0, omittedChars: 0 };
    }
    if (p.early) continue;
    const reason = hooked.kind === "ask"
      ? "hook"
      : hooked.kind === "allow"
      ? undefined
      : options.approval.check(p.tool);
    if (!reason) continue;
    const tool = p.tool;
    let answer;
    try {
      answer = await options.guard.ask(() =>
        options.ui.approveToolCall({
          ...p.view,
          title: tool.title,
          description: tool.description,
          reason,
          ...(reason === "server-changed"
            ? { launchChange: options.approval.launchChange(tool) }
            : {}),
          annotations: tool.annotations as Record<string, unknown> | undefined,
          canRemember: options.approval.canRemember,
          ...(hooked.kind === "ask" ? { hookReason: hooked.reason } : {}),
        }, options.signal), options.signal);
    } catch {
      // Withdrawn by the turn's abort, or the UI failed (the guard keeps its error): this
      // call and the ones after it are cancelled.
      p.early = cancelled(0);
      continue;
    }
    options.approval.record(answer, tool, catalogue);
    if (answer === "no") {
      p.early = {
        status: "declined",
        text: DECLINED_RESULT,
        error: hooked.kind === "ask"
          ? hookQuestionDeclined(qualifiedName(tool), hooked.reason)
          : new ToolDeclinedError(
            qualifiedName(tool),
            "it was not approved: you answered no, or no one could be asked (no terminal, " +
              'and neither --yes nor "trusted" applied)',
            toolRemedies(options.surface ?? "repl").declined,
          ),
        durationMs: 0,
        omittedChars: 0,
      };
    }
  }
}

/** Runs (or reports) one call, and tells the UI and the statistics how it ended. */
async function settle(p: Planned, options: ToolRunOptions): Promise<Finished> {
  const { guard, ui } = options;
  guard.tell(() => ui.toolStart(p.view));
  const finished = p.early ??
    (options.signal.aborted ? cancelled(0) : await execute(p, options));
  if (p.tool) options.stats.recordToolCall(p.tool.server, finished.status, finished.durationMs);
  guard.tell(() =>
    ui.toolEnd(p.call.id, {
      status: finished.status,
      durationMs: finished.durationMs,
      preview: abridge(finished.text.replace(/\s+/g, " ").trim(), PREVIEW_CHARS),
      error: finished.error,
      omittedChars: finished.omittedChars,
    })
  );
  options.log.debug("tool call ended", {
    tool: p.call.name,
    status: finished.status,
    ms: Math.round(finished.durationMs),
  });
  return finished;
}

async function execute(p: Planned, options: ToolRunOptions): Promise<Finished> {
  const tool = p.tool!;
  const toolCallTimeoutSeconds = options.toolCallTimeoutSeconds;
  const surface = options.surface ?? "repl";
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const controller = new AbortController();
  const onTurnAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onTurnAbort, { once: true });
  // The server's sampling requests until it answers count toward sampling_per_tool_call.
  options.stats.toolCallStarted(tool.server);
  // The deadline is the host's (`Connection.request`, lib/connections/connection.ts): it
  // gets `toolCallTimeoutSeconds`, leaves out the time the server waits on us, cancels the request on
  // the server and rejects with a ToolTimeoutError. The agent keeps no second timer.
  try {
    // `abortable` makes an abort take effect at once even if a host is slow to honour it;
    // the host still receives the signal and cancels the request on the server.
    const result = await abortable(
      options.host.callTool(tool.name, p.args!, {
        signal: controller.signal,
        toolCallTimeoutSeconds,
        toolCallId: p.call.id,
        onProgress: (update) =>
          options.guard.tell(() => options.ui.toolProgress(p.call.id, update)),
        onTask: (progress) => options.guard.tell(() => options.ui.toolTask?.(p.call.id, progress)),
        context: {
          ...(options.conversation ? { conversation: options.conversation } : {}),
          toolCallId: p.call.id,
        },
      }),
      controller.signal,
    );
    const converted = convertToolResult(result);
    const hookContext = await postToolStep(p, result, options);
    const attachments = await keepMedia(converted, tool, options);
    return {
      ...(converted.isError
        ? errorResultFailure(tool, converted.text, surface)
        : { status: "ok" as const, text: converted.text }),
      durationMs: elapsed(),
      omittedChars: converted.omittedChars,
      attachments,
      ...(hookContext ? { hookContext } : {}),
    };
  } catch (error) {
    if (error instanceof ToolTimeoutError) {
      return {
        ...timeoutFailure(tool, toolCallTimeoutSeconds, surface),
        durationMs: elapsed(),
        omittedChars: 0,
      };
    }
    if (options.signal.aborted) return cancelled(elapsed());
    return {
      ...thrownFailure(tool, error, {
        toolCallTimeoutSeconds,
        surface,
        stillOffered: options.host.tools().some((t) => t.name === tool.name),
      }),
      durationMs: elapsed(),
      omittedChars: 0,
    };
  } finally {
    options.signal.removeEventListener("abort", onTurnAbort);
    options.stats.toolCallEnded(tool.server);
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

/**
 * A result's images and other binary data as attachments: saved for the person (each path
 * told as a notice); images kept with their data for a vision model when within
 * {@linkcode MAX_IMAGE_BYTES}, the rest described only.
 */
async function keepMedia(
  converted: ConvertedToolResult,
  tool: CatalogueTool,
  options: ToolRunOptions,
): Promise<StoredAttachment[]> {
  const where = `${tool.server} › ${showName(tool.originalName)}`;
  const saved = options.saveImage ? await saveResultMedia(converted, options.saveImage) : [
    ...converted.images.slice(0, MAX_IMAGES_KEPT).map((item) => ({ item, kind: "image" })),
    ...converted.binaries.slice(0, MAX_IMAGES_KEPT).map((item) => ({ item, kind: "binary" })),
  ] as SavedItem[];
  const attachments: StoredAttachment[] = [];
  for (const { item, kind, path, error } of saved) {
    if (error !== undefined) {
      options.log.warn("could not save a tool's image or file", { error: String(error) });
    }
    if (path) {
      const detail = {
        kind: kind === "image" ? "image_saved" : "file_saved",
        server: tool.server,
        tool: tool.originalName,
        mime_type: item.mimeType,
        path,
      } as const;
      options.guard.tell(() => options.ui.notice("info", savedLine(item, where, path), detail));
    }
    attachments.push({
      server: tool.server,
      kind,
      mimeType: item.mimeType,
      bytes: item.bytes,
      ...(item.uri ? { uri: item.uri } : {}),
      ...(kind === "image" && item.bytes <= MAX_IMAGE_BYTES ? { data: item.data } : {}),
      ...(path ? { path } : {}),
    });
  }
  const leftOut = converted.images.length - MAX_IMAGES_KEPT;
  if (leftOut > 0) {
    // The model still reads each image's line in the result's text.
    options.guard.tell(() =>
      options.ui.notice(
        "warning",
        `${where}: ${leftOut} more image${leftOut === 1 ? "" : "s"} not kept (a tool ` +
          `result keeps at most ${MAX_IMAGES_KEPT})`,
      )
    );
  }
  return attachments;
}
