/**
 * The configuration's rules: zod checks each section's shape (lib/config/schema.ts), and
 * the validator walks the parsed file, turning every issue into a problem with its field
 * path and position, checking the rules per transport, expanding `${VAR}`s and applying
 * the defaults. It collects every problem rather than stopping at the first.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import type { z } from "zod";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";
import type { ConfigProblem, SourcePosition } from "../errors.ts";
import { PROVIDER_ALIASES, PROVIDER_NAMES, type ProviderName, PROVIDERS } from "../providers.ts";
import { isModernRevision } from "../revisions.ts";
import { didYouMean } from "../text.ts";
import { expandVariables } from "./expand.ts";
import { type JsonParseResult, type JsonValue, pathKey } from "./json.ts";
import { formatPath } from "./problems.ts";
import { startedByLauncher } from "../permissions/remedy.ts";
import {
  AgentSchema,
  ConfigFileSchema,
  DURATION_FIELDS,
  FIELD_ALIASES,
  LlmSchema,
  MemorySchema,
  type ServerEntry,
  ServerSchema,
  TRANSPORT_ALIASES,
} from "./schema.ts";
import type {
  Config,
  HttpServerConfig,
  LlmConfig,
  OAuthSettings,
  ServerConfig,
  StdioServerConfig,
} from "./types.ts";

type Path = (string | number)[];

/** Walks the parsed file, collecting problems and building the normalized configuration. */
export class Validator {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];
  readonly #dir: string;

  constructor(
    private readonly parsed: JsonParseResult,
    private readonly file: string,
    private readonly env: Environment,
  ) {
    this.#dir = dirname(resolve(file));
  }

  run(raw: JsonValue): Config | undefined {
    for (const duplicate of this.parsed.duplicates) {
      this.#add(
        [...duplicate.path, duplicate.key],
        `duplicate key "${duplicate.key}" (first at line ${duplicate.first.line})`,
        "a JSON reader silently keeps only the last one; remove or rename one of them",
        duplicate.second,
      );
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      this.#add([], `the file must hold a JSON object, not ${describeType(raw)}`);
      return undefined;
    }
    // Sections are validated one by one (servers entry by entry), so one broken part
    // never hides the problems of another.
    for (const key of Object.keys(raw)) {
      if (KNOWN_KEYS.top.includes(key)) continue;
      const suggestion = didYouMean(key, KNOWN_KEYS.top, FIELD_ALIASES);
      this.#add(
        [key],
        `unknown field "${key}"`,
        suggestion ? `did you mean "${suggestion}"?` : `known fields: ${KNOWN_KEYS.top.join(", ")}`,
        this.#keyPos([key]),
      );
    }
    if (raw.$schema !== undefined && typeof raw.$schema !== "string") {
      this.#add(["$schema"], `expected a string, got ${describeValue(raw.$schema)}`);
    }
    if (!("LLM" in raw)) this.#missing(["LLM"], "it names the provider and model");
    if (!("mcpServers" in raw)) this.#missing(["mcpServers"]);

    const llm = "LLM" in raw ? this.#llm(raw.LLM) : undefined;
    const servers = "mcpServers" in raw ? this.#servers(raw.mcpServers) : [];
    const agent = this.#section(AgentSchema, raw.AgentConfig, ["AgentConfig"]);
    const memory = this.#section(MemorySchema, raw.Memory, ["Memory"]);
    if (this.problems.length > 0 || !llm) return undefined;
    return {
      file: this.file,
      llm,
      servers,
      agent: {
        toolCallTimeoutSeconds: agent?.tool_call_timeout ?? DEFAULTS.agent.toolCallTimeoutSeconds,
        connectWaitSeconds: agent?.connect_wait ?? DEFAULTS.agent.connectWaitSeconds,
        maxSteps: agent?.max_steps ?? DEFAULTS.agent.maxSteps,
        requestLimit: agent?.request_limit ?? DEFAULTS.agent.requestLimit,
        totalTokensLimit: agent?.total_tokens_limit ?? DEFAULTS.agent.totalTokensLimit,
      },
      memory: {
        backend: memory?.backend ?? DEFAULTS.memory.backend,
        ttlSeconds: memory?.ttl_seconds ?? DEFAULTS.memory.ttlSeconds,
        keyPrefix: memory?.key_prefix ?? DEFAULTS.memory.keyPrefix,
        sentinels: memory?.sentinels,
        sentinelName: memory?.sentinel_name,
        clusterNodes: memory?.cluster_nodes,
      },
      warnings: this.warnings,
    };
  }

  #section<S extends z.ZodType>(
    schema: S,
    value: JsonValue | undefined,
    path: Path,
  ): z.infer<S> | undefined {
    if (value === undefined) return undefined;
    const result = schema.safeParse(value, { reportInput: true });
    if (!result.success) {
      this.#zodIssues(result.error.issues, path, value);
      return undefined;
    }
    return result.data;
  }

  #llm(value: JsonValue): LlmConfig | undefined {
    // The provider is checked even when other LLM fields are wrong, so a typo in it is
    // reported in the same run.
    const rawProvider = isObject(value) ? value.provider : undefined;
    const provider = typeof rawProvider === "string" && rawProvider !== ""
      ? this.#provider(rawProvider)
      : undefined;
    const llm = this.#section(LlmSchema, value, ["LLM"]);
    if (!llm) return undefined;
    const baseUrl = this.#expandUrl(llm.base_url, ["LLM", "base_url"]);
    const endpoint = this.#expandUrl(llm.endpoint, ["LLM", "endpoint"]);
    if (provider === "azure" && !endpoint && !baseUrl) {
      this.#missing(
        ["LLM", "endpoint"],
        "Azure OpenAI needs its resource endpoint, https://<resource>.openai.azure.com",
      );
    }
    if (provider === "azure" && !llm.api_version) {
      this.#missing(["LLM", "api_version"], "Azure OpenAI needs an API version, e.g. 2024-10-21");
    }
    if (provider === "openai-compatible" && !baseUrl) {
      this.#missing(
        ["LLM", "base_url"],
        "provider openai-compatible needs the server's base_url, e.g. http://localhost:8000/v1",
      );
    }
    for (const field of ["endpoint", "deployment", "api_version"] as const) {
      if (llm[field] !== undefined && provider !== undefined && provider !== "azure") {
        this.#add(
          ["LLM", field],
          `"${field}" applies only to provider azure`,
          `remove it, or set provider to azure`,
          this.#keyPos(["LLM", field]),
        );
      }
    }
    if (!provider) return undefined;
    return {
      provider,
      model: llm.model,
      maxTokens: llm.max_tokens ?? DEFAULTS.llm.maxTokens,
      temperature: llm.temperature ?? DEFAULTS.llm.temperature,
      maxContextLength: llm.max_context_length ?? DEFAULTS.llm.maxContextLength,
      baseUrl,
      endpoint,
      deployment: llm.deployment,
      apiVersion: llm.api_version,
      systemPrompt: llm.system_prompt,
      timeoutSeconds: llm.timeout ?? DEFAULTS.llm.timeoutSeconds,
      maxRetries: llm.max_retries ?? DEFAULTS.llm.maxRetries,
    };
  }

  #provider(name: string): ProviderName | undefined {
    if (name in PROVIDERS) return name as ProviderName;
    const suggestion = PROVIDER_ALIASES[name.toLowerCase()] ?? didYouMean(name, PROVIDER_NAMES);
    this.#add(
      ["LLM", "provider"],
      `unknown provider "${name}"`,
      (suggestion ? `did you mean "${suggestion}"? ` : "") +
        `known providers: ${PROVIDER_NAMES.join(", ")}`,
    );
    return undefined;
  }

  #servers(value: JsonValue): ServerConfig[] {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.#add(
        ["mcpServers"],
        `expected an object mapping server names to entries, got ${describeType(value)}`,
        'write "mcpServers": {} for no servers',
      );
      return [];
    }
    const servers: ServerConfig[] = [];
    for (const [name, entry] of Object.entries(value)) {
      const path = ["mcpServers", name];
      if (name.trim() === "") {
        this.#add(path, "a server name cannot be empty", undefined, this.#keyPos(path));
        continue;
      }
      const parsed = this.#section(ServerSchema, entry, path);
      if (!parsed) continue;
      const server = this.#server(name, parsed, path);
      if (server) servers.push(server);
    }
    return servers;
  }

  #server(name: string, entry: ServerEntry, path: Path): ServerConfig | undefined {
    const transport = this.#transport(entry, path);
    if (!transport) return undefined;
    const common = {
      name,
      timeoutSeconds: entry.timeout ?? DEFAULTS.server.timeoutSeconds,
      trusted: entry.trusted ?? DEFAULTS.server.trusted,
      sampling: entry.sampling ?? DEFAULTS.server.sampling,
      disabled: entry.disabled ?? false,
      roots: entry.roots === undefined
        ? DEFAULTS.server.roots
        : this.#roots(entry.roots, [...path, "roots"]),
      transportInferred: entry.transport_type === undefined,
      protocol: entry.protocol ?? DEFAULTS.server.protocol,
    };
    if (transport === "sse" && entry.protocol && isModernRevision(entry.protocol)) {
      this.#add(
        [...path, "protocol"],
        `protocol revision ${entry.protocol} has no legacy SSE transport`,
        'use "transport_type": "streamable_http" with the server\'s MCP endpoint, or ' +
          '"protocol": "legacy" for an SSE server',
        this.#keyPos([...path, "protocol"]),
      );
    }
    const stdioOnly = ["command", "args", "env", "cwd"] as const;
    const httpOnly = ["url", "headers", "auth", "sse_read_timeout", "ping_interval"] as const;
    const misplaced = transport === "stdio" ? httpOnly : stdioOnly;
    for (const field of misplaced) {
      if (entry[field] !== undefined) {
        this.#add(
          [...path, field],
          `"${field}" does not apply to transport_type ${transport}`,
          transport === "stdio"
            ? `remove it, or set transport_type to streamable_http or sse for a server at a URL`
            : `remove it, or set transport_type to stdio for a server started as a local process`,
          this.#keyPos([...path, field]),
        );
      }
    }
    if (transport === "stdio") {
      if (entry.command === undefined) {
        this.#missing([...path, "command"], "a stdio server needs the command that starts it");
        return undefined;
      }
      const stdio: StdioServerConfig = {
        ...common,
        transport,
        command: this.#expand(entry.command, [...path, "command"]),
        args: (entry.args ?? []).map((arg, i) => this.#expand(arg, [...path, "args", i])),
        env: Object.fromEntries(
          Object.entries(entry.env ?? {}).map((
            [k, v],
          ) => [k, this.#expand(v, [...path, "env", k])]),
        ),
        cwd: entry.cwd === undefined ? undefined : this.#cwd(entry.cwd, [...path, "cwd"]),
      };
      return stdio;
    }
    if (entry.url === undefined) {
      this.#missing(
        [...path, "url"],
        `a ${transport} server needs its url, http://<host>:<port>/<path>`,
      );
      return undefined;
    }
    const url = this.#expandUrl(entry.url, [...path, "url"]);
    const headers = Object.fromEntries(
      Object.entries(entry.headers ?? {}).map((
        [k, v],
      ) => [k, this.#header(k, v, [...path, "headers", k])]),
    );
    const hasAuthorization = Object.keys(headers).some((h) => h.toLowerCase() === "authorization");
    if (entry.auth && hasAuthorization) {
      this.#add(
        [...path, "auth"],
        "auth (OAuth) and an Authorization header are mutually exclusive",
        "keep auth for OAuth, or remove auth and keep the bearer header",
        this.#keyPos([...path, "auth"]),
      );
    }
    if (url === undefined) return undefined;
    const sseReadTimeoutSeconds = entry.sse_read_timeout ?? DEFAULTS.server.sseReadTimeoutSeconds;
    if (sseReadTimeoutSeconds < common.timeoutSeconds) {
      this.warnings.push({
        path: formatPath([...path, "sse_read_timeout"]),
        message:
          `sse_read_timeout (${sseReadTimeoutSeconds} s) is shorter than timeout (${common.timeoutSeconds} s)`,
        hint: "event streams may then be reopened before a slow answer arrives",
      });
    }
    const http: HttpServerConfig = {
      ...common,
      transport,
      url,
      headers,
      sseReadTimeoutSeconds,
      pingIntervalSeconds: entry.ping_interval ?? DEFAULTS.server.pingIntervalSeconds,
      auth: entry.auth && this.#auth(entry.auth, [...path, "auth"]),
    };
    return http;
  }

  /**
   * The entry's `auth`, its fields checked together: a grant needs its credentials, and
   * one way to authenticate the client is given, not two.
   */
  #auth(auth: NonNullable<ServerEntry["auth"]>, path: Path): OAuthSettings {
    const grant = auth.grant ?? DEFAULTS.oauth.grant;
    const keyFields = (["private_key", "private_key_file"] as const).filter((f) =>
      auth[f] !== undefined
    );
    if (keyFields.length === 2) {
      this.#add(
        [...path, "private_key_file"],
        "auth.private_key and auth.private_key_file are mutually exclusive",
        "keep one: the key itself (e.g. ${CLIENT_KEY}) or the file that holds it",
      );
    }
    if (keyFields.length > 0 && auth.client_secret !== undefined) {
      this.#add(
        [...path, keyFields[0]],
        `auth.client_secret and auth.${keyFields[0]} are two ways to authenticate the client`,
        "keep client_secret for client_secret_basic, or the private key for private_key_jwt",
      );
    }
    if (keyFields.length > 0 && auth.client_id === undefined) {
      this.#add(
        [...path, keyFields[0]],
        `auth.${keyFields[0]} needs auth.client_id: the key signs assertions for a ` +
          "pre-registered client",
        'set "client_id" to the id the authorization server registered the key under',
      );
    }
    if (auth.private_key_alg !== undefined && keyFields.length === 0) {
      this.warnings.push({
        path: formatPath([...path, "private_key_alg"]),
        message: "auth.private_key_alg is set but no private key is: it is not used",
        hint: "add private_key or private_key_file, or remove private_key_alg",
      });
    }
    if (grant === "client_credentials") {
      if (auth.client_id === undefined) {
        this.#missing(
          [...path, "client_id"],
          'grant "client_credentials" authenticates as a pre-registered client: set ' +
            "client_id, and client_secret or private_key_file",
        );
      } else if (auth.client_secret === undefined && keyFields.length === 0) {
        this.#add(
          [...path, "grant"],
          'grant "client_credentials" needs the client\'s credentials: auth.client_secret ' +
            "(client_secret_basic) or auth.private_key / auth.private_key_file (private_key_jwt)",
          'add "client_secret": "${CLIENT_SECRET}" (from .env), or "private_key_file"',
        );
      }
      if (auth.client_metadata_url !== undefined) {
        this.#add(
          [...path, "client_metadata_url"],
          'auth.client_metadata_url is for browser logins; grant "client_credentials" uses ' +
            "client_id",
          "remove client_metadata_url",
        );
      }
    }
    let privateKey: string | undefined;
    let privateKeySource: string | undefined;
    let privateKeyFile: string | undefined;
    if (auth.private_key !== undefined) {
      privateKey = this.#expand(auth.private_key, [...path, "private_key"]);
      privateKeySource = "auth.private_key";
    } else if (auth.private_key_file !== undefined) {
      const file = this.#cwd(auth.private_key_file, [...path, "private_key_file"]);
      privateKeySource = `auth.private_key_file (${file})`;
      privateKeyFile = file;
      try {
        privateKey = Deno.readTextFileSync(file);
      } catch (error) {
        this.#add(
          [...path, "private_key_file"],
          `cannot read the private key file ${file}: ${(error as Error).message}`,
          "point private_key_file at the client's key (PEM PKCS#8 or JWK JSON), readable by you",
        );
      }
    }
    return {
      method: auth.method,
      grant,
      clientId: auth.client_id && this.#expand(auth.client_id, [...path, "client_id"]),
      clientSecret: auth.client_secret &&
        this.#expand(auth.client_secret, [...path, "client_secret"]),
      privateKey,
      privateKeySource,
      privateKeyFile,
      privateKeyAlg: auth.private_key_alg ?? DEFAULTS.oauth.privateKeyAlg,
      dpop: auth.dpop ?? DEFAULTS.oauth.dpop,
      scopes: auth.scopes,
      clientMetadataUrl: auth.client_metadata_url,
      allowInternalHosts: auth.allow_internal_hosts,
    };
  }

  #transport(entry: ServerEntry, path: Path): ServerConfig["transport"] | undefined {
    if (entry.transport_type) return entry.transport_type;
    if (entry.command !== undefined && entry.url !== undefined) {
      this.#missing(
        [...path, "transport_type"],
        "the entry has both command and url; say which to use (stdio, streamable_http or sse)",
      );
      return undefined;
    }
    if (entry.command !== undefined) return "stdio";
    if (entry.url !== undefined) return "streamable_http";
    this.#missing(
      [...path, "transport_type"],
      "give transport_type with command (stdio) or url (streamable_http, sse)",
    );
    return undefined;
  }

  #cwd(value: string, path: Path): string {
    const expanded = this.#expand(value, path);
    return isAbsolute(expanded) ? expanded : resolve(this.#dir, expanded);
  }

  /**
   * Root folders: expanded, made absolute against the file's folder, and checked, since a
   * server silently skips a root it cannot use and then keeps folders the person meant to
   * replace. A folder that does not exist (yet) is only a warning: the file may be shared.
   */
  #roots(values: readonly string[], path: Path): string[] {
    const folders: string[] = [];
    values.forEach((value, i) => {
      const at = [...path, i];
      const known = this.problems.length;
      const expanded = this.#expand(value, at);
      // An unset variable is already reported; its empty value is no second problem.
      if (this.problems.length > known) return;
      if (expanded === "") {
        this.#add(at, `root ${JSON.stringify(value)} expands to an empty path`);
        return;
      }
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(expanded)) {
        this.#add(
          at,
          `"${expanded}" is a URL; roots are local folder paths`,
          expanded.startsWith("file://")
            ? `write the path itself, e.g. ${new URL(expanded).pathname}`
            : "give the folder on this machine the server may work in",
        );
        return;
      }
      if (expanded === "~" || expanded.startsWith("~/")) {
        this.#add(
          at,
          `"${expanded}": ~ is not expanded in the configuration`,
          `write \${HOME}${expanded.slice(1)}`,
        );
        return;
      }
      const folder = isAbsolute(expanded) ? resolve(expanded) : resolve(this.#dir, expanded);
      if (folders.includes(folder)) {
        this.warnings.push({
          path: formatPath(at),
          message: `the root ${folder} is listed twice`,
          hint: "remove the repetition",
        });
        return;
      }
      const kind = fileKind(folder);
      if (kind === "file") {
        this.#add(at, `the root ${folder} is a file, not a folder`, "name the folder around it");
        return;
      }
      if (kind === "missing") {
        this.warnings.push({
          path: formatPath(at),
          message: `the root folder ${folder} does not exist`,
          hint: "servers skip roots they cannot find; create it or fix the path",
        });
      }
      folders.push(folder);
    });
    return folders;
  }

  #header(name: string, value: string, path: Path): string {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      this.#add(
        path,
        `"${name}" is not a valid HTTP header name`,
        "header names are letters, digits and - (e.g. Authorization, X-Api-Key)",
        this.#keyPos(path),
      );
    }
    const expanded = this.#expand(value, path);
    if (/[\r\n]/.test(expanded)) {
      this.#add(path, "a header value cannot contain a line break");
    }
    return expanded;
  }

  #expandUrl(value: string | undefined, path: Path): string | undefined {
    if (value === undefined) return undefined;
    const expanded = this.#expand(value, path);
    if (expanded === "") return undefined;
    let url: URL;
    try {
      url = new URL(expanded);
    } catch {
      this.#add(
        path,
        `"${expanded}" is not a URL`,
        `write it in full, e.g. http://${expanded.replace(/^\/+/, "")}`,
      );
      return undefined;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      const hint = /^localhost:|^\d+\.\d+\.\d+\.\d+:|^[\w.-]+:\d+/.test(expanded)
        ? `add the scheme: http://${expanded}`
        : "only http:// and https:// addresses are supported";
      this.#add(path, `"${expanded}" is not an http(s) URL`, hint);
      return undefined;
    }
    return expanded;
  }

  #expand(value: string, path: Path): string {
    const result = expandVariables(value, (name) => this.env.get(name));
    for (const { name } of result.missing) {
      if (this.env.denied(name)) {
        this.#add(
          path,
          `environment variable ${name} cannot be read: Deno did not grant --allow-env=${name}`,
          startedByLauncher()
            ? `restart patchbay (at each start it grants the variables the configuration ` +
              `names), or set ${name} in .env`
            : `add --allow-env=${name} to the deno run / deno install command, or set ${name} ` +
              "in .env",
        );
        continue;
      }
      this.#add(
        path,
        `environment variable ${name} is not set`,
        `set ${name} in .env or the environment, or give a default: \${${name}:-value}`,
      );
    }
    if (result.malformed) {
      this.#add(
        path,
        `malformed variable reference in "${value}": ${result.detail}`,
        "write ${NAME}, ${NAME:-default} or ${NAME:-${OTHER:-default}}; $${ writes a literal ${",
      );
    }
    return result.value;
  }

  #missing(path: Path, hint?: string): void {
    const parent = path.slice(0, -1);
    this.#add(
      path,
      `Missing required field: ${formatPath(path)}`,
      hint,
      this.#valuePos(parent) ?? { line: 1, column: 1 },
    );
  }

  #add(path: Path, message: string, hint?: string, position?: SourcePosition): void {
    this.problems.push({
      path: formatPath(path),
      message,
      hint,
      position: position ?? this.#valuePos(path) ?? this.#nearestPos(path),
    });
  }

  #valuePos(path: Path): SourcePosition | undefined {
    return this.parsed.valuePositions.get(pathKey(path));
  }

  #keyPos(path: Path): SourcePosition | undefined {
    return this.parsed.keyPositions.get(pathKey(path)) ?? this.#valuePos(path);
  }

  #nearestPos(path: Path): SourcePosition | undefined {
    for (let i = path.length - 1; i >= 0; i--) {
      const found = this.#valuePos(path.slice(0, i));
      if (found) return found;
    }
    return undefined;
  }

  /** Turns zod's issues into problems worded for a person editing the file. */
  #zodIssues(issues: readonly z.core.$ZodIssue[], base: Path, root: unknown): void {
    for (const issue of issues) {
      const path = [...base, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
      const value = valueAt(root, issue.path);
      switch (issue.code) {
        case "invalid_type":
          if (value === undefined) this.#missing(path);
          else {
            this.#add(path, `expected ${typeName(issue.expected)}, got ${describeValue(value)}`);
          }
          break;
        case "unrecognized_keys":
          for (const key of issue.keys) {
            const known = knownKeys(base, issue.path);
            const suggestion = didYouMean(key, known, FIELD_ALIASES);
            this.#add(
              [...path, key],
              `unknown field "${key}"`,
              suggestion
                ? `did you mean "${suggestion}"?`
                : `known fields here: ${known.join(", ")}`,
              this.#keyPos([...path, key]),
            );
          }
          break;
        case "invalid_value": {
          const allowed = issue.values.map(String);
          const isTransport = path.at(-1) === "transport_type";
          const suggestion = typeof value === "string"
            ? (isTransport ? TRANSPORT_ALIASES[value.toLowerCase()] : undefined) ??
              didYouMean(value, allowed)
            : undefined;
          this.#add(
            path,
            `expected one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}, got ${
              describeValue(value)
            }`,
            suggestion ? `did you mean "${suggestion}"?` : undefined,
          );
          break;
        }
        case "too_small":
          this.#add(
            path,
            issue.origin === "string" || issue.origin === "array"
              ? `must not be empty, got ${describeValue(value)}`
              : `must be ${issue.inclusive ? "at least" : "greater than"} ${issue.minimum}, got ${
                describeValue(value)
              }`,
          );
          break;
        case "too_big": {
          const duration = DURATION_FIELDS.has(String(path.at(-1)));
          const unit = duration ? ` seconds (${describeSeconds(Number(issue.maximum))})` : "";
          this.#add(
            path,
            `must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}${unit}, got ${
              describeValue(value)
            }`,
            duration && typeof value === "number"
              ? durationHint(value, Number(issue.maximum))
              : undefined,
          );
          break;
        }
        default:
          this.#add(path, `${issue.message}, got ${describeValue(value)}`);
      }
    }
  }
}

