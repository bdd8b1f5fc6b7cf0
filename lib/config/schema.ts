/**
 * The schema of servers_config.json (docs/configuration.md), as written in the file.
 *
 * This zod schema is the single source: the loader validates with it and
 * `scripts/gen_schema.ts` turns it into `servers_config.schema.json` for editors
 * (a test keeps the two in step). Defaults are applied here (`.default`, values from
 * lib/defaults.ts); which fields each transport needs and refuses is the discriminated
 * union {@linkcode EntryByTransportSchema}, and the rules among `auth`'s fields are
 * lib/config/auth_rules.ts. lib/config/zod_issues.ts words their issues.
 *
 * @module
 */

import { z } from "zod";
import { DEFAULTS } from "../defaults.ts";
import { PROVIDER_NAMES } from "../providers.ts";
import { isModernRevision, PROTOCOL_MODES, PROTOCOL_REVISIONS } from "../revisions.ts";
import { CLIENT_ASSERTION_ALGS, OAUTH_GRANTS } from "./types.ts";

/**
 * Longest duration a configuration may give a wait (timeouts), in seconds: one day. No
 * request should take longer, and it keeps every timer far from the 2^31 ms (24.8 days)
 * beyond which timers fire at once instead (`lib/async/timers.ts`).
 */
export const MAX_DURATION_SECONDS = 86_400;

/** Longest `Memory.ttl_seconds`: ten years (365-day years), a bound for date arithmetic. */
export const MAX_TTL_SECONDS = 10 * 365 * 86_400;

/** A duration in seconds, up to {@linkcode MAX_DURATION_SECONDS}; `fallback` when absent. */
const seconds = (what: string, fallback: number) =>
  z.number().positive().max(MAX_DURATION_SECONDS).describe(
    `${what}, in seconds (default ${fallback}); at most ${MAX_DURATION_SECONDS} (one day)`,
  ).default(fallback);

/** Fields whose value is a duration in seconds (for messages that name the unit). */
export const DURATION_FIELDS: ReadonlySet<string> = new Set([
  "timeout",
  "sse_read_timeout",
  "tool_call_timeout",
  "ttl_seconds",
  "headers_helper_ttl",
  "api_key_helper_ttl",
]);

const positiveInt = (what: string) => z.number().int().positive().describe(what);

/** An optional, non-empty text field. */
const optionalText = (what: string) => z.string().min(1).describe(what).optional();
const usdPerMillion = (what: string) =>
  z.number().min(0).describe(`${what}, US dollars per million tokens`);

/** Longest `AgentConfig.connect_wait`: a message should not wait on servers for long. */
export const MAX_CONNECT_WAIT_SECONDS = 300;
/** Longest `ping_interval`: a dead server is noticed within the hour at worst. */
export const MAX_PING_INTERVAL_SECONDS = 3600;

export const TRANSPORT_TYPES = ["stdio", "streamable_http", "sse"] as const;

/** Values of other clients' `type` field, mapped by lib/config/dialect.ts. */
export const DIALECT_TYPES = [
  "stdio",
  "http",
  "streamable-http",
  "streamable_http",
  "streamableHttp",
  "sse",
] as const;

/**
 * What a rule's custom issue carries besides its message: the hint, where the caret goes
 * (`key`: at the field's name; else at its value), and its kind (`missing`: the message
 * is the hint of a `Missing required field` problem; `warning`: worth saying, not an error).
 */
export interface RuleParams {
  hint?: string;
  at?: "key";
  kind?: "missing" | "warning";
}

/**
 * A program patchbay runs for a secret (docs/secrets.md): its command alone, or with
 * arguments and variables of its own. No shell: `{"command": "sh", "args": ["-c", "…"]}`
 * runs a shell line, and grants `sh`.
 */
const HelperSchema = z.union([
  z.string().min(1),
  z.strictObject({
    command: z.string().min(1).describe(
      "The program: a name on PATH, or a path (a relative one is from this file's folder)",
    ),
    args: z.array(z.string()).describe("Its arguments").optional(),
    env: z.record(z.string(), z.string()).describe(
      "Variables of its own, over the minimal environment it gets",
    ).optional(),
  }),
], {
  error: 'expected the program as a string, or {"command": "…", "args": […], "env": {…}}',
});

