/**
 * `PreToolUse` and `PostToolUse` (docs/hooks.md), wherever a tool runs: a model's call (the
 * REPL, `run`), `/call` and `patchbay call`.
 *
 * Before a call, the hooks decide, strongest first: a refusal (exit code 2, `deny`, or an
 * `updatedInput` the tool's input schema refuses) ends the hooks and the call is not made;
 * `ask` makes the person answer the approval question whatever else says (`--yes`,
 * `trusted` and remembered approvals included), and so does a hook that failed: a broken
 * hook never lets a call through unasked; `allow` runs the call without the question.
 * A valid `updatedInput` replaces the input for the hooks after it and for the call.
 *
 * After a call that returned a result, the hooks may give the model feedback (exit code 2,
 * `decision: "block"`, `additionalContext`); the call has run, so nothing is undone.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogueTool } from "../connections/types.ts";
import { HookBlockedError, type PatchbayError } from "../errors.ts";
import { abridge } from "../text/text.ts";
import { invalidInputError, shownCommand } from "./failure.ts";
import type { HookEventResult, Hooks } from "./hooks.ts";
import { inputProblem } from "./input_check.ts";
import { claudeToolName, matchesTool } from "./matcher.ts";
import type { HookCommand } from "./types.ts";

/** Characters of a hook's reason passed on to the model and shown to the person. */
export const MAX_HOOK_REASON_CHARS = 4000;

/** What the model reads for a call a hook refused. */
const REFUSED_GUIDANCE = "Do not retry it unchanged; continue without it, or ask the user.";

/** A tool call the hooks run for. */
export interface HookedCall {
  tool: CatalogueTool;
  args: Record<string, unknown>;
  /** `tool_use_id`: the model's id for the call (a direct call gets one of its own). */
  callId: string;
}

/** What the `PreToolUse` hooks decided. */
export interface PreToolOutcome extends HookEventResult {
  /** `none`: the usual approval; `allow`: no question; `ask`: the question, always. */
  verdict: "none" | "allow" | "ask" | "deny";
  /** `deny`: what the person is shown. */
  refusal?: PatchbayError;
  /** `deny`: what the model reads as the call's result. */
  refusalText?: string;
  /** `ask`: why the person is asked (a hook's reason, or that a hook failed). */
  askReason?: string;
  /** The input to run the call with: the model's, or the last valid rewrite. */
  args: Record<string, unknown>;
  /** The hooks whose `updatedInput` was taken, in order. */
  rewrittenBy: HookCommand[];
  /** `additionalContext`: for the model, with the call's result. */
  context: string[];
  /** `"continue": false`: the turn ends after this step. */
  stop?: HookBlockedError;
}

/** What the `PostToolUse` hooks said. */
export interface PostToolOutcome extends HookEventResult {
  /** For the model, after the result: the hooks' feedback and context. */
  feedback: string[];
  /** `"continue": false`: the turn ends after this step. */
  stop?: HookBlockedError;
}

/** `server/tool`, as failures name a call. */
function nameOf(tool: CatalogueTool): string {
  return `${tool.server}/${tool.originalName}`;
}

