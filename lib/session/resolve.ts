/**
 * Finding the tool, prompt or resource a person named. People write `echo`,
 * `everything.echo`, `everything/echo` or the model-facing `everything__echo`; all of them
 * work as long as they are unambiguous, and an ambiguous or unknown name gets an error
 * listing what was meant or what is close.
 *
 * @module
 */

import type { CatalogueTool, WithheldTool } from "../connections/types.ts";
import { withheldError } from "../connections/tool_filter.ts";
import { EXIT, PatchbayError } from "../errors.ts";
import { didYouMean } from "../text/text.ts";
import { type RemedyText, STEPS } from "../errors/failure_table.ts";
import { SESSION_STEPS } from "../errors/session_steps.ts";

/** Something offered by a server under a name. */
export interface Named {
  server: string;
  name: string;
}

/** A name that matched nothing or more than one thing. */
export class NameResolutionError extends PatchbayError {
  constructor(kind: string, spec: string, reason: string, remedy: RemedyText) {
    super("usage", `Unknown ${kind}: ${spec}`, { reason, remedy, exitCode: EXIT.usage });
  }
}

/** Splits `server.name` / `server/name`; `undefined` server when there is no separator. */
function split(spec: string, servers: ReadonlySet<string>): { server?: string; name: string }[] {
  const options: { server?: string; name: string }[] = [{ name: spec }];
  for (const separator of [".", "/", ":"]) {
    let at = spec.indexOf(separator);
    // Server names may themselves contain the separator: try every split point.
    while (at > 0) {
      const server = spec.slice(0, at);
      if (servers.has(server)) options.push({ server, name: spec.slice(at + 1) });
      at = spec.indexOf(separator, at + 1);
    }
  }
  return options;
}

/** Finds one item by `spec` among `items` (prompts, or tools viewed by original name). */
export function resolveNamed<T extends Named>(
  kind: "tool" | "prompt" | "resource",
  spec: string,
  items: readonly T[],
): T {
  const servers = new Set(items.map((i) => i.server));
  const matches = new Set<T>();
  for (const { server, name } of split(spec, servers)) {
    for (const item of items) {
      if (item.name === name && (server === undefined || item.server === server)) matches.add(item);
    }
  }
  if (matches.size === 1) return [...matches][0];
  if (matches.size > 1) {
    const names = [...matches].map((m) => `${m.server}.${m.name}`);
    throw new NameResolutionError(
      kind,
      spec,
      `${names.length} servers offer a ${kind} named "${spec}"`,
      SESSION_STEPS.nameServer(...names),
    );
  }
  const all = items.map((i) => `${i.server}.${i.name}`);
  const close = didYouMean(spec, [...all, ...items.map((i) => i.name)]);
  throw new NameResolutionError(
    kind,
    spec,
    items.length === 0
      ? `no connected server offers any ${kind}`
      : `no connected server offers a ${kind} named "${spec}"`,
    close
      ? `did you mean "${close}"?`
      : items.length === 0
      ? STEPS.serverStates
      : STEPS.listOf(kind),
  );
}

/**
 * Finds a tool by catalogue name, `server.tool`, or its own name when unique. A name that
 * only a `withheld` tool has (the configuration does not offer it) is refused saying so.
 */
export function resolveTool(
  spec: string,
  tools: readonly CatalogueTool[],
  withheld: readonly WithheldTool[] = [],
): CatalogueTool {
  const byCatalogueName = tools.find((t) => t.name === spec);
  if (byCatalogueName) return byCatalogueName;
  const views = tools.map((tool) => ({ server: tool.server, name: tool.originalName, tool }));
  try {
    return resolveNamed("tool", spec, views).tool;
  } catch (error) {
    const hidden = withheld.find(({ tool }) =>
      [tool.name, `${tool.server}.${tool.originalName}`, `${tool.server}/${tool.originalName}`]
        .includes(spec)
    ) ?? onlyOne(withheld.filter(({ tool }) =>
      tool.originalName === spec
    ));
    if (hidden) throw withheldError(hidden.tool, hidden.reason, hidden.policy);
    throw error;
  }
}

function onlyOne<T>(items: readonly T[]): T | undefined {
  return items.length === 1 ? items[0] : undefined;
}

/** The server part of `server.tool` (or `server/tool`, `server:tool`) when it names a configured server. */
export function serverPrefix(spec: string, servers: readonly string[]): string | undefined {
  return servers.filter((name) => [".", "/", ":"].some((sep) => spec.startsWith(`${name}${sep}`)))
    .sort((a, b) => b.length - a.length)[0];
}

