/**
 * The hooks of a turn (docs/hooks.md), as the agent (`agent.ts`) meets them:
 * `UserPromptSubmit` before the message joins the conversation (a refusal keeps it out,
 * context goes with it), and `Stop` when the model answers without calling a tool (a
 * block makes the turn go on, its reason told to the model, within `max_steps`).
 *
 * @module
 */

import type { Surface } from "../errors.ts";
import type { Hooks } from "../hooks/hooks.ts";
import { stopHooks, userPromptSubmit } from "../hooks/turn_hooks.ts";
import type { HookEvent } from "../hooks/types.ts";
import type { HookEventResult } from "../hooks/hooks.ts";
import { HOOK_CONTEXT_HEADING } from "./history.ts";
import { hookNotices } from "./hook_notices.ts";
import type { AgentUi } from "./ui.ts";
import type { UiGuard } from "./ui_guard.ts";

/** What a turn's hook steps work with. */
export interface TurnHookContext {
  hooks?: Hooks;
  ui: AgentUi;
  guard: UiGuard;
  surface?: Surface;
  signal: AbortSignal;
}

/**
 * The message to send for `input`: as typed, or with the `UserPromptSubmit` hooks'
 * context after it. Throws the `HookBlockedError` of a hook that refused it.
 */
export async function promptStep(input: string, context: TurnHookContext): Promise<string> {
  const { hooks } = context;
  if (!hooks?.has("UserPromptSubmit")) return input;
  const outcome = await userPromptSubmit(hooks, input, context.signal);
  tell(outcome, "UserPromptSubmit", context);
  if (outcome.blocked) throw outcome.blocked;
  return withHookContext(input, outcome.context);
}

/** `text` with the context hooks gave after it, set apart; `text` alone without any. */
export function withHookContext(text: string, context: readonly string[]): string {
  if (context.length === 0) return text;
  return `${text}\n\n${HOOK_CONTEXT_HEADING}\n${context.join("\n\n")}`;
}

/**
 * What the model is told when a `Stop` hook makes the turn go on; `undefined` when the
 * turn ends. `active`: the turn already goes on because of a `Stop` hook.
 */
export async function stopStep(
  lastMessage: string | null,
  active: boolean,
  context: TurnHookContext,
): Promise<string | undefined> {
  const { hooks } = context;
  if (!hooks?.has("Stop")) return undefined;
  const outcome = await stopHooks(hooks, { lastMessage, active }, context.signal);
  tell(outcome, "Stop", context);
  if (outcome.continueWith === undefined) return undefined;
  return `[A Stop hook asks you to go on] ${outcome.continueWith}`;
}

function tell(result: HookEventResult, event: HookEvent, context: TurnHookContext): void {
  for (const notice of hookNotices(result, event, context.surface ?? "repl")) {
    context.guard.tell(() => context.ui.notice(notice.level, notice.text, notice.detail));
  }
}
