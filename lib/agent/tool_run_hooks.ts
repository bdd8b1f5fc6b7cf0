/**
 * The hooks of a model's tool call (docs/hooks.md), as the tool runner (`tool_runner.ts`)
 * meets them: before the approval question (`PreToolUse`: refuse, ask, allow, rewrite the
 * input) and after the result (`PostToolUse`: feedback for the model). What the hooks leave
 * for the person is told through the UI as notices; a hook that ends the turn
 * (`"continue": false`) is kept in {@linkcode HookStop} for the agent, which ends the turn
 * once every call of the step has its result.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogueTool } from "../connections/types.ts";
import type { PatchbayError, Surface } from "../errors.ts";
import type { Hooks } from "../hooks/hooks.ts";
import { postToolUse, preToolUse } from "../hooks/tool_hooks.ts";
import type { ToolCall } from "../llm/provider.ts";
import { abridge } from "../text/text.ts";
import { hookNotices, onSurface } from "./hook_notices.ts";
import type { AgentUi, ToolCallView } from "./ui.ts";
import type { UiGuard } from "./ui_guard.ts";

/** Where a hook that ended the turn is kept, for the agent to end it after the step. */
export interface HookStop {
  error?: PatchbayError;
}

/** What the hook steps of a call work with (a part of the runner's options). */
export interface HookStepContext {
  hooks?: Hooks;
  hookStop?: HookStop;
  ui: AgentUi;
  guard: UiGuard;
  surface?: Surface;
  signal: AbortSignal;
}

/** A planned call, as the hook steps read and change it. */
export interface HookedPlan {
  call: ToolCall;
  view: ToolCallView;
  tool?: CatalogueTool;
  args?: Record<string, unknown>;
  /** What the `PreToolUse` hooks added for the model, with the result. */
  hookContext?: string[];
}

/** What the `PreToolUse` hooks mean for the approval of a call. */
export type PreToolStep =
  /** No hook ran, or none decided: the usual approval. */
  | { kind: "none" }
  /** Run without asking. */
  | { kind: "allow" }
  /** Ask the person, whatever else says. */
  | { kind: "ask"; reason: string }
  /** Not made: what the model reads, and the error the person is shown. */
  | { kind: "refused"; text: string; error: PatchbayError };

/** Length of the one-line argument preview shown for a rewritten input. */
const PREVIEW_CHARS = 160;

/** Runs the `PreToolUse` hooks of `p` (a known tool with parsed arguments). */
export async function preToolStep(p: HookedPlan, context: HookStepContext): Promise<PreToolStep> {
  const { hooks, guard, ui } = context;
  if (!hooks?.has("PreToolUse") || !p.tool || !p.args) return { kind: "none" };
  const tool = p.tool;
  const outcome = await preToolUse(
    hooks,
    { tool, args: p.args, callId: p.call.id },
    context.signal,
  );
  for (const notice of hookNotices(outcome, "PreToolUse", context.surface ?? "repl")) {
    guard.tell(() => ui.notice(notice.level, notice.text, notice.detail));
  }
  if (outcome.stop && context.hookStop) context.hookStop.error ??= outcome.stop;
  if (outcome.verdict === "deny") {
    const error = onSurface(outcome.refusal!, context.surface ?? "repl");
    return { kind: "refused", text: outcome.refusalText!, error };
  }
  p.hookContext = outcome.context;
  if (outcome.rewrittenBy.length > 0) {
    p.args = outcome.args;
    const preview = abridge(JSON.stringify(outcome.args), PREVIEW_CHARS);
    p.view = { ...p.view, args: outcome.args, argsPreview: preview };
    const where = `${tool.server} › ${tool.originalName}`;
    const text = `a PreToolUse hook rewrote the input of ${where}: ${preview}`;
    guard.tell(() =>
      ui.notice("info", text, {
        kind: "hook_rewrote_input",
        server: tool.server,
        tool: tool.originalName,
        arguments: outcome.args,
      })
    );
  }
  if (outcome.verdict === "ask") return { kind: "ask", reason: outcome.askReason! };
  return outcome.verdict === "allow" ? { kind: "allow" } : { kind: "none" };
}

/**
 * Runs the `PostToolUse` hooks of `p`, which returned `result`; returns what the hooks
 * (these, and the `PreToolUse` ones before) add for the model, if anything.
 */
export async function postToolStep(
  p: HookedPlan,
  result: CallToolResult,
  context: HookStepContext,
): Promise<string | undefined> {
  const { hooks, guard, ui } = context;
  const added = [...p.hookContext ?? []];
  if (hooks?.has("PostToolUse") && p.tool && p.args) {
    const call = { tool: p.tool, args: p.args, callId: p.call.id };
    const outcome = await postToolUse(hooks, call, result, context.signal);
    for (const notice of hookNotices(outcome, "PostToolUse", context.surface ?? "repl")) {
      guard.tell(() => ui.notice(notice.level, notice.text, notice.detail));
    }
    if (outcome.stop && context.hookStop) context.hookStop.error ??= outcome.stop;
    added.push(...outcome.feedback);
  }
  return added.length > 0 ? added.join("\n\n") : undefined;
}
