/**
 * The hooks of a tool called without the model (`patchbay call`, `/call`; docs/hooks.md).
 * The person named the call, so there is no approval question to skip: `allow` changes
 * nothing, a refusal is the command's error, and `ask` (or a hook that failed) asks the
 * person at the terminal, where there is one; where there is none the call is declined. A
 * `PostToolUse` hook's feedback, meant for a model, is shown to the person.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogueTool } from "../connections/types.ts";
import { type Surface, ToolDeclinedError } from "../errors.ts";
import type { Hooks } from "../hooks/hooks.ts";
import { postToolUse, preToolUse } from "../hooks/tool_hooks.ts";
import { type HookNotice, hookNotices } from "./hook_notices.ts";
import { AGENT_STEPS } from "../errors/agent_steps.ts";

/** What a direct call's hooks work with. */
export interface DirectCallHooks {
  hooks: Hooks;
  surface: Surface;
  /**
   * Asks the person whether to make the call (`reason`: why a hook asks) with `args`;
   * `false` when the answer is no or no one can answer.
   */
  ask: (reason: string, args: Record<string, unknown>) => Promise<boolean>;
  /** Shows a notice: a failed hook, a hook's words, a rewritten input, feedback. */
  tell: (notice: Pick<HookNotice, "level" | "text">) => void;
  signal?: AbortSignal;
}

/** `tool_use_id` of a call no model made. */
export function directCallId(): string {
  return `patchbay-call-${crypto.randomUUID()}`;
}

/** A hook's question that was answered no, or that no one could answer. */
export function hookQuestionDeclined(tool: string, reason: string): ToolDeclinedError {
  return new ToolDeclinedError(
    tool,
    `it needs a person's answer (${reason}), and it was no, or no one could be asked: ` +
      '--yes and "trusted" do not answer for a hook',
    AGENT_STEPS.hookQuestion,
  );
}

/**
 * Runs the `PreToolUse` hooks of a direct call; returns the input to call with (rewritten
 * by a hook, or as given). Throws what a hook refused, or the call declined.
 */
export async function beforeDirectCall(
  tool: CatalogueTool,
  args: Record<string, unknown>,
  callId: string,
  options: DirectCallHooks,
): Promise<Record<string, unknown>> {
  if (!options.hooks.has("PreToolUse")) return args;
  const outcome = await preToolUse(options.hooks, { tool, args, callId }, options.signal);
  for (const notice of hookNotices(outcome, "PreToolUse", options.surface)) options.tell(notice);
  if (outcome.verdict === "deny") throw outcome.refusal!;
  if (outcome.rewrittenBy.length > 0) {
    options.tell({
      level: "info",
      text: `a PreToolUse hook rewrote the input: ${JSON.stringify(outcome.args)}`,
    });
  }
  if (outcome.verdict === "ask" && !await options.ask(outcome.askReason!, outcome.args)) {
    throw hookQuestionDeclined(`${tool.server}/${tool.originalName}`, outcome.askReason!);
  }
  return outcome.args;
}

/** Runs the `PostToolUse` hooks of a direct call that returned `result`. */
export async function afterDirectCall(
  tool: CatalogueTool,
  args: Record<string, unknown>,
  callId: string,
  result: CallToolResult,
  options: DirectCallHooks,
): Promise<void> {
  if (!options.hooks.has("PostToolUse")) return;
  const outcome = await postToolUse(options.hooks, { tool, args, callId }, result, options.signal);
  for (const notice of hookNotices(outcome, "PostToolUse", options.surface)) options.tell(notice);
  for (const text of outcome.feedback) options.tell({ level: "info", text });
}