/** A prompt as it declares its arguments (`prompts/list`). */
export interface DeclaredPrompt {
  arguments?: readonly { name: string; required?: boolean }[];
}

/** The names of the arguments `prompt` declares required that `values` does not give. */
export function missingArguments(
  prompt: DeclaredPrompt,
  values: Readonly<Record<string, string>>,
): string[] {
  return (prompt.arguments ?? []).filter((a) => a.required && !Object.hasOwn(values, a.name))
    .map((a) => a.name);
}

/** Parses `k=v` words (values may be quoted) into prompt arguments. */
export function parseKeyValues(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  const pattern = /([^\s=]+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g;
  for (const match of text.matchAll(pattern)) {
    const [, key, raw] = match;
    result[key] = raw.startsWith('"')
      ? JSON.parse(raw)
      : raw.startsWith("'")
      ? raw.slice(1, -1)
      : raw;
  }
  const leftover = text.replace(pattern, "").trim();
  if (leftover) {
    throw new PatchbayError("usage", `Cannot read the arguments: ${leftover}`, {
      reason: "prompt arguments are written name=value (quote values with spaces)",
      remedy: SESSION_STEPS.promptArguments,
    });
  }
  return result;
}

/** Tool arguments typed as JSON: an object, or nothing for `{}`. */
export function parseJsonArgs(json: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new PatchbayError("usage", "Tool arguments are not valid JSON", {
      reason: (error as Error).message,
      remedy: SESSION_STEPS.jsonObject,
    });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new PatchbayError("usage", "Tool arguments must be a JSON object", {
      reason: `got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
      remedy: SESSION_STEPS.braces,
    });
  }
  return value as Record<string, unknown>;
}

/**
 * Whether `uri` fits an RFC 6570 template (each `{…}` matching one or more characters).
 *
 * Not by a regular expression: the template is a server's, and `r://{a}{b}…{h}x` made V8
 * backtrack past 30 s against a 60-character URI, the REPL frozen. Each variable is one or
 * more characters followed by literal text, so the leftmost place of each literal part
 * after the one before is the only place worth trying: one pass over the URI per part.
 */
export function templateMatches(template: string, uri: string): boolean {
  const parts = template.split(/\{[^}]*\}/);
  if (parts.length === 1) return template === uri;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!uri.startsWith(first)) return false;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    // One character at least for the variable before the part.
    const found = uri.indexOf(part, at + 1);
    if (found < 0) return false;
    at = found + part.length;
  }
  return uri.length - last.length >= at + 1 && uri.endsWith(last);
}

/** A resource named with its server: `server:uri`, as `@server:uri` in a message. */
export interface ServerUri {
  server: string;
  uri: string;
}

/**
 * `spec` as `server:uri` (a leading `@` allowed, as in chat): split when it starts with a
 * configured server's name and a colon, and is not itself a URI a server lists or a
 * template matches (a server may be named like a URI scheme). `undefined` otherwise.
 */
export function splitServerUri(
  spec: string,
  servers: readonly string[],
  resources: readonly { server: string; uri: string }[],
  templates: readonly { server: string; uriTemplate: string }[],
): ServerUri | undefined {
  const isUri = (text: string) =>
    resources.some((r) => r.uri === text) ||
    templates.some((t) => templateMatches(t.uriTemplate, text));
  if (isUri(spec)) return undefined;
  const text = spec.startsWith("@") ? spec.slice(1) : spec;
  // Longest names first, so `docs-v2:` is not taken for a server named `docs`.
  const server = [...servers].sort((a, b) => b.length - a.length)
    .find((name) => text.startsWith(`${name}:`) && text.length > name.length + 1);
  return server === undefined ? undefined : { server, uri: text.slice(server.length + 1) };
}

/**
 * The server to read `uri` from: the one that lists it, else the one whose template
 * matches it, else the only server offering resources at all.
 */
export function resourceServer(
  uri: string,
  resources: readonly { server: string; uri: string }[],
  templates: readonly { server: string; uriTemplate: string }[],
): string {
  const listed = resources.find((r) => r.uri === uri);
  if (listed) return listed.server;
  const matching = new Set(
    templates.filter((t) => templateMatches(t.uriTemplate, uri)).map((t) => t.server),
  );
  if (matching.size === 1) return [...matching][0];
  const offering = new Set([...resources, ...templates].map((r) => r.server));
  if (matching.size === 0 && offering.size === 1) return [...offering][0];
  throw new PatchbayError("usage", `Which server has ${uri}?`, {
    reason: matching.size > 1
      ? `the resource templates of ${[...matching].join(" and ")} all match it`
      : "no connected server lists it or has a template that matches it",
    remedy: SESSION_STEPS.nameResourceServer,
  });
}
