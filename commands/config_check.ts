/**
 * `patchbay config check`: validates the configuration and summarises it, without
 * starting any server. Exit code 0 when valid, 1 when not.
 *
 * @module
 */

import { transportChoice } from "../lib/config/servers.ts";
import type { Config, ServerConfig } from "../lib/config/types.ts";
import { DEFAULTS } from "../lib/defaults.ts";
import { EXIT } from "../lib/errors.ts";
import { hookCommands } from "../lib/hooks/types.ts";
import { PROVIDERS } from "../lib/providers.ts";
import { type GlobalOptions, startUp } from "../lib/cli/startup.ts";
import { stdoutStyle, type Style } from "../lib/terminal/style.ts";
import { plural } from "../lib/text/text.ts";

/** Options of `config check`. */
export interface ConfigCheckOptions extends GlobalOptions {
  /** Print the normalized configuration as JSON (secrets redacted). @default false */
  json?: boolean;
}

/** Runs the check; errors propagate to the command boundary. */
export async function configCheck(options: ConfigCheckOptions): Promise<number> {
  // It starts nothing, the keychain's tool included (no unlock prompt): `${keychain:…}`
  // entries are listed, and `patchbay doctor` reads them.
  const runtime = await startUp(options, { keychain: false });
  const { config, logger } = runtime;
  if (options.json) {
    // The values behind the masks are not shown, not even masked.
    const { secretValues: _secrets, ...shown } = config;
    console.log(
      JSON.stringify(logger.redactor.redactValue({ valid: true, config: shown }), null, 2),
    );
    return EXIT.ok;
  }
  for (const notice of runtime.notices) console.error(notice);
  // Server URLs and commands can carry credentials (user:password@, ?api_key=).
  console.log(logger.redactor.redact(summarize(config, stdoutStyle())));
  return EXIT.ok;
}

/** A readable summary of a valid configuration. */
export function summarize(config: Config, style: Style): string {
  const { llm, agent } = config;
  const files = (config.sources ?? []).filter((source) => source.scope !== "managed");
  const lines = [
    files.length > 1
      ? `${style.green("✓")} ${files.map((f) => `${f.path} (${f.scope})`).join(" and ")} ` +
        "are valid, read together (the project's entries and fields win)"
      : `${style.green("✓")} ${config.file} is valid`,
    ...policySummary(config, style),
    "",
    `${style.bold("Model")}    ${PROVIDERS[llm.provider].label} (${llm.provider}) / ${llm.model}`,
    `         max_tokens ${llm.maxTokens}, temperature ${llm.temperature ?? "provider default"}, ` +
    `max_context_length ${llm.maxContextLength} tokens`,
    "",
    `${style.bold("Servers")}  ${
      config.servers.length === 0 ? "none" : plural(config.servers.length, "server")
    }`,
  ];
  const width = Math.max(0, ...config.servers.map((s) => s.name.length));
  // Which file each entry is from, when there are several (scope, as `mcp list` shows it).
  const scoped = (config.sources ?? []).length > 1;
  for (const server of config.servers) {
    const scope = scoped && server.scope ? style.dim(`  [${server.scope}]`) : "";
    lines.push(`  ${server.name.padEnd(width)}  ${describeServer(server)}${scope}`);
    if (server.refused) {
      lines.push(
        `  ${" ".repeat(width)}  ${style.yellow("refused")} by the administrator's policy: ` +
          server.refused.reason,
      );
    }
    if (server.transportReason) {
      lines.push(
        `  ${" ".repeat(width)}  ${
          style.dim(transportChoice(server.transport, server.transportReason))
        }`,
      );
    }
  }
  lines.push(
    "",
    `${style.bold("Agent")}    tool_call_timeout ${agent.toolCallTimeoutSeconds} s, connect_wait ${
      agent.connectWaitSeconds ?? DEFAULTS.agent.connectWaitSeconds
    } s, max_steps ${agent.maxSteps}, ` +
      `request_limit ${agent.requestLimit ?? "unlimited"}, total_tokens_limit ${
        agent.totalTokensLimit ?? "unlimited"
      }`,
    `${style.bold("Memory")}   ${config.memory.backend}${
      config.memory.ttlSeconds ? `, ttl ${config.memory.ttlSeconds} s` : ""
    }`,
  );
  // The hooks, by event (docs/hooks.md).
  const hooks = hookCommands(config.hooks);
  if (hooks.length > 0) {
    const events = [...new Set(hooks.map((h) => h.event))];
    lines.push(
      `${style.bold("Hooks")}    ${
        events.map((event) => `${event} ${hooks.filter((h) => h.event === event).length}`)
          .join(", ")
      }`,
    );
  }
  lines.push(...describeSecrets(config, style));
  for (const warning of config.warnings) {
    lines.push(`${style.yellow("warning:")} ${warning.path}: ${warning.message}`);
  }
  return lines.join("\n");
}

/** The administrator's policy, when one applies: its file and what it does. */
function policySummary(config: Config, style: Style): string[] {
  const policy = config.policy;
  if (!policy) return [];
  const refused = config.servers.filter((s) => s.refused).map((s) => s.name);
  const does = [
    ...(policy.requireApproval ? ["requires approval of every tool call"] : []),
    ...(policy.forced.length > 0 ? [`forces ${policy.forced.join(", ")}`] : []),
    ...(refused.length > 0 ? [`refuses ${refused.join(", ")}`] : []),
  ];
  return [
    `${style.bold("Policy")}   ${policy.file} (the administrator's)` +
    (does.length > 0 ? `: ${does.join("; ")}` : ""),
  ];
}

function describeServer(server: ServerConfig): string {
  const flags = [
    server.refused ? "" : server.disabled ? "disabled" : "",
    server.trusted ? "trusted" : "",
  ].filter(Boolean);
  const suffix = flags.length > 0 ? `  (${flags.join(", ")})` : "";
  if (server.transport === "stdio") {
    return `stdio            ${[server.command, ...server.args].join(" ")}${suffix}`;
  }
  const auth = server.auth
    ? ", oauth"
    : server.headersHelper
    ? ", headers_helper"
    : Object.keys(server.headers).length > 0
    ? ", headers"
    : "";
  return `${
    server.transport.padEnd(16)
  } ${server.url} (timeout ${server.timeoutSeconds} s, ping_interval ${
    server.pingIntervalSeconds ?? DEFAULTS.server.pingIntervalSeconds
  } s${auth})${suffix}`;
}

/**
 * Where the secrets come from: the key's helper and the keychain entries. Neither is run
 * nor read here: they are when a connection or a model request needs them, and
 * `patchbay doctor` does both.
 */
function describeSecrets(config: Config, style: Style): string[] {
  const lines: string[] = [];
  const helper = config.llm.apiKeyHelper;
  if (helper) {
    lines.push(
      `${style.bold("Key")}      from LLM.api_key_helper ${
        [helper.command, ...helper.args].join(" ")
      }, run again every ${
        config.llm.apiKeyHelperTtlSeconds ?? DEFAULTS.secrets.apiKeyHelperTtlSeconds
      } s and on a 401`,
    );
  }
  const entries = config.keychainEntries ?? [];
  if (entries.length > 0) {
    lines.push(
      `${style.bold("Keychain")} ${entries.join(", ")} (read when used; \`patchbay doctor\` ` +
        "checks they exist)",
    );
  }
  return lines;
}
