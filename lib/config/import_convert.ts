/**
 * One server entry of another client turned into patchbay's canonical form, saying what
 * was converted (gemini-cli's milliseconds, its SSE `url`), what was left out and why, and
 * refusing what cannot be known (VS Code's `${input:…}`, asked of the editor's user).
 *
 * @module
 */

import { DIALECT_FIELDS, TYPE_TO_TRANSPORT } from "./dialect.ts";
import { insteadOfForeign } from "./expand.ts";
import { isSseAddress } from "./servers.ts";
import type { Dialect, SourceFile } from "./import_sources.ts";
import { type FoundTrust, keychainEffect, keychainUses, sortTrust } from "./import_trust.ts";
import type { JsonValue } from "./json.ts";
import { MAX_DURATION_SECONDS, ServerSchema } from "./schema.ts";

/** What became of one entry. */
export interface Converted {
  name: string;
  /** The canonical entry; `undefined` when it cannot be imported (`skipped` says why). */
  entry?: Record<string, JsonValue>;
  skipped?: string;
  /** Conversions made, worded for the person. */
  notes: string[];
  /** Fields left out, each with why. */
  dropped: string[];
  /**
   * The settings of the entry that widen trust (lib/config/import_trust.ts): left out of
   * it unless `keepTrust` was given, kept otherwise; said either way.
   */
  trust: FoundTrust[];
}

/** Options of {@linkcode convertEntry}. */
export interface ConvertOptions {
  /** Keep the settings that widen trust (`--keep-trust`, or patchbay's own file). @default false */
  keepTrust?: boolean;
}

/** Fields taken as they are (their values' `${env:X}` rewritten). */
const COPIED = ["command", "args", "env", "cwd", "headers"] as const;
/** Fields read into others, so not reported as left out. */
const READ = new Set([
  ...COPIED,
  "type",
  "transport_type",
  "url",
  "httpUrl",
  "serverUrl",
  "disabled",
  "enabled",
  "timeout",
  "trust",
  "includeTools",
  "excludeTools",
]);
/** patchbay's own fields that no other client writes, taken as they are. */
const NATIVE = Object.keys(ServerSchema.shape).filter((field) =>
  !READ.has(field) && !(field in DIALECT_FIELDS)
);

/** Why well-known fields of other clients are left out. */
const LEFT_OUT: Readonly<Record<string, string>> = {
  autoApprove: 'patchbay asks before each tool call; trust a server with "trusted": true',
  alwaysAllow: 'patchbay asks before each tool call; trust a server with "trusted": true',
  envFile: "patchbay reads one .env file; copy the variables into it",
  description: "patchbay has no description field",
  oauth: 'patchbay discovers OAuth itself; add "auth": {"method": "oauth"} if needed',
  headersHelper: "a program is never imported to run unseen; if you trust it, write " +
    '"headers_helper": {"command": "sh", "args": ["-c", "<its command>"]} (docs/secrets.md)',
};

