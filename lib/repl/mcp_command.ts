/**
 * `/mcp` (also `/servers`): the servers with their state, and `enable <name>` / `disable
 * <name>` to switch one on or off for this session only, at once, without a restart. The
 * configuration file is not touched (`patchbay mcp enable|disable` edits it); a session's
 * switch outlives `/refresh`. See docs/tools-and-sessions.md.
 *
 * @module
 */

import type { ServerStatus, WithheldTool } from "../connections/types.ts";
import { PatchbayError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { plural } from "../text/text.ts";
import type { ClientSession } from "../session/client_session.ts";
import { unmatchedLines } from "../ui/listing.ts";
import type { SlashCommand } from "./slash.ts";
import { unknownServer } from "./unknown_server.ts";
import { out } from "./slash_helpers.ts";

const clean = (text: unknown) => stripTerminalEscapes(String(text ?? ""));

/** The `/mcp` slash command. */
export const mcpCommand: SlashCommand<ClientSession> = {
  name: "mcp",
  aliases: ["servers"],
  usage: "[enable|disable <server>]",
  summary:
    "list the servers and their state; enable or disable one for this session (also /servers)",
  complete(s, partial) {
    // The registry filters and replaces the word being typed, so each candidate is one word.
    const words = partial.split(/\s+/);
    if (words.length <= 1) return ["enable ", "disable "];
    if (words.length > 2) return [];
    // Only the servers the verb would change: enable offers the disabled ones, and so on.
    const wanted = words[0] === "enable";
    return s.manager.states().filter((st) => Boolean(st.disabled) === wanted && !st.refused)
      .map((st) => st.name);
  },
  async run(s, args) {
    const [verb, name, ...rest] = args.split(/\s+/).filter(Boolean);
    if (!verb) return list(s);
    if ((verb !== "enable" && verb !== "disable") || !name || rest.length > 0) {
      throw new PatchbayError("usage", `Usage: /mcp [enable|disable <server>]`, {
        reason: `'${clean(args)}' is not a /mcp command`,
        remedy: REPL_STEPS.mcp,
      });
    }
    const names = s.manager.states().map((st) => st.name);
    if (!names.includes(name)) throw unknownServer(name, names);
    const enable = verb === "enable";
    const before = s.manager.status(name);
    // Refused by the administrator's policy: no switch of the session starts it.
    if (enable && before?.refused) throw s.manager.unavailable(name)!;
    if (before && Boolean(before.disabled) === !enable) {
      out(s, `${clean(name)} is already ${enable ? "enabled" : "disabled"}.`);
      return;
    }
    // Disabled in the file (not by this session): the launcher's plan left out its grants.
    const offInFile = enable && s.manager.switchedOff(name) === undefined;
    const status = await s.switchServer(name, enable);
    const note = s.style.dim(" (this session only; servers_config.json is unchanged)");
    if (!enable) {
      out(s, `Disabled ${clean(name)} now: its tools are no longer offered${note}`);
      return;
    }
    if (status?.state === "connected") {
      const [offered, withheld] = offeredTools(s, status);
      out(s, `Enabled ${clean(name)} now: connected, ${offered} offered${withheld}${note}`);
    } else {
      const flag = offInFile && status?.error ? denoPermissionFlag(status.error) : undefined;
      if (flag) {
        // Retrying cannot grant it, nor can /refresh while the file says disabled: the file
        // decides again (disabled), and the person is told the way that works.
        await s.switchServer(name, undefined);
        throw ungranted(clean(name), flag);
      }
      out(s, `Enabled ${clean(name)}${note}, but it did not connect:`);
      if (status?.error) s.output.err(`${s.presentError(status.error)}\n`);
    }
  },
};

/**
 * A server disabled in the file needs a grant the session was started without: the plan
 * leaves out what disabled servers need, and only a restart under a plan with the server
 * enabled in the file adds it.
 */
function ungranted(name: string, flag: string): PatchbayError {
  return new PatchbayError("deno_permission", `Could not enable ${name}: it needs ${flag}`, {
    reason: `its entry is disabled in the configuration, so patchbay was started without the ` +
      `permissions it needs (${flag} was not granted); it stays disabled`,
    remedy: REPL_STEPS.enableInFile(name),
  });
}

function list(s: ClientSession): Promise<void> {
  const withheld = s.manager.withheld();
  for (const status of s.manager.states()) {
    const switched = s.manager.switchedOff(status.name);
    const state = status.refused
      ? s.style.dim(`refused by the administrator's policy (${status.refused.file})`)
      : status.disabled
      ? s.style.dim(switched === true ? "disabled for this session" : "disabled")
      : status.state === "connected"
      ? s.style.green("connected")
      : status.state === "failed"
      ? s.style.red("failed")
      : s.style.yellow(status.state);
    const offers = status.state === "connected"
      ? ` · ${offeredTools(s, status, withheld).join("")}`
      : "";
    const flag = switched === false && !status.disabled
      ? s.style.dim(" (enabled for this session)")
      : "";
    out(s, `  ${clean(status.name).padEnd(16)} ${state}${offers}${flag}`);
  }
  for (const line of unmatchedLines(s.manager.unmatchedPatterns())) {
    out(s, s.style.yellow(`  warning: ${line}`));
  }
  out(
    s,
    s.style.dim("/mcp enable <server> or /mcp disable <server> switches one for this session."),
  );
  return Promise.resolve();
}

/**
 * The tools `status`'s server offers after its `include_tools` / `exclude_tools`, and how
 * many those withhold: ["7 tools", " (8 not offered by include_tools / exclude_tools)"].
 */
function offeredTools(
  s: ClientSession,
  status: ServerStatus,
  withheld: readonly WithheldTool[] = s.manager.withheld(),
): [string, string] {
  const hidden = withheld.filter((w) => w.tool.server === status.name).length;
  return [
    plural(status.counts.tools - hidden, "tool"),
    hidden > 0 ? ` (${hidden} not offered by include_tools / exclude_tools)` : "",
  ];
}
