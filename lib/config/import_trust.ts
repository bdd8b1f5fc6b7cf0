/**
 * The settings of a server entry that widen what the server may do or be given, and what
 * `mcp import` does with them. Another client's file (a `.mcp.json` that came with a
 * cloned repository) holding patchbay's own `"trusted": true` would have the server's
 * tools run unasked from the next `run` on: such settings never arrive unseen. From a file
 * that is not patchbay's own they are left out, each said with why, unless the person
 * passes `--keep-trust`, and then each is said as kept.
 *
 * Every field of a server entry (and of its `auth`) is in exactly one of
 * {@linkcode TRUST_FIELDS} and {@linkcode NEUTRAL_FIELDS} (or {@linkcode NEUTRAL_AUTH_FIELDS}):
 * `tests/config/import_trust_test.ts` keeps it so, so a field added to the schema is
 * judged here before it can be imported.
 *
 * @module
 */

import { referencedKeychainEntries } from "./expand.ts";
import type { JsonValue } from "./json.ts";

/** One setting that widens trust: where it is in an entry, when it widens, and how. */
export interface TrustField {
  /** Its path in the entry: `trusted`, `auth.allow_internal_hosts`. */
  path: readonly string[];
  /** Whether this value widens anything (`"sampling": "deny"` narrows). */
  widens: (value: JsonValue) => boolean;
  /** What it would let the server do or be given, for the person. */
  effect: string;
}

/** The settings that widen what a server may do or be given. */
export const TRUST_FIELDS: readonly TrustField[] = [
  {
    path: ["trusted"],
    widens: (value) => value === true,
    effect: "its tools would run without asking",
  },
  {
    path: ["sampling"],
    widens: (value) => value === "allow",
    effect: "its requests to your model would be answered without asking",
  },
  {
    path: ["roots"],
    widens: () => true,
    effect: "these folders would be offered to it",
  },
  {
    path: ["auth", "allow_internal_hosts"],
    widens: () => true,
    effect: "its OAuth endpoints could reach these hosts of your private network",
  },
  {
    // A remote server's entry runs nothing here, unless it has a helper (Claude Code asks
    // for the project's trust before a project's headersHelper runs, too).
    path: ["headers_helper"],
    widens: () => true,
    effect: "this program would run on your machine at each connection to the server",
  },
  {
    path: ["auth", "private_key_file"],
    widens: () => true,
    effect: "patchbay would read this file of yours and sign for the server with the key in it",
  },
  {
    path: ["auth", "assertion_file"],
    widens: () => true,
    effect: "patchbay would read this file of yours and present the token in it to the server",
  },
  {
    path: ["auth", "assertion_command"],
    widens: () => true,
    effect: "patchbay would run this command and present what it prints to the server",
  },
  {
    path: ["auth", "idp"],
    widens: () => true,
    effect: "patchbay would read or run what it names and send your ID token to that identity " +
      "provider",
  },
];

/**
 * The fields of an entry that widen nothing: how to start or reach the server (any
 * client's file has them; what runs is shown, and an approval covers it), limits, and
 * settings that narrow (`include_tools`, `disabled`).
 */
export const NEUTRAL_FIELDS: readonly string[] = [
  "transport_type",
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "auth",
  "timeout",
  "sse_read_timeout",
  "ping_interval",
  "disabled",
  "protocol",
  "type",
  "httpUrl",
  "serverUrl",
  "enabled",
  "include_tools",
  "exclude_tools",
  "headers_helper_ttl",
  // When calls run as tasks: how the server is spoken to, no more.
  "tasks",
];

/** The fields of `auth` that widen nothing: how the server's own OAuth is spoken. */
export const NEUTRAL_AUTH_FIELDS: readonly string[] = [
  "method",
  "client_id",
  "grant",
  "client_secret",
  "private_key",
  "private_key_alg",
  "dpop",
  "scopes",
  "client_metadata_url",
];

