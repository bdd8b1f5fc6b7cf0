/**
 * The `mcpServers` section: each entry's shape (zod, lib/config/schema.ts), its transport
 * (written, or inferred from command or url), the fields that transport needs and refuses
 * ({@linkcode EntryByTransportSchema}), its `auth` rules, and its values expanded.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import { AuthRulesSchema } from "./auth_rules.ts";
import { readGrantValues } from "./grant_values.ts";
import { ruleAbidingName, SERVER_NAME_RULE, serverNameProblem } from "./server_name.ts";
import { type CanonicalEntry, canonicalEntry, writtenPath } from "./dialect.ts";
import type { FieldPath, ProblemList } from "./problem_list.ts";
import {
  type AuthEntry,
  EntryByTransportSchema,
  type ServerEntry,
  ServerSchema,
} from "./schema.ts";
import type {
  HttpServerConfig,
  OAuthSettings,
  ServerConfig,
  StdioServerConfig,
  TransportType,
} from "./types.ts";
import type { ConfigValues } from "./values.ts";
import { readHelper } from "./helpers.ts";
import { hasHiddenCharacters, showControls } from "../terminal/terminal.ts";
import {
  describeType,
  PARSE_OPTIONS,
  parseSection,
  parseSoundFields,
  reportIssues,
} from "./zod_issues.ts";
import { MAX_KEY_FILE_BYTES, readBoundedTextSync } from "../files/bounded_read.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";

/** What reading the entries needs: where problems go, and how values are read. */
export interface EntryReader {
  problems: ProblemList;
  values: ConfigValues;
}

/** The fields that decide an entry's transport, in patchbay's and other clients' names. */
const TRANSPORT_FIELDS = ["transport_type", "type", "command", "url", "httpUrl", "serverUrl"];

/** Remedies for a field of the other transport, by the entry's transport. */
const MISPLACED_REMEDY: Readonly<Record<TransportType, string>> = {
  stdio: "remove it, or set transport_type to streamable_http or sse for a server at a URL",
  streamable_http:
    "remove it, or set transport_type to stdio for a server started as a local process",
  sse: "remove it, or set transport_type to stdio for a server started as a local process",
};

/** The servers of `value` (the `mcpServers` section), in file order. */
export function readServers(reader: EntryReader, value: unknown): ServerConfig[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    reader.problems.add(
      ["mcpServers"],
      `expected an object mapping server names to entries, got ${describeType(value)}`,
      'write "mcpServers": {} for no servers',
    );
    return [];
  }
  const servers: ServerConfig[] = [];
  for (const [name, raw] of Object.entries(value)) {
    const path = ["mcpServers", name];
    // The rule `mcp add` and `mcp import` apply: a file written by hand or by another
    // program is held to it too.
    const nameProblem = name.trim() === ""
      ? "a server name cannot be empty"
      : serverNameProblem(name);
    if (nameProblem !== undefined) {
      const suggestion = ruleAbidingName(name);
      reader.problems.add(
        path,
        nameProblem,
        suggestion ? `rename it "${suggestion}"` : `use ${SERVER_NAME_RULE}`,
        reader.problems.keyPos(path),
      );
      continue;
    }
    // The fields zod refused are reported and left out; the rest is read on, so an entry
    // shows every problem at once (a pasted one: an unknown field, another client's form
    // and a rule of its transport in the same pass).
    const shaped = parseSoundFields(reader.problems, ServerSchema, raw, path);
    if (!shaped) continue;
    // Other clients' field names are read as patchbay's own from here on.
    const canonical = canonicalEntry(reader.problems, shaped.raw, path);
    if (!canonical) continue;
    // The transport's rules cannot be judged without the fields that decide it.
    if (TRANSPORT_FIELDS.some((field) => shaped.refused.has(field))) continue;
    const entry = ServerSchema.parse(canonical.raw, { jitless: true });
    const server = readServer(reader, name, entry, canonical, path);
    if (server) servers.push(server);
  }
  return servers;
}

