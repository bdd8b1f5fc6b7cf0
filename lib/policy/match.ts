/**
 * Which servers and tools the administrator's policy refuses, judged as Claude Code judges
 * its `allowedMcpServers` / `deniedMcpServers`: a server matching a rule of
 * `denied_servers` never runs (deny wins); when `allowed_servers` is present, only a server
 * matching one of its rules runs (an empty list admits none). A rule names servers by
 * `name`, `command` (stdio) or `url` (streamable HTTP, SSE). When `allowed_servers` holds
 * any `command` rule, a stdio server must match one of them (its name matching is not
 * enough, since a name is whatever the entry's author chose); likewise `url` rules for
 * the servers at a URL.
 *
 * Pure: the configuration's servers as loaded (variables expanded) and the policy's rules.
 *
 * @module
 */

import { globMatches } from "../connections/tool_filter.ts";
import type { ServerConfig } from "../config/types.ts";
import type { RuleKind, ServerRule } from "./schema.ts";

/** The rules of the policy that judge servers. */
export interface ServerRules {
  allowed?: readonly ServerRule[];
  denied?: readonly ServerRule[];
}

/** A stdio server's command line as the rules match it: command and arguments, by spaces. */
export function commandLine(server: { command: string; args: readonly string[] }): string {
  return [server.command, ...server.args].join(" ");
}

/** The rule's kind and pattern (a valid rule has exactly one). */
export function ruleOf(rule: ServerRule): { kind: RuleKind; pattern: string } {
  if (rule.command !== undefined) return { kind: "command", pattern: rule.command };
  if (rule.url !== undefined) return { kind: "url", pattern: rule.url };
  return { kind: "name", pattern: rule.name ?? "" };
}

/** `{"name": "corp-*"}`, as the rule is written in the file. */
export function describeRule(rule: ServerRule): string {
  const { kind, pattern } = ruleOf(rule);
  return `{"${kind}": ${JSON.stringify(pattern)}}`;
}

/** Whether `rule` names `server` (a command rule only stdio servers, a url rule the others). */
export function ruleMatches(rule: ServerRule, server: ServerConfig): boolean {
  const { kind, pattern } = ruleOf(rule);
  if (kind === "name") return globMatches(pattern, server.name);
  if (kind === "command") {
    return server.transport === "stdio" && globMatches(pattern, commandLine(server));
  }
  return server.transport !== "stdio" && urlMatches(pattern, server.url);
}

/**
 * Why the rules refuse `server`, in words naming the rule (`denied_servers[2]
 * {"name": "x"} matches it`); `undefined` when it may run.
 */
export function refusalOf(server: ServerConfig, rules: ServerRules): string | undefined {
  const denied = (rules.denied ?? []).findIndex((rule) => ruleMatches(rule, server));
  if (denied >= 0) {
    return `denied_servers[${denied}] ${describeRule(rules.denied![denied])} matches it`;
  }
  const allowed = rules.allowed;
  if (allowed === undefined) return undefined;
  if (allowed.length === 0) return "allowed_servers is empty: no server may run";
  const kind: RuleKind = server.transport === "stdio" ? "command" : "url";
  // A name is the entry author's choice: where the list pins commands (or URLs), only
  // those admit a server of that kind.
  const strict = allowed.some((rule) => ruleOf(rule).kind === kind);
  const admitting = allowed.filter((rule) => ruleOf(rule).kind === (strict ? kind : "name"));
  if (admitting.some((rule) => ruleMatches(rule, server))) return undefined;
  if (!strict) return `its name matches no rule of allowed_servers`;
  return kind === "command"
    ? `its command line matches no command rule of allowed_servers`
    : `its URL matches no url rule of allowed_servers`;
}

/**
 * Whether `url` matches the URL pattern `scheme://host[:port][/path]`. The scheme may be
 * `*`; in the host, `*` stays within the host (it never reaches past `/`, `?`, `#` or `@`,
 * so `https://*.corp.example/*` cannot be satisfied by `https://evil.example/?.corp.example/`)
 * and the comparison ignores case; a host without a port matches it on any port; without a
 * path, every path matches. User names and passwords in the URL take no part.
 */
export function urlMatches(pattern: string, url: string): boolean {
  const parts = /^([^:/?#]+):\/\/([^/?#]*)(.*)$/s.exec(pattern);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (!parts) return false;
  const [, scheme, host, path] = parts;
  if (!globMatches(scheme.toLowerCase(), parsed.protocol.slice(0, -1))) return false;
  const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  const hostPattern = host.toLowerCase();
  const hostname = parsed.hostname.toLowerCase();
  // A port written in the pattern (`host:8080`, `host:*`, `[::1]:*`) is matched; else any.
  const withPort = /^\[.*\]:|^[^[]*:/.test(hostPattern);
  const hostMatches = hostGlob(hostPattern, withPort ? `${hostname}:${port}` : hostname);
  if (!hostMatches) return false;
  return path === "" || globMatches(path, parsed.pathname + parsed.search);
}

/** A host glob: `*` matches a run of characters that ends the host at none of `/?#@`. */
function hostGlob(pattern: string, host: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/[*?]/g, (glob) => glob === "*" ? "[^/?#@]*" : "[^/?#@]");
  return new RegExp(`^${source}$`).test(host);
}

/** A `denied_tools` pattern split into its server and tool globs. */
export interface ToolPattern {
  /** As written in the policy: `github.delete_*`. */
  written: string;
  server: string;
  tool: string;
}

/** `server.tool` at its first dot (server names hold no dots; tool names may). */
export function toolPattern(written: string): ToolPattern {
  const dot = written.indexOf(".");
  return { written, server: written.slice(0, dot), tool: written.slice(dot + 1) };
}

/** The `denied_tools` patterns that apply to `server`'s tools. */
export function deniedToolsOf(server: string, patterns: readonly string[]): ToolPattern[] {
  return patterns.map(toolPattern).filter((pattern) => globMatches(pattern.server, server));
}
