/**
 * Server entries as other MCP clients write them (Claude Desktop and Code, Cursor, VS Code,
 * gemini-cli), mapped onto patchbay's own field names, which stay canonical: `type` is
 * `transport_type`, `httpUrl` (gemini-cli) and `serverUrl` are `url`, `enabled` is the
 * opposite of `disabled`. A form that would mean something else in patchbay is a problem
 * with its remedy, never a guess (gemini-cli's `timeout` counts milliseconds).
 *
 * The guide to these forms is docs/managing-servers.md.
 *
 * @module
 */

import type { FieldPath, ProblemList } from "./problem_list.ts";
import type { TransportType } from "./types.ts";

/** What other clients' `type` values are in patchbay's `transport_type`. */
export const TYPE_TO_TRANSPORT: Readonly<Record<string, TransportType>> = {
  stdio: "stdio",
  http: "streamable_http",
  "streamable-http": "streamable_http",
  streamable_http: "streamable_http",
  streamableHttp: "streamable_http",
  sse: "sse",
};

/** The fields of other clients, each with the canonical field it stands for. */
export const DIALECT_FIELDS: Readonly<Record<string, string>> = {
  type: "transport_type",
  httpUrl: "url",
  serverUrl: "url",
  enabled: "disabled",
};

/** An entry in canonical names, and which written field each canonical one came from. */
export interface CanonicalEntry {
  raw: Record<string, unknown>;
  /** Canonical field to the field the file has (`url` to `httpUrl`), where they differ. */
  written: Record<string, string>;
}

/**
 * `raw` (an entry whose fields have the right types) with other clients' fields renamed to
 * patchbay's; `undefined` when they contradict each other or patchbay's own (reported).
 */
export function canonicalEntry(
  problems: ProblemList,
  raw: Record<string, unknown>,
  path: FieldPath,
): CanonicalEntry | undefined {
  const out: Record<string, unknown> = { ...raw };
  const written: Record<string, string> = {};
  const before = problems.problems.length;
  const at = (field: string) => [...path, field];
  const keyAt = (field: string) => problems.keyPos(at(field));

  if (typeof raw.type === "string") {
    const transport = TYPE_TO_TRANSPORT[raw.type];
    if (raw.transport_type !== undefined && raw.transport_type !== transport) {
      problems.add(
        at("type"),
        `"type": "${raw.type}" and "transport_type": "${raw.transport_type}" disagree`,
        "keep transport_type (patchbay's name) and remove type",
        keyAt("type"),
      );
    }
    delete out.type;
    out.transport_type = raw.transport_type ?? transport;
    if (raw.transport_type === undefined) written.transport_type = "type";
  }

  const addresses = ["url", "httpUrl", "serverUrl"].filter((field) => raw[field] !== undefined);
  if (addresses.length > 1) {
    problems.add(
      at(addresses[1]),
      `the entry gives its address twice: ${addresses.join(" and ")}`,
      "keep url (patchbay's name) and remove the other",
      keyAt(addresses[1]),
    );
  } else if (addresses[0] === "httpUrl" || addresses[0] === "serverUrl") {
    const field = addresses[0];
    out.url = raw[field];
    delete out[field];
    written.url = field;
  }
  if (raw.httpUrl !== undefined) {
    // gemini-cli's httpUrl is a streamable HTTP address, whatever else the entry says.
    if (out.transport_type !== undefined && out.transport_type !== "streamable_http") {
      problems.add(
        at(written.transport_type ?? "transport_type"),
        `httpUrl is a streamable HTTP address, but the entry says ${out.transport_type}`,
        'write "url" for that transport, or remove the transport',
      );
    }
    out.transport_type ??= "streamable_http";
    written.transport_type ??= "httpUrl";
    if (raw.timeout !== undefined) {
      const ms = raw.timeout as number;
      problems.add(
        at("timeout"),
        `"timeout": ${ms} beside httpUrl is gemini-cli's, in milliseconds; patchbay's ` +
          "timeout is in seconds",
        `write "url" instead of "httpUrl" and "timeout": ${ms / 1000} (seconds), or run ` +
          "`patchbay mcp import gemini`, which converts both",
        keyAt("timeout"),
      );
    }
  }

  if (typeof raw.enabled === "boolean") {
    if (typeof raw.disabled === "boolean" && raw.disabled === raw.enabled) {
      problems.add(
        at("enabled"),
        `"enabled": ${raw.enabled} and "disabled": ${raw.disabled} contradict each other`,
        'keep "disabled" (patchbay\'s name) and remove "enabled"',
        keyAt("enabled"),
      );
    }
    delete out.enabled;
    out.disabled = raw.disabled ?? !raw.enabled;
    if (raw.disabled === undefined) written.disabled = "enabled";
  }
  return problems.problems.length > before ? undefined : { raw: out, written };
}

/** `path` of a canonical field, as the file writes it. */
export function writtenPath(path: FieldPath, written: Record<string, string>): FieldPath {
  const [field, ...rest] = path;
  return typeof field === "string" && written[field] ? [written[field], ...rest] : path;
}