function readServer(
  { problems, values }: EntryReader,
  name: string,
  entry: ServerEntry,
  { raw, written }: CanonicalEntry,
  entryPath: FieldPath,
): ServerConfig | undefined {
  // Problems point at the fields as written (`httpUrl`, not `url`).
  const path = entryPath;
  const field = (name: string): FieldPath => [...path, ...writtenPath([name], written)];
  const transport = inferTransport(problems, entry, path);
  if (!transport) return undefined;
  const common = {
    name,
    timeoutSeconds: entry.timeout,
    trusted: entry.trusted,
    sampling: entry.sampling,
    disabled: entry.disabled,
    roots: entry.roots === undefined
      ? DEFAULTS.server.roots
      : values.roots(entry.roots, [...path, "roots"]),
    transportInferred: entry.transport_type === undefined,
    // A url's transport is a choice worth saying (a command's is not: it can only be stdio).
    ...(entry.transport_type === undefined && transport !== "stdio"
      ? { transportReason: INFERRED_TRANSPORT[transport] }
      : {}),
    protocol: entry.protocol,
    tasks: entry.tasks,
    ...(entry.include_tools ? { includeTools: entry.include_tools } : {}),
    ...(entry.exclude_tools ? { excludeTools: entry.exclude_tools } : {}),
  };
  const rules = { ...raw, transport_type: transport };
  if (!transportRulesHold(problems, rules, transport, path, written)) {
    return undefined;
  }
  if (transport === "stdio") {
    // The transport's rules hold: a stdio entry has its command.
    const command = values.expand(entry.command!, [...path, "command"]);
    refuseHiddenCharacters(problems, command, field("command"));
    const stdio: StdioServerConfig = {
      ...common,
      transport,
      command,
      args: (entry.args ?? []).map((arg, i) => values.expand(arg, [...path, "args", i])),
      env: Object.fromEntries(
        Object.entries(entry.env ?? {}).map((
          [k, v],
        ) => [k, values.expand(v, [...path, "env", k])]),
      ),
      cwd: entry.cwd === undefined ? undefined : values.path(entry.cwd, [...path, "cwd"]),
    };
    return stdio;
  }
  const url = values.url(entry.url, field("url"));
  const headers = Object.fromEntries(
    Object.entries(entry.headers ?? {}).map((
      [k, v],
    ) => [k, values.header(k, v, [...path, "headers", k])]),
  );
  const headersHelper = entry.headers_helper === undefined
    ? undefined
    : readHelper(problems, values, entry.headers_helper, [...path, "headers_helper"]);
  if (entry.auth && headersHelper) {
    problems.add(
      [...path, "headers_helper"],
      "auth (OAuth) and headers_helper are mutually exclusive: OAuth sets the credential",
      "keep auth for OAuth, or remove auth and let the helper print the headers",
      problems.keyPos([...path, "headers_helper"]),
    );
  }
  const hasAuthorization = Object.keys(headers).some((h) => h.toLowerCase() === "authorization");
  if (entry.auth && hasAuthorization) {
    problems.add(
      [...path, "auth"],
      "auth (OAuth) and an Authorization header are mutually exclusive",
      "keep auth for OAuth, or remove auth and keep the bearer header",
      problems.keyPos([...path, "auth"]),
    );
  }
  if (url === undefined) return undefined;
  if (entry.sse_read_timeout < common.timeoutSeconds) {
    problems.warn(
      [...path, "sse_read_timeout"],
      `sse_read_timeout (${entry.sse_read_timeout} s) is shorter than timeout (${common.timeoutSeconds} s)`,
      CONFIG_STEPS.sseShorter,
    );
  }
  const http: HttpServerConfig = {
    ...common,
    transport,
    url,
    headers,
    sseReadTimeoutSeconds: entry.sse_read_timeout,
    pingIntervalSeconds: entry.ping_interval,
    auth: entry.auth && readAuth({ problems, values }, entry.auth, [...path, "auth"]),
    ...(headersHelper ? { headersHelper, headersHelperTtlSeconds: entry.headers_helper_ttl } : {}),
  };
  return http;
}

/** Characters of a refused command shown around its first hidden one. */
const COMMAND_SHOWN_CHARS = 60;

/**
 * Refuses a command holding a control character (C0, DEL, C1) or an invisible format
 * character (bidi controls, zero-width spaces, tags): no program is named so, and the
 * command is shown on terminals (by the diagnosis, and by Deno were it granted), where
 * such a character could act (an OSC 52 writing the clipboard) or disguise the text. The
 * problem shows the command escaped.
 */
function refuseHiddenCharacters(problems: ProblemList, command: string, path: FieldPath): void {
  if (!hasHiddenCharacters(command)) return;
  const shown = showControls(command);
  const first = [...command].findIndex((char) => hasHiddenCharacters(char));
  const start = Math.max(0, showControls([...command].slice(0, first).join("")).length - 10);
  const excerpt = (start > 0 ? "…" : "") + shown.slice(start, start + COMMAND_SHOWN_CHARS) +
    (start + COMMAND_SHOWN_CHARS < shown.length ? "…" : "");
  problems.add(
    path,
    `the command holds a control or invisible character, shown escaped: "${excerpt}"`,
    "write the program's name or path without it (an entry copied from elsewhere may hide " +
      "terminal escapes)",
  );
}