/** The fields a tool event's input adds to the common ones. */
export function toolInput(call: HookedCall, args: Record<string, unknown>) {
  const { tool } = call;
  return {
    tool_name: claudeToolName({ server: tool.server, tool: tool.originalName }),
    tool_input: args,
    tool_use_id: call.callId,
    server: tool.server,
    tool: tool.originalName,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}

function reasonOf(text: string | undefined): string {
  const trimmed = text?.trim() ?? "";
  return trimmed === "" ? "(the hook gave no reason)" : abridge(trimmed, MAX_HOOK_REASON_CHARS);
}

/** Runs the `PreToolUse` hooks of `call`. */
export async function preToolUse(
  hooks: Hooks,
  call: HookedCall,
  signal?: AbortSignal,
): Promise<PreToolOutcome> {
  const what = nameOf(call.tool);
  const subject = { server: call.tool.server, tool: call.tool.originalName };
  const outcome: Omit<PreToolOutcome, keyof HookEventResult> = {
    verdict: "none",
    args: call.args,
    rewrittenBy: [],
    context: [],
  };
  const ask = (reason: string) => {
    if (outcome.verdict === "ask") return;
    outcome.verdict = "ask";
    outcome.askReason = reason;
  };
  const result = await hooks.run({
    event: "PreToolUse",
    input: () => toolInput(call, outcome.args),
    select: (matcher) => matchesTool(matcher, subject),
    what,
    signal,
    each: async (step) => {
      const shown = shownCommand(step.hook);
      if ("error" in step) {
        // Fail closed: a hook that failed never lets the call through unasked.
        ask(`PreToolUse hook '${shown}' failed`);
        return true;
      }
      const answer = step.answer;
      if (answer.context) outcome.context.push(answer.context);
      if (answer.stop) {
        outcome.stop = new HookBlockedError(
          what,
          `PreToolUse hook '${shown}' ended the turn before the call: ` +
            reasonOf(answer.stop.reason),
          { stopped: true },
        );
        outcome.verdict = "deny";
        outcome.refusal = outcome.stop;
        outcome.refusalText = "The call was not made: a hook ended the turn.";
        return false;
      }
      if (answer.block !== undefined || answer.decision === "deny") {
        const reason = reasonOf(answer.block || answer.decisionReason);
        outcome.verdict = "deny";
        outcome.refusal = new HookBlockedError(
          what,
          `PreToolUse hook '${shown}' refused it: ${reason}`,
        );
        outcome.refusalText = `A PreToolUse hook refused this tool call: ${reason}. ` +
          REFUSED_GUIDANCE;
        return false;
      }
      if (answer.updatedInput) {
        const problem = await inputProblem(call.tool.inputSchema, answer.updatedInput);
        if (problem !== undefined) {
          outcome.verdict = "deny";
          outcome.refusal = invalidInputError(step.hook, what, problem);
          outcome.refusalText = "A PreToolUse hook rewrote the arguments of this call into " +
            `ones the tool's input schema refuses (${problem}), so it was not made. ` +
            REFUSED_GUIDANCE;
          return false;
        }
        outcome.args = answer.updatedInput;
        outcome.rewrittenBy.push(step.hook);
      }
      if (answer.decision === "ask") {
        ask(
          answer.decisionReason?.trim()
            ? `PreToolUse hook '${shown}': ${reasonOf(answer.decisionReason)}`
            : `PreToolUse hook '${shown}' asks for your answer`,
        );
      } else if (answer.decision === "allow" && outcome.verdict === "none") {
        outcome.verdict = "allow";
      }
      return true;
    },
  });
  return { ...result, ...outcome };
}

/** Runs the `PostToolUse` hooks of `call`, which returned `response`. */
export async function postToolUse(
  hooks: Hooks,
  call: HookedCall,
  response: CallToolResult,
  signal?: AbortSignal,
): Promise<PostToolOutcome> {
  const what = nameOf(call.tool);
  const subject = { server: call.tool.server, tool: call.tool.originalName };
  const feedback: string[] = [];
  let stop: HookBlockedError | undefined;
  const result = await hooks.run({
    event: "PostToolUse",
    input: () => ({ ...toolInput(call, call.args), tool_response: response }),
    select: (matcher) => matchesTool(matcher, subject),
    what,
    signal,
    each: (step) => {
      if ("error" in step) return true;
      const { answer } = step;
      if (answer.block !== undefined) {
        feedback.push(`PostToolUse hook feedback: ${reasonOf(answer.block)}`);
      }
      if (answer.context) feedback.push(abridge(answer.context, MAX_HOOK_REASON_CHARS));
      if (answer.stop) {
        stop = new HookBlockedError(
          what,
          `PostToolUse hook '${shownCommand(step.hook)}' ended the turn after the call: ` +
            reasonOf(answer.stop.reason),
          { stopped: true },
        );
        return false;
      }
      return true;
    },
  });
  return { ...result, feedback, ...(stop ? { stop } : {}) };
}