/** Converts the entry `name` of `source`; `places` resolves VS Code's folder variables. */
export function convertEntry(
  name: string,
  raw: JsonValue,
  source: Pick<SourceFile, "dialect" | "inputs">,
  places: { home: string; cwd: string },
  options: ConvertOptions = {},
): Converted {
  const result: Converted = { name, notes: [], dropped: [], trust: [] };
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ...result, skipped: "the entry is not an object" };
  }
  const transport = transportOf(raw, source.dialect, result);
  if (!transport) return result;
  const entry: Record<string, JsonValue> = { transport_type: transport };
  const strings = new Rewriter(places);
  for (const field of COPIED) {
    if (raw[field] === undefined) continue;
    entry[field] = strings.value(raw[field]);
  }
  const url = raw.url ?? raw.httpUrl ?? raw.serverUrl;
  if (url !== undefined) entry.url = strings.value(url);
  if (strings.foreign) {
    const input = source.inputs[strings.foreign] ?? {};
    const asked = input.description ? ` ("${input.description}")` : "";
    return {
      ...result,
      skipped: `it uses \${input:${strings.foreign}}, a value VS Code asks its user for${asked}; ` +
        `${insteadOfForeign(`\${input:${strings.foreign}}`)}, then add the entry with ` +
        "`patchbay mcp add-json <name> '<entry>'`",
    };
  }
  result.notes.push(...strings.notes);
  // patchbay's own fields (an entry from another patchbay file) are patchbay's already.
  for (const field of NATIVE) {
    if (raw[field] !== undefined) entry[field] = strings.value(raw[field]);
  }
  const native = raw.transport_type !== undefined;
  if (typeof raw.timeout === "number" && native) entry.timeout = raw.timeout;
  else if (typeof raw.timeout === "number") {
    if (source.dialect === "gemini") {
      const seconds = raw.timeout / 1000;
      if (seconds > 0 && seconds <= MAX_DURATION_SECONDS) {
        entry.timeout = seconds;
        result.notes.push(`timeout ${raw.timeout} ms (gemini-cli) is "timeout": ${seconds} s`);
      } else result.dropped.push(`timeout ${raw.timeout} ms: outside 0 to one day`);
    } else {
      result.dropped.push("timeout: its unit is not known here; patchbay's timeout is seconds");
    }
  }
  if (raw.disabled === true || raw.enabled === false) entry.disabled = true;
  // gemini-cli's tool filters are patchbay's include_tools / exclude_tools (exact names there,
  // which patchbay's globs match as they are).
  let filterLost = false;
  for (
    const [field, own] of [["includeTools", "include_tools"], ["excludeTools", "exclude_tools"]]
  ) {
    const names = raw[field];
    if (names === undefined) continue;
    if (Array.isArray(names) && names.every((n) => typeof n === "string" && n.length > 0)) {
      entry[own] = names;
      result.notes.push(`${field} (gemini-cli) is "${own}"`);
    } else {
      filterLost = true;
      result.dropped.push(`${field}: not a list of tool names`);
    }
  }
  if (raw.trust === true && source.dialect === "gemini" && filterLost) {
    // Trust was given to the tools the filter let through; without the filter it would
    // reach the ones the person kept out.
    result.dropped.push(
      "trust: not converted, since the tool filter is not: patchbay asks before each of " +
        'its tools (set "trusted": true yourself if every tool may run unasked)',
    );
  } else if (raw.trust === true && source.dialect === "gemini") {
    entry.trusted = true;
    result.notes.push('trust (gemini-cli) is "trusted"');
  }
  for (const field of Object.keys(raw)) {
    if (READ.has(field) || NATIVE.includes(field)) continue;
    result.dropped.push(`${field}: ${LEFT_OUT[field] ?? "not a field patchbay knows"}`);
  }
  const fixed = keychainUses(entry).find((use) => !use.removable);
  if (fixed && options.keepTrust !== true) {
    // Part of how the server is reached: it cannot be left out alone.
    return {
      ...result,
      skipped: `its ${fixed.path.join(".")} names \${keychain:${fixed.entries[0]}}: ` +
        `${keychainEffect(fixed.entries)}; --keep-trust imports it, once you have read it`,
    };
  }
  result.trust = sortTrust(entry, options.keepTrust === true);
  return { ...result, entry };
}

function transportOf(
  raw: Record<string, JsonValue>,
  dialect: Dialect,
  result: Converted,
): string | undefined {
  const written = raw.transport_type ?? raw.type;
  if (written !== undefined) {
    const transport = typeof written === "string"
      ? TYPE_TO_TRANSPORT[written] ?? (written === "streamable_http" ? written : undefined)
      : undefined;
    if (!transport) {
      result.skipped = `its type ${JSON.stringify(written)} is not a transport patchbay ` +
        "speaks (stdio, http / streamable_http, sse)";
    }
    return transport;
  }
  if (raw.command !== undefined) return "stdio";
  if (raw.httpUrl !== undefined) return "streamable_http";
  if (raw.url !== undefined || raw.serverUrl !== undefined) {
    const url = raw.url ?? raw.serverUrl;
    if (dialect !== "gemini") {
      // As patchbay reads a bare url: one ending in /sse is the legacy transport's address.
      return typeof url === "string" && isSseAddress(url) ? "sse" : "streamable_http";
    }
    result.notes.push("url without a type is an SSE address in gemini-cli: transport_type sse");
    return "sse";
  }
  result.skipped = "it has neither a command nor a url";
  return undefined;
}

/** Rewrites other clients' variables in string values into patchbay's. */
class Rewriter {
  notes: string[] = [];
  /** The first `${input:id}`'s id. */
  foreign: string | undefined;

  constructor(private readonly places: { home: string; cwd: string }) {}

  value(value: JsonValue): JsonValue {
    if (typeof value === "string") return this.#string(value);
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.value(v)]));
    }
    return value;
  }

  #string(text: string): string {
    return text.replace(/\$\{(env:|input:)?([^}]*)\}/g, (whole, kind: string, name: string) => {
      if (kind === "env:") return `\${${name}}`;
      if (kind === "input:") {
        this.foreign ??= name;
        return whole;
      }
      const folder = name === "workspaceFolder"
        ? this.places.cwd
        : name === "userHome"
        ? this.places.home
        : undefined;
      if (folder === undefined) return whole;
      this.notes.push(`\${${name}} (VS Code) is ${folder}`);
      return folder;
    });
  }
}