/**
 * Checks the fields `transport` needs and refuses; false when the entry lacks what it
 * needs (a field of the other transport is reported, and the entry read on).
 */
function transportRulesHold(
  problems: ProblemList,
  entry: Record<string, unknown>,
  transport: TransportType,
  path: FieldPath,
  written: Record<string, string>,
): boolean {
  const result = EntryByTransportSchema.safeParse(entry, PARSE_OPTIONS);
  if (result.success) return true;
  let holds = true;
  for (const found of result.error.issues) {
    const issue = { ...found, path: writtenPath(found.path as FieldPath, written) };
    if (issue.code === "unrecognized_keys") {
      for (const field of issue.keys.map((key) => written[key] ?? key)) {
        problems.add(
          [...path, field],
          `"${field}" does not apply to transport_type ${transport}`,
          MISPLACED_REMEDY[transport],
          problems.keyPos([...path, field]),
        );
      }
      continue;
    }
    if (issue.code === "invalid_type") holds = false;
    reportIssues(problems, [issue], path);
  }
  return holds;
}

/** The path of a legacy SSE endpoint, as other clients' entries write it (`…/sse`). */
const SSE_PATH = /\/sse(?:[?#].*)?$/i;

/** Whether `url` ends in `/sse`: an address of the legacy SSE transport. */
export function isSseAddress(url: string): boolean {
  return SSE_PATH.test(url);
}

/** Why patchbay chose a transport for a `url` whose entry does not say, by what it chose. */
export const INFERRED_TRANSPORT = {
  sse: "a url ending in /sse is the legacy SSE transport",
  streamable_http: "a url is streamable HTTP, or SSE when the server answers the legacy way",
} as const;

/** `transport` and why it was chosen, as `config check` and `/connections` say it. */
export function transportChoice(transport: TransportType, reason: string): string {
  return `transport ${transport}, chosen as no transport_type is written: ${reason}`;
}

function inferTransport(
  problems: ProblemList,
  entry: ServerEntry,
  path: FieldPath,
): TransportType | undefined {
  if (entry.transport_type) return entry.transport_type;
  if (entry.command !== undefined && entry.url !== undefined) {
    problems.missing(
      [...path, "transport_type"],
      "the entry has both command and url; say which to use (stdio, streamable_http or sse)",
    );
    return undefined;
  }
  if (entry.command !== undefined) return "stdio";
  // `/sse` is the conventional path of the legacy transport, where entries pasted from
  // other clients (which fall back to it) point.
  if (entry.url !== undefined) return isSseAddress(entry.url) ? "sse" : "streamable_http";
  problems.missing(
    [...path, "transport_type"],
    "give transport_type with command (stdio) or url (streamable_http, sse)",
  );
  return undefined;
}

/** The entry's `auth`: its rules checked (lib/config/auth_rules.ts), its values read. */
function readAuth(
  { problems, values }: EntryReader,
  auth: AuthEntry,
  path: FieldPath,
): OAuthSettings {
  // Problems are reported; the values are still read, so theirs are reported too.
  parseSection(problems, AuthRulesSchema, auth, path);
  let privateKey: string | undefined;
  let privateKeySource: string | undefined;
  let privateKeyFile: string | undefined;
  if (auth.private_key !== undefined) {
    privateKey = values.expand(auth.private_key, [...path, "private_key"]);
    privateKeySource = "auth.private_key";
  } else if (auth.private_key_file !== undefined) {
    const file = values.path(auth.private_key_file, [...path, "private_key_file"]);
    privateKeySource = `auth.private_key_file (${file})`;
    privateKeyFile = file;
    try {
      privateKey = readBoundedTextSync(file, {
        what: "the private key file",
        maxBytes: MAX_KEY_FILE_BYTES,
      });
    } catch (error) {
      problems.add(
        [...path, "private_key_file"],
        `cannot read the private key file ${file}: ${(error as Error).message}`,
        "point private_key_file at the client's key (PEM PKCS#8 or JWK JSON), readable by you",
      );
    }
  }
  return {
    method: auth.method,
    grant: auth.grant,
    clientId: auth.client_id && values.expand(auth.client_id, [...path, "client_id"]),
    clientSecret: auth.client_secret &&
      values.expand(auth.client_secret, [...path, "client_secret"]),
    privateKey,
    privateKeySource,
    privateKeyFile,
    privateKeyAlg: auth.private_key_alg ?? DEFAULTS.oauth.privateKeyAlg,
    dpop: auth.dpop,
    scopes: auth.scopes,
    clientMetadataUrl: auth.client_metadata_url,
    allowInternalHosts: auth.allow_internal_hosts,
    ...readGrantValues(values, auth, path),
  };
}
