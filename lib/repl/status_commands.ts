/**
 * The slash commands that say how the session stands: `/debug`, `/api_stats` and `/status`.
 *
 * @module
 */

import { redisConfigured } from "../redis/settings.ts";
import { describeGrants } from "../permissions/in_effect.ts";
import { VERSION } from "../version.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { contextStatus } from "./context_status.ts";
import { formatDuration } from "../ui/terminal_ui.ts";
import { traceStatus } from "./trace_command.ts";
import { out } from "./slash_helpers.ts";
import { terminalColumns } from "../terminal/terminal.ts";
import { wrapWords } from "../text/text.ts";

type Command = SlashCommand<ClientSession>;

/** `/debug`: verbose logging switched, and the state it is in said. */
export const debugCommand: Command = {
  name: "debug",
  summary: "toggle verbose logging (mirrored here) and say which state it is in",
  run(s) {
    const logger = s.runtime.logger;
    logger.setDebug(!logger.debugMode);
    s.manager.setLoggingLevel(logger.debugMode ? "debug" : "info");
    out(
      s,
      `Debug logging ${logger.debugMode ? "on" : "off"}${
        logger.path ? ` (log file ${logger.path})` : ""
      }`,
    );
    return Promise.resolve();
  },
};

/** `/api_stats`: requests, tokens per model, tool calls per server, limits left. */
export const apiStatsCommand: Command = {
  name: "api_stats",
  summary: "requests, tokens per model, tool calls per server, and the limits left",
  run(s) {
    out(s, s.model ? s.model.formatStats() : `No model requests: ${s.modelError?.message}`);
    return Promise.resolve();
  },
};

/** `/status`: model, servers, memory, limits, log file, version and uptime. */
export const statusCommand: Command = {
  name: "status",
  summary: "model, servers, memory, limits, log file, version and uptime",
  run(s) {
    const { config, logger } = s.runtime;
    const states = s.manager.states().filter((st) => !st.disabled);
    const connected = states.filter((st) => st.state === "connected").length;
    const failed = states.filter((st) => st.state === "failed").length;
    const snapshot = s.model?.stats.snapshot();
    // Without a usable model nothing is spent, but the configured limits still hold.
    const spent = snapshot?.limits ?? [
      { name: "request_limit", used: 0, limit: config.agent.requestLimit },
      { name: "total_tokens_limit", used: 0, limit: config.agent.totalTokensLimit },
      { name: "sampling_request_limit", used: 0, limit: config.agent.samplingRequestLimit },
    ];
    const limits = spent.map((l) => `${l.name} ${l.used}/${l.limit ?? "unlimited"}`).join(", ");
    const rows: [string, string][] = [
      ["Version", `patchbay ${VERSION}`],
      [
        "Model",
        `${config.llm.provider} / ${config.llm.model}${
          s.modelError ? ` (unusable: ${s.modelError.message})` : ""
        }`,
      ],
      [
        "Servers",
        `${connected} connected, ${failed} failed, ${
          states.length - connected - failed
        } other, of ${states.length}`,
      ],
      ["Memory", s.memory.status().text],
      [
        "Requests",
        snapshot ? `${snapshot.session.requests} (${snapshot.session.totalTokens} tokens)` : "0",
      ],
      [
        "Limits",
        `${limits}, max_steps ${config.agent.maxSteps}, tool_call_timeout ${config.agent.toolCallTimeoutSeconds} s`,
      ],
      ["Context", contextStatus(s)],
      ["Trace", traceStatus()],
      ["Debug", logger.debugMode ? "on" : "off"],
      ["Log file", logger.path ?? "none (not writable)"],
      ["Config", s.runtime.configPath],
      ["Grants", grantsRow(s)],
      ["Uptime", formatDuration(Date.now() - s.startedAt)],
    ];
    // A value too long for the terminal goes on under itself, the labels left clear.
    const columns = terminalColumns(Deno.stdout);
    for (const [label, value] of rows) {
      out(
        s,
        wrapWords(`${s.style.bold(label.padEnd(9))} ${value}`, columns, " ".repeat(10)).join("\n"),
      );
    }
    return Promise.resolve();
  },
};

/** The Deno permissions in effect, in yellow when broader than the plan. */
function grantsRow(s: ClientSession): string {
  const { memory } = s.runtime.config;
  const redis = memory.backend === "redis" ||
    (memory.backend !== "file" && redisConfigured(memory, s.runtime.env));
  const grants = describeGrants({ redis });
  return grants.broader ? s.style.yellow(grants.text) : grants.text;
}
