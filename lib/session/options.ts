/**
 * The options a session opens with ({@linkcode ClientSessionOptions}) and the renderer of
 * its server block.
 *
 * @module
 */

import type { Surface } from "../agent/tool_failure.ts";
import type { AgentUi } from "../agent/ui.ts";
import type { RefusedGrants } from "../deno_permission/refused_grant.ts";
import type { Runtime } from "../cli/startup.ts";
import type { Style } from "../terminal/style.ts";
import type { TerminalOutput } from "../ui/output.ts";

/**
 * Renders the server list in the colours of the stream it is written to (the banner's
 * stderr, `/connections`' stdout); injected so lib/ does not depend on the command layer.
 */
export type StatusRenderer<Session> = (
  session: Session,
  style: Style,
  options?: { compact?: boolean },
) => string;

/**
 * Options of `ClientSession.open`. `Session` is the session the server block is drawn for:
 * a parameter, so that this file does not import the session that imports it.
 */
export interface ClientSessionOptions<Session> {
  runtime: Runtime;
  output: TerminalOutput;
  /** Turns an error into the lines a person reads (the command layer's formatter). */
  presentError: (error: unknown) => string;
  /** Approve every tool call and sampling request. @default false */
  yes?: boolean;
  /** Continue the latest stored conversation (`true`) or the one with this id. */
  resume?: true | string;
  /** Aborting cancels start-up (Ctrl+C while servers connect). */
  signal?: AbortSignal;
  /**
   * `background`: start-up does not wait for the servers, which are announced as they
   * connect once {@linkcode ClientSession.goLive} was called (the interactive client).
   * `wait`: start-up waits for every server (one-shot mode, piped input). @default "wait"
   */
  servers?: "wait" | "background";
  /**
   * `wait` mode: aborting while servers connect skips those still connecting (Ctrl+C in
   * one-shot mode); `onSkip` is told which (none: nothing was connecting).
   */
  skip?: AbortSignal;
  onSkip?: (servers: string[]) => void;
  /**
   * Draws the server block: in the banner, for `/connections` and `/refresh`, and in
   * `background` mode once the last server of start-up has connected or failed. Given once
   * here (it lives in the command layer, so lib/ does not depend on it); the REPL reads it
   * through {@linkcode ClientSession.renderServers}. Absent (one-shot mode): no block.
   */
  renderServers?: StatusRenderer<Session>;
  /**
   * The agent's UI. @default a {@linkcode TerminalUi} that asks its questions at the
   * terminal when there is one
   */
  ui?: AgentUi;
  /**
   * Whether a person can answer questions (approvals, elicitation forms) at the terminal.
   * @default stdin is a terminal
   */
  interactive?: boolean;
  /**
   * Where tool failures are shown: `script` for `patchbay run`, whose remedies name flags
   * and commands instead of slash commands. @default "repl"
   */
  surface?: Surface;
  /**
   * Answer servers' forms with their defaults instead of asking (`--accept-form-defaults`).
   * @default false
   */
  acceptFormDefaults?: boolean;
  /**
   * The grants kept from the errors {@linkcode presentError} showed (an OAuth server's moved
   * authorization server): `/refresh` asks the launcher for them.
   * @default none kept
   */
  refusedGrants?: RefusedGrants;
}