const KNOWN_KEYS: Record<string, readonly string[]> = {
  top: Object.keys(ConfigFileSchema.shape),
  LLM: Object.keys(LlmSchema.shape),
  server: Object.keys(ServerSchema.shape),
  auth: Object.keys(ServerSchema.shape.auth.unwrap().shape),
  AgentConfig: Object.keys(AgentSchema.shape),
  Memory: Object.keys(MemorySchema.shape),
};

function knownKeys(base: Path, issuePath: readonly PropertyKey[]): readonly string[] {
  const path = [...base, ...issuePath];
  if (path.length === 0) return KNOWN_KEYS.top;
  if (path[0] === "mcpServers") return path.at(-1) === "auth" ? KNOWN_KEYS.auth : KNOWN_KEYS.server;
  return KNOWN_KEYS[String(path[0])] ?? [];
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function typeName(expected: string): string {
  return ({
    string: "a string",
    number: "a number",
    int: "an integer",
    boolean: "true or false",
    object: "an object",
    array: "an array",
    record: "an object",
  } as Record<string, string>)[expected] ?? expected;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** `86400` → "one day"; the maxima are whole days or years. */
function describeSeconds(seconds: number): string {
  const days = seconds / 86_400;
  if (days >= 365 && Number.isInteger(days / 365)) {
    return days === 365 ? "one year" : `${days / 365} years`;
  }
  if (Number.isInteger(days)) return days === 1 ? "one day" : `${days} days`;
  return `${seconds} s`;
}

/** Why a duration is too long, in the unit people confuse it with. */
function durationHint(value: number, maximum: number): string {
  const days = (value / 86_400).toFixed(1);
  return value % 1000 === 0 && value / 1000 <= maximum
    ? `durations are in seconds: ${value} s is ${days} days; for ${value} ms write ${value / 1000}`
    : `durations are in seconds: ${value} s is ${days} days`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") {
    return `the string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value)}`;
  }
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "boolean") return `${value}`;
  return describeType(value);
}

/** What is at `path`; `missing` also when it cannot be looked at. */
function fileKind(path: string): "folder" | "file" | "missing" {
  try {
    return Deno.statSync(path).isDirectory ? "folder" : "file";
  } catch {
    return "missing";
  }
}
