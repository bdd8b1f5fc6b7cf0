/**
 * Where a Messages API request carries its prompt-cache breakpoints. Anthropic caches the
 * prefix of a request (tools, then system, then messages, in that order) up to each block
 * marked `cache_control`; a later request whose prefix is byte-identical up to a marked
 * block reads it at a tenth of the input price, and what lies between the longest hit and
 * the last marker is written (at 1.25 times the price). The API takes at most
 * {@linkcode MAX_CACHE_BREAKPOINTS} markers, and looks for an earlier entry only some
 * twenty blocks back from each.
 *
 * The placement ({@linkcode planBreakpoints}):
 *
 * - the last tool, or, when the tool list grew or changed since the previous request, the
 *   last tool of the part both share: that part stays a hit, and the tools after it are
 *   written once (tool search and `list_changed` move this marker instead of missing the
 *   cache on every later request; the agent keeps the tools in a stable order, new ones
 *   last);
 * - the last system block (tools and system prompt together, the same in every request);
 * - the last user messages (the user's prompt, or a step's tool results), newest first,
 *   with the markers left: each request's newest user message is the previous request's
 *   last one plus the step in between, so the marker the previous request wrote is always
 *   among this one's, and is read back however many blocks the step added.
 *
 * Pure: no I/O.
 *
 * @module
 */

import type { ContentBlock, MessagesRequest, MessagesTool, TextBlock } from "./messages_wire.ts";

/** Most `cache_control` markers the API accepts in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The shape of a request, as far as the placement depends on it. */
export interface RequestShape {
  /** A fingerprint of each tool, in the request's order (its JSON text). */
  tools: readonly string[];
  /** The fingerprints of the previous request's tools, if there was one with tools. */
  previousTools?: readonly string[];
  /** Blocks of the system prompt. */
  systemBlocks: number;
  /** The role of each message, in order. */
  roles: readonly ("user" | "assistant")[];
}

/** Which blocks carry a marker. */
export interface BreakpointPlan {
  /** Index of the marked tool. */
  tool?: number;
  /** Index of the marked system block. */
  system?: number;
  /** Indices of the messages whose last block is marked, oldest first. */
  messages: number[];
}

/** The markers of a request of `shape`: never more than {@linkcode MAX_CACHE_BREAKPOINTS}. */
export function planBreakpoints(shape: RequestShape): BreakpointPlan {
  let left = MAX_CACHE_BREAKPOINTS;
  const plan: BreakpointPlan = { messages: [] };
  if (shape.tools.length > 0) {
    const shared = sharedPrefix(shape.tools, shape.previousTools ?? shape.tools);
    plan.tool = shared > 0 ? shared - 1 : shape.tools.length - 1;
    left--;
  }
  if (shape.systemBlocks > 0) {
    plan.system = shape.systemBlocks - 1;
    left--;
  }
  for (let i = shape.roles.length - 1; i >= 0 && left > 0; i--) {
    if (shape.roles[i] !== "user") continue;
    plan.messages.unshift(i);
    left--;
  }
  return plan;
}

/** How many leading tools `current` shares with `previous`. */
export function sharedPrefix(current: readonly string[], previous: readonly string[]): number {
  let i = 0;
  while (i < current.length && i < previous.length && current[i] === previous[i]) i++;
  return i;
}

/** The fingerprint of one tool for {@linkcode RequestShape.tools}. */
export function toolFingerprint(tool: MessagesTool): string {
  return JSON.stringify(tool);
}

/** `body` with the markers of `plan` set (a copy: the blocks marked are copied too). */
export function withBreakpoints(body: MessagesRequest, plan: BreakpointPlan): MessagesRequest {
  const marked = { ...body };
  const mark = <T extends object>(block: T): T => ({ ...block, cache_control: EPHEMERAL });
  if (plan.tool !== undefined && body.tools?.[plan.tool]) {
    marked.tools = body.tools.map((tool, i) => i === plan.tool ? mark(tool) : tool);
  }
  if (plan.system !== undefined && body.system?.[plan.system]) {
    marked.system = body.system.map((block, i): TextBlock =>
      i === plan.system ? mark(block) : block
    );
  }
  if (plan.messages.length > 0) {
    marked.messages = body.messages.map((message, i) => {
      if (!plan.messages.includes(i) || message.content.length === 0) return message;
      const content: ContentBlock[] = [...message.content];
      content[content.length - 1] = mark(content[content.length - 1]);
      return { ...message, content };
    });
  }
  return marked;
}

/** The one kind of cache entry the API has (five minutes, refreshed by each hit). */
const EPHEMERAL = { type: "ephemeral" } as const;