export const LlmSchema = z.strictObject({
  provider: z.string().min(1).describe(
    `Model provider: ${PROVIDER_NAMES.join(", ")}`,
  ),
  model: z.string().min(1).describe("Model identifier, e.g. gpt-4o-mini"),
  max_tokens: positiveInt(
    `Cap on the tokens of one response (default ${DEFAULTS.llm.maxTokens})`,
  ).default(DEFAULTS.llm.maxTokens),
  temperature: z.number().min(0).max(2).describe(
    "Sampling temperature; lower is more focused (default: the provider's)",
  ).optional(),
  max_context_length: positiveInt(
    `Tokens of conversation history kept (default ${DEFAULTS.llm.maxContextLength})`,
  ).default(DEFAULTS.llm.maxContextLength),
  base_url: optionalText("The API's address; overrides the provider's preset"),
  endpoint: optionalText("Azure only: the resource endpoint, https://<resource>.openai.azure.com"),
  deployment: optionalText("Azure only: deployment name (default: model)"),
  api_version: optionalText("Azure only: API version, e.g. 2024-10-21"),
  system_prompt: z.string().describe("Replaces patchbay's system prompt").optional(),
  timeout: seconds("Time one model request may take", DEFAULTS.llm.timeoutSeconds),
  max_retries: z.number().int().min(0).max(10).describe(
    `Retries of a failed model request (default ${DEFAULTS.llm.maxRetries})`,
  ).default(DEFAULTS.llm.maxRetries),
  vision: z.union([z.boolean(), z.literal("auto")], { error: `expected true, false or "auto"` })
    .describe(
      "Images (from tools, resources and @mentions) go to the model as image parts: true, " +
        'false (described in words instead), or "auto" (decided from the provider and model ' +
        `name; default ${DEFAULTS.llm.vision})`,
    ).default(DEFAULTS.llm.vision),
  prompt_caching: z.boolean().describe(
    "Anthropic: mark the stable prefix of each request (tools, system prompt, the " +
      "conversation so far) for the provider's prompt cache, read back at a tenth of the " +
      `input price (default ${DEFAULTS.llm.promptCaching})`,
  ).default(DEFAULTS.llm.promptCaching),
  price: z.strictObject({
    input: usdPerMillion("Prompt tokens at the full price"),
    output: usdPerMillion("Answer tokens"),
    cache_read: usdPerMillion("Prompt tokens read from the cache (default: input)").optional(),
    cache_write: usdPerMillion("Prompt tokens written to the cache (default: input)").optional(),
  }).describe(
    "The model's price in US dollars per million tokens, for the session's estimated cost " +
      "(default: patchbay's table, which knows a few Claude and GPT models)",
  ).optional(),
  // Secrets that never touch a file (docs/secrets.md).
  api_key_helper: HelperSchema.describe(
    "A program that prints the model's key, used instead of LLM_API_KEY: run before the " +
      "first request, again after api_key_helper_ttl and on a 401 (docs/secrets.md)",
  ).optional(),
  api_key_helper_ttl: seconds(
    "Time the key api_key_helper printed is used before it runs again",
    DEFAULTS.secrets.apiKeyHelperTtlSeconds,
  ),
}).describe("Model settings");

/** A command line run without a shell: the program, then its arguments. */
const commandLine = (what: string) =>
  z.array(z.string().min(1)).min(1).max(MAX_COMMAND_WORDS).describe(what).optional();

/** Most words a credential command line may have. */
const MAX_COMMAND_WORDS = 64;