/** One trust-widening setting found in an entry. */
export interface FoundTrust {
  /** `trusted: true`, `roots: ["/"]`: the setting as written, for the person. */
  shown: string;
  /** Why it matters ({@linkcode TrustField.effect}). */
  effect: string;
}

/**
 * What a `${keychain:NAME}` in an imported entry would do: the keychain's entry is read and
 * sent to the server (another client's file has no such reference of its own; a cloned
 * project's `.mcp.json` naming `${keychain:github-token}` under a server of its choosing
 * would collect the token kept there for another).
 */
export function keychainEffect(entries: readonly string[]): string {
  return `your keychain's ${entries.length === 1 ? "entry" : "entries"} ${
    entries.join(", ")
  } would be read and given to this server`;
}

/** One `${keychain:NAME}` reference of an entry: where, and which entries. */
export interface KeychainUse {
  /** Its path in the entry: `headers.Authorization`, `args.2`, `url`. */
  path: string[];
  /** The string that names them, as written. */
  value: string;
  /** The keychain entries it names. */
  entries: string[];
  /** Whether the value can be left out alone (a header, a variable, an auth field). */
  removable: boolean;
}

/** Every string of `entry` that names a keychain entry, in the order of the entry. */
export function keychainUses(entry: Record<string, JsonValue>): KeychainUse[] {
  const uses: KeychainUse[] = [];
  /** `objectsOnly`: no list on the way from the entry to `value`. */
  const visit = (value: JsonValue, path: string[], objectsOnly: boolean) => {
    if (typeof value === "string") {
      const entries = referencedKeychainEntries(value);
      // A value of an object below the entry (headers, env, auth) is one setting; a list's
      // item or the entry's own url, command or cwd is part of how the server is reached.
      const removable = objectsOnly && path.length > 1;
      if (entries.length > 0) uses.push({ path, value, entries, removable });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, [...path, String(i)], false));
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, [...path, key], objectsOnly);
    }
  };
  visit(entry, [], true);
  return uses;
}

/** Longest value shown of a setting (a list of roots is shown whole up to it). */
const MAX_SHOWN_CHARS = 120;

/**
 * The trust-widening settings of `entry`; with `keep` false they are taken out of it (a
 * parent object left empty is taken out too).
 */
export function sortTrust(entry: Record<string, JsonValue>, keep: boolean): FoundTrust[] {
  const found: FoundTrust[] = [];
  for (const field of TRUST_FIELDS) {
    const parent = parentOf(entry, field.path);
    const key = field.path[field.path.length - 1];
    if (!parent || !Object.hasOwn(parent, key)) continue;
    const value = parent[key];
    if (!field.widens(value)) continue;
    const written = JSON.stringify(value);
    found.push({
      shown: `${field.path.join(".")}: ${
        written.length > MAX_SHOWN_CHARS ? `${written.slice(0, MAX_SHOWN_CHARS)}…` : written
      }`,
      effect: field.effect,
    });
    if (keep) continue;
    delete parent[key];
    if (field.path.length > 1 && Object.keys(parent).length === 0) {
      delete parentOf(entry, field.path.slice(0, -1))![field.path[field.path.length - 2]];
    }
  }
  for (const use of keychainUses(entry)) {
    const value = JSON.stringify(use.value);
    found.push({
      shown: `${use.path.join(".")}: ${
        value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value
      }`,
      effect: keychainEffect(use.entries),
    });
    // Not removable ones leave the entry unimportable; convertEntry skips it before this.
    if (!keep && use.removable) delete parentOf(entry, use.path)![use.path[use.path.length - 1]];
  }
  return found;
}

function parentOf(
  entry: Record<string, JsonValue>,
  path: readonly string[],
): Record<string, JsonValue> | undefined {
  let at: JsonValue = entry;
  for (const key of path.slice(0, -1)) {
    if (at === null || typeof at !== "object" || Array.isArray(at)) return undefined;
    at = (at as Record<string, JsonValue>)[key];
  }
  return at !== null && typeof at === "object" && !Array.isArray(at)
    ? at as Record<string, JsonValue>
    : undefined;
}
