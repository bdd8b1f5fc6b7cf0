/**
 * The block that shows each server's connection: at start-up, and for `/connections`;
 * and the one line the interactive client's banner shows while servers still connect.
 *
 * @module
 */

import { installingOf, isPending, progressOf } from "../lib/connections/progress.ts";
import type { ServerStatus } from "../lib/connections/types.ts";
import type { Redactor } from "../lib/redact/redact.ts";
import { createStyle, type Style } from "../lib/terminal/style.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { plural } from "../lib/text/text.ts";
import { formatError, type Surface } from "./_boundary.ts";

/** Options of {@linkcode renderServerStatus}. */
export interface StatusOptions {
  /** @default no colour */
  style?: Style;
  redactor?: Redactor;
  /**
   * While servers are still connecting, one line naming them instead of the block (the
   * banner of the interactive client, which does not wait for them). @default false
   */
  compact?: boolean;
  /** The time durations are measured to. @default now */
  now?: Date;
  /**
   * List only these servers (the failed ones, under a scripting command); the header still
   * counts every server. @default every server
   */
  only?: (status: ServerStatus) => boolean;
  /** Where the block is shown, which decides the commands remedies name. @default "repl" */
  surface?: Surface;
}

/** One line per server (state, transport, what it offers), failures with cause and remedy. */
export function renderServerStatus(
  states: readonly ServerStatus[],
  options: StatusOptions = {},
): string {
  const style = options.style ?? createStyle(false);
  if (states.length === 0) {
    return `${style.bold("Servers")}  none configured (add entries to "mcpServers")`;
  }
  const now = options.now ?? new Date();
  const enabled = states.filter((s) => !s.disabled);
  const connected = enabled.filter((s) => s.state === "connected").length;
  const pending = enabled.filter(isPending);
  if (options.compact && pending.length > 0) {
    // Worded unlike the block's header, which says start-up is over.
    const done = connected > 0
      ? ` (${connected} of ${plural(enabled.length, "server")} connected)`
      : "";
    const names = pending.map((s) => s.installing ? `${s.name} (${installingOf(s)})` : s.name).join(
      ", ",
    );
    return `${style.bold("Servers")}  connecting to ${names}…${done}`;
  }
  const reconnecting = enabled.filter((s) => s.state === "reconnecting").length;
  const moving = [
    ...(pending.length > 0 ? [`${pending.length} connecting`] : []),
    ...(reconnecting > 0 ? [`${reconnecting} reconnecting`] : []),
  ];
  const lines = [
    `${style.bold("Servers")}  ${connected} of ${plural(enabled.length, "server")} connected` +
    (moving.length > 0 ? ` (${moving.join(", ")})` : ""),
  ];
  const listed = options.only ? states.filter(options.only) : states;
  const nameWidth = Math.max(...listed.map((s) => s.name.length));
  const stateWidth = Math.max(...listed.map((s) => label(s).length));
  for (const status of listed) {
    const mark = status.disabled
      ? style.dim("-")
      : status.state === "connected"
      ? style.green("✓")
      : status.state === "failed"
      ? style.red("✗")
      : style.yellow("…");
    const offers = status.state === "connected"
      ? [
        plural(status.counts.tools, "tool"),
        plural(status.counts.prompts, "prompt"),
        plural(status.counts.resources, "resource"),
      ].join(", ")
      : status.target;
    lines.push(
      `  ${mark} ${status.name.padEnd(nameWidth)}  ${label(status).padEnd(stateWidth)}  ` +
        `${status.transport.padEnd(15)}  ${offers}`,
    );
    const progress = progressOf(status, now);
    if (progress) lines.push(`      ${style.dim(progress)}`);
    if (status.state === "connected") {
      // The server's own words are quoted: no escapes, no secrets.
      const redact = (text: string) => options.redactor?.redact(text) ?? text;
      for (const warning of status.warnings ?? []) {
        lines.push(`      ${style.yellow("warning:")} ${redact(stripTerminalEscapes(warning))}`);
      }
    }
    if (status.refused) {
      lines.push(
        `      ${
          style.dim(
            `refused by the administrator's policy (${status.refused.file}): ` +
              status.refused.reason,
          )
        }`,
      );
    }
    if (status.error && !status.disabled && status.state !== "connected") {
      const text = formatError(status.error, {
        style,
        redactor: options.redactor,
        surface: options.surface,
      });
      for (const line of text.split("\n")) lines.push(`      ${line}`);
    }
  }
  return lines.join("\n");
}

function label(status: ServerStatus): string {
  return status.refused ? "refused" : status.disabled ? "disabled" : status.state;
}
