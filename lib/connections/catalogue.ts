/**
 * The names the language model sees for the tools of every server.
 *
 * OpenAI-style function calling accepts only `^[a-zA-Z0-9_-]{1,64}$`, while MCP tool names
 * may hold dots, spaces, unicode, `__` or run past 64 characters, and two servers may
 * offer tools of the same name. Each tool therefore gets a model-facing name
 * `<server>__<tool>`, sanitized, shortened and made unique, and a route back to its
 * server and original name.
 *
 * The result depends only on the set of (server, tool) pairs, never on their order, so
 * a name stays the same across reconnects and restarts as long as the tools do.
 *
 * @module
 */

import type { Tool } from "@modelcontextprotocol/client";
import type { CatalogueTool } from "./types.ts";

/** What OpenAI-compatible function calling accepts as a function name. */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

/** Longest model-facing tool name (the provider limit). */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Between the server prefix and the tool name. */
export const NAMESPACE_SEPARATOR = "__";

/**
 * Longest server prefix: a long server name must leave room for the tool's own name,
 * which is what the model reads to choose a tool.
 */
export const MAX_SERVER_PREFIX_LENGTH = 24;

/** Characters of the identity hash that disambiguates shortened or clashing names. */
const HASH_LENGTH = 7;

/** The tools one server offers. */
export interface ServerTools {
  server: string;
  tools: readonly Tool[];
}

interface Candidate {
  server: string;
  tool: Tool;
  /** `server\u0000tool`: unique per tool, the input of the disambiguating hash. */
  identity: string;
  /** The plain `<server>__<tool>` after sanitizing and shortening. */
  base: string;
  /** Sanitizing and shortening changed nothing. */
  exact: boolean;
}

/**
 * Builds the catalogue: every tool of every server under a unique model-facing name.
 * Output order follows the input (servers, then each server's tools). A tool name
 * listed twice by one server keeps only its first entry.
 */
export function buildCatalogue(servers: readonly ServerTools[]): CatalogueTool[] {
  const candidates: Candidate[] = [];
  for (const { server, tools } of servers) {
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      candidates.push(candidate(server, tool));
    }
  }
  const names = assignNames(candidates);
  return candidates.map((c, i) => ({
    name: names[i],
    server: c.server,
    originalName: c.tool.name,
    title: c.tool.title ?? c.tool.annotations?.title,
    description: c.tool.description,
    inputSchema: c.tool.inputSchema as Record<string, unknown>,
    annotations: c.tool.annotations,
  }));
}

function candidate(server: string, tool: Tool): Candidate {
  const serverPart = sanitize(server, "server");
  const toolPart = sanitize(tool.name, "tool");
  const identity = `${server}\u0000${tool.name}`;
  const prefix = serverPart.slice(0, MAX_SERVER_PREFIX_LENGTH);
  let base = `${prefix}${NAMESPACE_SEPARATOR}${toolPart}`;
  let exact = serverPart === server && toolPart === tool.name && prefix === serverPart;
  if (base.length > MAX_TOOL_NAME_LENGTH) {
    // Too long: keep the start (most readable) and let the hash tell tools apart.
    base = withSuffix(base, hash(identity));
    exact = false;
  }
  return { server, tool, identity, base, exact };
}

/**
 * Resolves clashes: an exact name keeps its base; every inexact name in a clash gets
 * its identity hash. A clash left after that (a hash collision, or a suffixed name
 * equal to another's base) is settled by numbering in identity order.
 */
function assignNames(candidates: readonly Candidate[]): string[] {
  const byBase = groupBy(candidates.map((c, i) => [c.base, i] as const));
  const names = candidates.map((c) => c.base);
  for (const indices of byBase.values()) {
    if (indices.length < 2) continue;
    const exact = indices.filter((i) => candidates[i].exact);
    for (const i of indices) {
      // At most one exact candidate can share a base: exact names are the raw names.
      if (exact.length === 1 && exact[0] === i) continue;
      if (!candidates[i].base.endsWith(hash(candidates[i].identity))) {
        names[i] = withSuffix(candidates[i].base, hash(candidates[i].identity));
      }
    }
  }
  const byName = groupBy(names.map((name, i) => [name, i] as const));
  const taken = new Set(names);
  for (const [name, indices] of byName) {
    if (indices.length < 2) continue;
    const ordered = [...indices].sort((a, b) =>
      compare(candidates[a].identity, candidates[b].identity)
    );
    for (const [rank, i] of ordered.entries()) {
      if (rank === 0) continue;
      let n = rank + 1;
      let next = withSuffix(name, String(n));
      while (taken.has(next)) next = withSuffix(name, String(++n));
      names[i] = next;
      taken.add(next);
    }
  }
  return names;
}

/** Valid characters kept; every run of others becomes one `_`; accents dropped first. */
export function sanitize(text: string, fallback: string): string {
  const ascii = text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const cleaned = ascii.replace(/[^A-Za-z0-9_-]+/g, "_");
  return /[A-Za-z0-9]/.test(cleaned) ? cleaned : fallback;
}

/** `text` shortened so that `text_suffix` fits the length limit. */
function withSuffix(text: string, suffix: string): string {
  const room = MAX_TOOL_NAME_LENGTH - suffix.length - 1;
  return `${text.slice(0, room)}_${suffix}`;
}

/** FNV-1a (32 bit) in base 36: short, stable across runs and platforms. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36).padStart(HASH_LENGTH, "0");
}

function groupBy(pairs: readonly (readonly [string, number])[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const [key, index] of pairs) {
    const group = groups.get(key);
    if (group) group.push(index);
    else groups.set(key, [index]);
  }
  return groups;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
