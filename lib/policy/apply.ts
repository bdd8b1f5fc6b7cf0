/**
 * The administrator's policy applied to a configuration already merged and validated
 * (its `settings` were merged before, as the last layer: lib/config/merge.ts): servers it
 * refuses are kept in the list but disabled and marked `refused` (nothing starts them, the
 * permission plan grants them nothing, every surface says why), the tools `denied_tools`
 * names are marked on their servers (never offered nor called), and under
 * `require_approval` the `trusted` and `"sampling": "allow"` of entries that are not the
 * policy's own are set aside.
 *
 * @module
 */

import type { AppliedPolicy, Config, ServerConfig } from "../config/types.ts";
import type { JsonValue } from "../config/json.ts";
import type { Policy } from "./load.ts";
import { deniedToolsOf, refusalOf } from "./match.ts";

/** `config` under `policy`. */
export function applyPolicy(config: Config, policy: Policy): Config {
  const notices: string[] = [];
  const servers = config.servers.map((server) => {
    let next: ServerConfig = server;
    const reason = refusalOf(server, policy.rules);
    if (reason !== undefined) {
      next = { ...next, disabled: true, refused: { file: policy.file, reason } };
      notices.push(
        `Server '${server.name}' is refused by the administrator's policy (${policy.file}): ` +
          `${reason}; it is not started`,
      );
    }
    const denied = deniedToolsOf(server.name, policy.deniedTools);
    if (denied.length > 0) {
      next = {
        ...next,
        deniedTools: {
          file: policy.file,
          patterns: denied.map(({ written, tool }) => ({ written, tool })),
        },
      };
    }
    // The administrator's own entries keep what the administrator wrote.
    if (policy.requireApproval && server.scope !== "managed" && !next.refused) {
      const set = [
        next.trusted ? '"trusted": true' : "",
        next.sampling === "allow" ? '"sampling": "allow"' : "",
      ]
        .filter(Boolean);
      if (set.length > 0) {
        next = {
          ...next,
          trusted: false,
          sampling: next.sampling === "allow" ? "ask" : next.sampling,
        };
        notices.push(
          `Server '${server.name}': ${set.join(" and ")} set aside, since the administrator's ` +
            `policy (${policy.file}) requires approval: its tool calls and requests are asked about`,
        );
      }
    }
    return next;
  });
  const applied: AppliedPolicy = {
    file: policy.file,
    requireApproval: policy.requireApproval,
    forced: forcedFields(policy.settings),
  };
  return {
    ...config,
    servers,
    policy: applied,
    notices: [...config.notices ?? [], ...notices],
  };
}

/**
 * What `settings` forces, as paths: `AgentConfig.max_steps`, `mcpServers.corp`, `Hooks`.
 * Objects within a block are named by their fields; servers and lists by their block.
 */
export function forcedFields(settings: Record<string, JsonValue> | undefined): string[] {
  const fields: string[] = [];
  const walk = (value: JsonValue, path: string, depth: number) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value) && depth < 3) {
      const keys = Object.keys(value);
      if (keys.length === 0) fields.push(path);
      for (const key of keys) walk(value[key], `${path}.${key}`, depth + 1);
    } else fields.push(path);
  };
  for (const [block, value] of Object.entries(settings ?? {})) {
    if (block === "mcpServers" && value && typeof value === "object" && !Array.isArray(value)) {
      for (const name of Object.keys(value)) fields.push(`mcpServers.${name}`);
    } else walk(value, block, 1);
  }
  return fields;
}