/** `auth.idp`: the organisation's identity provider, for grant "token_exchange". */
export const IdpSchema = z.strictObject({
  issuer: optionalText(
    "The identity provider's issuer URL; its token endpoint is discovered from its metadata",
  ),
  token_endpoint: optionalText("The identity provider's token endpoint (instead of issuer)"),
  client_id: optionalText("patchbay's client id at the identity provider"),
  client_secret: optionalText(
    "patchbay's client secret at the identity provider; write ${VARIABLE} to take it from " +
      ".env or the environment",
  ),
  subject_token_file: optionalText(
    "The file holding the person's ID token from the identity provider, read again for " +
      "every exchange; relative to this file's folder",
  ),
  subject_token_command: commandLine(
    "The command (program and arguments, no shell) that prints the person's ID token",
  ),
}).describe(
  'grant "token_exchange": the identity provider that exchanges the person\'s ID token for ' +
    "an identity assertion grant (ID-JAG) for this server",
);

export const AuthSchema = z.strictObject({
  method: z.literal("oauth").describe('"oauth" turns on OAuth for this server'),
  client_id: optionalText("Pre-registered OAuth client id"),
  grant: z.enum(OAUTH_GRANTS).describe(
    '"authorization_code": a person logs in in the browser (default); "client_credentials": ' +
      "patchbay authenticates as the client itself, with client_secret or a private key, " +
      'for CI and hosts without a browser; "jwt_bearer": a JWT from the workload\'s ' +
      "environment (assertion_file or assertion_command) is presented (workload identity " +
      'federation, RFC 7523); "token_exchange": the organisation\'s identity provider (idp) ' +
      "exchanges the person's ID token for a grant the server's authorization server " +
      "accepts (enterprise-managed authorization, RFC 8693 then RFC 7523)",
  ).default(DEFAULTS.oauth.grant),
  client_secret: optionalText("Pre-registered OAuth client secret"),
  private_key: optionalText(
    "The client's private key for private_key_jwt client authentication: PEM (PKCS#8) or a " +
      "JWK as JSON; write ${VARIABLE} to take it from .env or the environment",
  ),
  private_key_file: optionalText(
    "File holding the client's private key (PEM PKCS#8 or JWK JSON) for private_key_jwt; " +
      "relative to this file's folder",
  ),
  // No zod default: a private_key_alg written without a key is worth a warning.
  private_key_alg: z.enum(CLIENT_ASSERTION_ALGS).describe(
    `JWS algorithm of the private_key_jwt assertion (default ${DEFAULTS.oauth.privateKeyAlg})`,
  ).optional(),
  dpop: z.boolean().describe(
    `Ask for DPoP-bound tokens (RFC 9449) and sign every request with a proof key ` +
      `(default ${DEFAULTS.oauth.dpop})`,
  ).default(DEFAULTS.oauth.dpop),
  scopes: z.array(z.string().min(1)).describe("Scopes to request (default: the server's)")
    .optional(),
  client_metadata_url: optionalText(
    "HTTPS URL of a client ID metadata document to use as client_id",
  ),
  assertion_file: optionalText(
    'grant "jwt_bearer": the file holding the workload\'s JWT (e.g. a Kubernetes projected ' +
      "service-account token), read again for every token request; relative to this file's " +
      "folder",
  ),
  assertion_command: commandLine(
    'grant "jwt_bearer": the command (program and arguments, no shell) that prints the ' +
      "workload's JWT on stdout, run for every token request",
  ),
  idp: IdpSchema.optional(),
  allow_internal_hosts: z.array(
    z.string().regex(
      /^(?:[^\s/:@?#[\]]+|\[?[0-9A-Fa-f:.]+\]?)$/,
      "a host name or IP address alone, without scheme, port or path (e.g. sso.corp.internal)",
    ),
  ).describe(
    "Hosts this server's OAuth endpoints may use on a private, loopback or link-local " +
      "address although the server itself is not on one (your own network's authorization " +
      "server); default none",
  ).optional(),
}).describe("Authentication; omit it and use headers for a bearer token");

const protocol = z.enum([...PROTOCOL_MODES, ...PROTOCOL_REVISIONS]).describe(
  `MCP protocol revision: auto (default ${DEFAULTS.server.protocol}: probe for ` +
    `${PROTOCOL_REVISIONS[0]} with server/discover, else the 2025 initialize handshake), ` +
    "legacy (the 2025 handshake, no probe), or one revision to require",
);

/** One server entry as written: every field of every transport (what editors offer). */
export const ServerSchema = z.strictObject({
  transport_type: z.enum(TRANSPORT_TYPES).describe(
    "How to reach the server; when omitted, stdio for a command, sse for a url ending in " +
      "/sse, else streamable_http (sse when the server answers the legacy way)",
  ).optional(),
  command: optionalText("stdio: executable that starts the server"),
  args: z.array(z.string()).describe("stdio: arguments for the command").optional(),
  env: z.record(z.string(), z.string()).describe(
    "stdio: extra environment variables for the server process",
  ).optional(),
  cwd: optionalText("stdio: working directory (relative to this file's folder)"),
  url: optionalText("streamable_http / sse: http(s)://<host>:<port>/<path>"),
  headers: z.record(z.string(), z.string()).describe(
    "streamable_http / sse: extra request headers, e.g. Authorization: Bearer <token>",
  ).optional(),
  auth: AuthSchema.optional(),
  // Secrets that never touch a file (docs/secrets.md).
  headers_helper: HelperSchema.describe(
    "streamable_http / sse: a program whose stdout is a JSON object of headers, sent over " +
      "headers; run at each connection, on a 401 and after headers_helper_ttl",
  ).optional(),
  headers_helper_ttl: z.number().positive().max(MAX_DURATION_SECONDS).describe(
    "streamable_http / sse: seconds headers_helper's headers are used before it runs again " +
      "(default: until a 401 or the next connection)",
  ).optional(),
  timeout: seconds(
    "Time to connect and to answer one request",
    DEFAULTS.server.timeoutSeconds,
  ),
  sse_read_timeout: seconds(
    "Time an event stream may stay silent before it is reopened",
    DEFAULTS.server.sseReadTimeoutSeconds,
  ),
  ping_interval: z.number().min(0).max(MAX_PING_INTERVAL_SECONDS).describe(
    "streamable_http / sse: a server that died is noticed within this many seconds " +
      "(an MCP ping after half of it without a word from the server, answered within the " +
      `other half); 0 turns the pings off (default ${DEFAULTS.server.pingIntervalSeconds}, ` +
      `at most ${MAX_PING_INTERVAL_SECONDS})`,
  ).default(DEFAULTS.server.pingIntervalSeconds),
  roots: z.array(z.string().min(1)).min(1).describe(
    "Folders offered to the server as MCP roots (paths; relative ones against this file's " +
      "folder). Without it the server is not offered roots and keeps its own settings",
  ).optional(),
  trusted: z.boolean().describe("Run this server's tools without asking (default false)")
    .default(DEFAULTS.server.trusted),
  sampling: z.enum(["ask", "allow", "deny"]).describe(
    "Model requests from the server (sampling): ask, allow or deny (default ask)",
  ).default(DEFAULTS.server.sampling),
  disabled: z.boolean().describe("Keep the entry but do not connect (default false)")
    .default(false),
  protocol: protocol.default(DEFAULTS.server.protocol),
  tasks: z.enum(["auto", "always", "never"]).describe(
    "When tools that allow it run as MCP tasks: auto (after a call came close to " +
      "tool_call_timeout), always, never; tools that require it always do (default auto)",
  ).default(DEFAULTS.server.tasks),
  // The forms other clients write (Claude Desktop and Code, Cursor, VS Code, gemini-cli),
  // accepted so an entry pasted from them works; lib/config/dialect.ts maps each onto the
  // field above it names, which stays the canonical one.
  type: z.enum(DIALECT_TYPES).describe(
    "Same as transport_type, as other clients write it: stdio, http or streamable-http " +
      "(streamable_http), sse",
  ).optional(),
  httpUrl: optionalText("gemini-cli's form: a streamable_http server's url"),
  serverUrl: optionalText("Same as url, as some clients write it"),
  enabled: z.boolean().describe('Same as "disabled": false; false keeps the entry unconnected')
    .optional(),
  include_tools: z.array(z.string().min(1)).describe(
    "Offer only the tools matching one of these names or * globs (default: every tool)",
  ).optional(),
  exclude_tools: z.array(z.string().min(1)).describe(
    "Never offer the tools matching one of these names or * globs; wins over include_tools",
  ).optional(),
}).describe("One MCP server");

/** Fields that only a server started as a local process takes. */
const STDIO_ONLY_FIELDS = { command: true, args: true, env: true, cwd: true } as const;
/** Fields that only a server reached at a URL takes. */
const HTTP_ONLY_FIELDS = {
  url: true,
  headers: true,
  auth: true,
  sse_read_timeout: true,
  ping_interval: true,
  headers_helper: true,
  headers_helper_ttl: true,
} as const;

/**
 * A required text whose absence is explained: `hint` becomes the message of the missing
 * field's issue (the other issues keep zod's wording, which lib/config/zod_issues.ts
 * replaces).
 */
const requiredText = (hint: string) =>
  z.string({ error: (issue) => issue.input === undefined ? hint : undefined }).min(1);

const httpEntry = <T extends "streamable_http" | "sse">(transport: T) =>
  ServerSchema.omit(STDIO_ONLY_FIELDS).extend({
    transport_type: z.literal(transport),
    url: requiredText(`a ${transport} server needs its url, http://<host>:<port>/<path>`),
  });

/**
 * Which fields each transport needs and which it refuses, for an entry whose
 * `transport_type` is known (written, or inferred from command or url). Its issues are
 * `unrecognized_keys` for a field of the other transport and a missing command or url.
 */
export const EntryByTransportSchema = z.discriminatedUnion("transport_type", [
  ServerSchema.omit(HTTP_ONLY_FIELDS).extend({
    transport_type: z.literal("stdio"),
    command: requiredText("a stdio server needs the command that starts it"),
  }),
  httpEntry("streamable_http"),
  httpEntry("sse").extend({
    // Refined before the default: only a protocol written in the entry is judged.
    protocol: protocol.superRefine((protocol, ctx) => {
      if (!isModernRevision(protocol)) return;
      ctx.addIssue({
        code: "custom",
        message: `protocol revision ${protocol} has no legacy SSE transport`,
        params: {
          hint: 'use "transport_type": "streamable_http" with the server\'s MCP endpoint, or ' +
            '"protocol": "legacy" for an SSE server',
          at: "key",
        } satisfies RuleParams,
      });
    }).default(DEFAULTS.server.protocol),
  }),
]);

export const AgentSchema = z.strictObject({
  tool_call_timeout: seconds(
    "Limit for one tool call",
    DEFAULTS.agent.toolCallTimeoutSeconds,
  ),
  connect_wait: z.number().min(0).max(MAX_CONNECT_WAIT_SECONDS).describe(
    "Seconds a message sent while servers are still connecting waits for them, then goes " +
      "with the tools of the servers that are connected " +
      `(default ${DEFAULTS.agent.connectWaitSeconds}, at most ${MAX_CONNECT_WAIT_SECONDS})`,
  ).default(DEFAULTS.agent.connectWaitSeconds),
  request_limit: positiveInt("Model requests per session (default unlimited)").optional(),
  total_tokens_limit: positiveInt("Tokens per session (default unlimited)").optional(),
  max_steps: positiveInt(
    `Model requests per turn (default ${DEFAULTS.agent.maxSteps})`,
  ).default(DEFAULTS.agent.maxSteps),
  tool_search: z.strictObject({
    mode: z.enum(["auto", "always", "never"]).describe(
      "auto: offer the model a search tool instead of every tool definition once the " +
        "thresholds are exceeded; always; never " +
        `(default ${DEFAULTS.agent.toolSearch.mode})`,
    ).default(DEFAULTS.agent.toolSearch.mode),
    max_tools: positiveInt(
      `Tools sent in full up to this count (default ${DEFAULTS.agent.toolSearch.maxTools})`,
    ).default(DEFAULTS.agent.toolSearch.maxTools),
    max_tokens: positiveInt(
      "Tool definitions sent in full up to this many estimated tokens " +
        `(default ${DEFAULTS.agent.toolSearch.maxTokens})`,
    ).default(DEFAULTS.agent.toolSearch.maxTokens),
  }).describe("When the model finds tools by search instead of receiving them all")
    .default({
      mode: DEFAULTS.agent.toolSearch.mode,
      max_tools: DEFAULTS.agent.toolSearch.maxTools,
      max_tokens: DEFAULTS.agent.toolSearch.maxTokens,
    }),
  sampling_request_limit: positiveInt(
    "Servers' sampling requests answered per session " +
      `(default ${DEFAULTS.agent.samplingRequestLimit})`,
  ).default(DEFAULTS.agent.samplingRequestLimit),
  sampling_per_tool_call: positiveInt(
    "Sampling requests a server may make during one tool call " +
      `(default ${DEFAULTS.agent.samplingPerToolCall})`,
  ).default(DEFAULTS.agent.samplingPerToolCall),
}).describe("Runtime limits");

export const MemorySchema = z.strictObject({
  backend: z.enum(["auto", "redis", "file", "off"]).describe(
    "auto (Redis when REDIS_URL or REDIS_HOST is set, or sentinels or cluster_nodes, else " +
      "the embedded store in the data directory), redis, file or off (nothing saved; " +
      "/memory turns it on)",
  ).default(DEFAULTS.memory.backend),
  ttl_seconds: z.number().int().positive().max(MAX_TTL_SECONDS).describe(
    "Seconds a conversation is kept after its last message (default: forever); at most " +
      `${MAX_TTL_SECONDS} (ten years)`,
  ).optional(),
  key_prefix: z.string().min(1).regex(
    /^[^\s{}]+$/,
    "no spaces or braces (braces would break Redis Cluster hash tags)",
  ).describe(
    `Prefix of Redis keys (default ${DEFAULTS.memory.keyPrefix}); keeps deployments apart`,
  ).default(DEFAULTS.memory.keyPrefix),
  sentinels: z.array(z.string().min(1)).describe(
    "Redis Sentinel addresses host:port; connects to the master named by sentinel_name",
  ).optional(),
  sentinel_name: optionalText("Redis Sentinel master group name"),
  cluster_nodes: z.array(z.string().min(1)).describe(
    "Redis Cluster seed nodes host:port",
  ).optional(),
}).describe("Conversation memory store");

export const TraceSchema = z.strictObject({
  file: z.string().min(1).describe(
    "Record every JSON-RPC message to and from every server in this file, one JSON object " +
      "per line (docs/trace.md); a relative path is taken from this file's folder. " +
      "--trace and PATCHBAY_TRACE win over it",
  ),
  model: z.boolean().describe(
    "Also record model requests: method, model, token counts, latency (default false)",
  ).default(false),
  model_bodies: z.boolean().describe(
    "With model: also the request and answer bodies (default false)",
  ).default(false),
}).describe("Wire trace");

/** One command of a hook (Claude Code's `{"type": "command", …}`; docs/hooks.md). */
export const HookCommandSchema = z.strictObject({
  type: z.literal("command").describe(
    '"command": run a program (the only kind of hook patchbay runs)',
  ),
  command: z.string().min(1).describe(
    "The command line, run in this file's folder: a program and its arguments (run " +
      "directly), or a line with shell syntax (run with sh -c); its JSON input comes on stdin",
  ),
  timeout: seconds("Time the hook may run before it is ended", DEFAULTS.hooks.timeoutSeconds),
  env: z.record(z.string(), z.string()).describe(
    "Variables the hook gets besides PATH, HOME, USER, LOGNAME, SHELL, TERM and the project " +
      "folder; ${VAR} takes a value from .env or the environment",
  ).optional(),
}).describe("A command run when the event fires");

/** A matcher and its hooks. */
export const HookGroupSchema = z.strictObject({
  matcher: z.string().describe(
    "Which calls run these hooks: <server>.<tool> globs (* any run, ? one character) or " +
      "Claude Code's mcp__<server>__<tool>, separated by |; absent, empty or * is every call. " +
      "SessionStart: startup, resume or clear; SessionEnd: clear, prompt_input_exit or other",
  ).optional(),
  hooks: z.array(HookCommandSchema).describe("The commands, run one after another").min(1),
}).describe("Hooks and the matcher that selects them");

const hookEvent = (when: string) =>
  z.array(HookGroupSchema).describe(`Hooks run ${when}`).optional();

/** The `Hooks` section: commands run at points of a session, in Claude Code's form. */
export const HooksSchema = z.strictObject({
  PreToolUse: hookEvent("before a tool call; they may allow, deny, ask or rewrite the input"),
  PostToolUse: hookEvent("after a tool call returned; they may give the model feedback"),
  UserPromptSubmit: hookEvent("before a message goes to the model; they may refuse it"),
  Stop: hookEvent("when the model answers without calling a tool; they may make it go on"),
  SessionStart: hookEvent("when the interactive client or run starts (and after /clear)"),
  SessionEnd: hookEvent("when the interactive client or run ends (and at /clear)"),
}).describe("Commands run at points of a session, as Claude Code's hooks (docs/hooks.md)");

export const TelemetrySchema = z.strictObject({
  endpoint: optionalText(
    "OTLP/HTTP address of the collector, e.g. http://localhost:4318 (Deno adds /v1/traces " +
      "and /v1/metrics); wins over OTEL_EXPORTER_OTLP_ENDPOINT " +
      `(default: that variable, else ${DEFAULTS.telemetry.endpoint})`,
  ),
  protocol: z.enum(["http/protobuf", "http/json"]).describe(
    `OTLP encoding (default: OTEL_EXPORTER_OTLP_PROTOCOL, else ${DEFAULTS.telemetry.protocol})`,
  ).optional(),
  headers: z.record(z.string(), z.string()).describe(
    "Headers sent to the collector (credentials: write ${VAR} and keep the value in .env); " +
      "win over OTEL_EXPORTER_OTLP_HEADERS",
  ).default({}),
  service_name: optionalText(
    "service.name of the spans and metrics (default: OTEL_SERVICE_NAME, else " +
      `${DEFAULTS.telemetry.serviceName})`,
  ),
  capture_content: z.boolean().describe(
    "Also put prompts, answers, tool arguments and results in spans, masked and cut to " +
      `${DEFAULTS.telemetry.maxContentChars} characters (default ` +
      `${DEFAULTS.telemetry.captureContent})`,
  ).default(DEFAULTS.telemetry.captureContent),
}).describe("OpenTelemetry export through Deno's exporter (docs/telemetry.md)");

export const ConfigFileSchema = z.strictObject({
  $schema: z.string().describe("JSON Schema reference for editors").optional(),
  LLM: LlmSchema,
  mcpServers: z.record(z.string(), ServerSchema).describe(
    "Server name to server entry; may be empty {}",
  ),
  AgentConfig: AgentSchema.optional(),
  Memory: MemorySchema.optional(),
  Trace: TraceSchema.optional(),
  Hooks: HooksSchema.optional(),
  Telemetry: TelemetrySchema.optional(),
}).describe("patchbay configuration (servers_config.json)");

/** A section the file must have; its content is parsed on its own. */
const requiredSection = (hint?: string) =>
  z.unknown().refine((value) => value !== undefined, {
    message: hint ?? "",
    params: { kind: "missing" } satisfies RuleParams,
  });

/**
 * The file's top level: the sections it takes and the two it needs. Each section is then
 * parsed on its own (lib/config/validate.ts), so one broken section hides no other.
 */
export const FileSectionsSchema = ConfigFileSchema.extend({
  LLM: requiredSection("it names the provider and model"),
  mcpServers: requiredSection(),
  AgentConfig: z.unknown().optional(),
  Memory: z.unknown().optional(),
  Trace: z.unknown().optional(),
  Hooks: z.unknown().optional(),
  Telemetry: z.unknown().optional(),
});

export type ConfigFile = z.infer<typeof ConfigFileSchema>;
export type ServerEntry = z.infer<typeof ServerSchema>;
export type AuthEntry = z.infer<typeof AuthSchema>;
export type HelperEntry = z.infer<typeof HelperSchema>;
