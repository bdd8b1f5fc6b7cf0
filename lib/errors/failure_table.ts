/**
 * The table of failures a person can meet: for each row of the behaviour contract's error
 * table, the message (`<…>` stands for a value), the typical causes, and the remedy as each
 * surface words it. The interactive client (`repl`) can name its slash commands; a
 * scripting command (`script`: `run`, `call`, `tools`, `doctor`, …) names flags, commands
 * and configuration instead. Both wordings are data here: nothing rewrites one into the
 * other.
 *
 * How a failure reaches a row:
 *
 * - the classifier (`lib/failure.ts`) reduces what was thrown to a {@linkcode NetProblem}
 *   (or a permission, an HTTP status, …); {@linkcode NET_ROWS} names the row of each
 *   network problem and the label its message starts with;
 * - a diagnoser (`lib/connections/diagnose*.ts`, `lib/redis/errors.ts`,
 *   `lib/llm/request_failures.ts`, `lib/oauth/login_errors.ts`) finds the cause and throws
 *   a typed error (`lib/errors.ts`) whose message and remedy come from its row;
 * - `commands/_boundary.ts` shows the message, the cause, and the remedy of the surface.
 *
 * A new row (a failure the contract's table lacks, e.g. a TLS certificate the runtime does
 * not trust) goes in {@linkcode ROWS} with both remedies; `tests/errors/failure_table_test.ts`
 * checks every row has a message, causes and both remedies, and that no script remedy
 * names a slash command.
 *
 * Remedies beyond the rows: {@linkcode STEPS} (shared, `./shared_steps.ts`), and an area's
 * steps in `./<area>_steps.ts`; the `Remedy` type and its composers are `./remedy.ts`.
 * `tests/errors/remedy_vocabulary_test.ts` fails on a remedy written anywhere else.
 *
 * @module
 */

import type { ErrorCode } from "./error_codes.ts";
import { type Remedy, remedyOf } from "./remedy.ts";

export { perSurface, type Remedy, remedyOf, type RemedyText, type Surface } from "./remedy.ts";
export { STEPS } from "./shared_steps.ts";

/** Why no connection (or no usable answer) could be had: the one list of network kinds. */
export type NetProblem =
  /** A proxy refused to open the tunnel (`CONNECT`) or to authenticate us. */
  | "tunnel"
  /** Nothing listens at the address (RST). */
  | "refused"
  /** The host name has no address. */
  | "dns"
  /** Nothing answered in time. */
  | "timeout"
  /** No route to the host or its network. */
  | "unreachable"
  /** The TLS handshake failed (certificate, or a port that does not speak TLS). */
  | "tls"
  /** Something answered that does not speak HTTP. */
  | "not_http"
  /** The connection broke after it was made. */
  | "dropped";

/** One row: what a person reads first, why it typically happens, and what to do. */
export interface FailureRow {
  /** The `code` of the typed errors of the row (`--json` output's `error.code`). */
  readonly codes: readonly ErrorCode[];
  /** The message(s) of the row, as shown; `<name>` stands for a value ({@linkcode fill}). */
  readonly messages: readonly string[];
  /** The typical causes the row covers. */
  readonly causes: readonly string[];
  /** What to do, per surface. */
  readonly remedy: Remedy;
}

const SESSION_TERMINATED = "Failed to connect to server '<server>': Session terminated";

/**
 * The rows, keyed by failure kind. The four `Session terminated` rows share a message and
 * differ in cause and remedy; `answer_too_large` is patchbay's own (a bound it keeps).
 */
export const ROWS = {
  wrong_transport: {
    codes: ["server_connect_failed"],
    messages: [SESSION_TERMINATED],
    causes: ["the server speaks another transport than transport_type (e.g. stdio)"],
    remedy: remedyOf(
      "use the transport the server documents (transport_type stdio, " +
        "streamable_http or sse) in servers_config.json",
    ),
  },
  oauth_unsupported: {
    codes: ["server_connect_failed"],
    messages: [SESSION_TERMINATED],
    causes: ["auth.method oauth is set for a server without OAuth"],
    remedy: remedyOf(
      'remove "auth" from the server entry and send a token with ' +
        '"headers": {"Authorization": "Bearer <ACCESS_TOKEN>"} instead',
    ),
  },
  not_running: {
    codes: ["server_connect_failed"],
    messages: [SESSION_TERMINATED],
    causes: ["the server is not running at the configured address"],
    remedy: {
      repl: "start the server first, then the client (or run /refresh once it is up)",
      script: "start the server first, then the client",
    },
  },
  wrong_address: {
    codes: ["server_connect_failed"],
    messages: [SESSION_TERMINATED],
    causes: ["the url or port is wrong"],
    remedy: remedyOf('check the address and port the server really listens on and fix "url"'),
  },
  answer_too_large: {
    codes: ["server_connect_failed"],
    messages: [SESSION_TERMINATED],
    causes: ["the server sent an answer past the size patchbay reads"],
    remedy: remedyOf(
      "the server produced an answer too large to handle; ask less of it at once, or " +
        "report it to the server's authors",
    ),
  },
  api_key: {
    codes: ["invalid_api_key", "authentication_failed"],
    messages: ["Invalid API key", "Authentication failed"],
    causes: ["LLM_API_KEY is bad, missing or was not loaded"],
    remedy: remedyOf(
      "set LLM_API_KEY in .env or the environment to a valid key for the provider, " +
        "then restart patchbay (.env is read only at start-up)",
    ),
  },
  oauth: {
    codes: ["oauth_failed"],
    messages: ["OAuth authentication failed for server '<server>'"],
    causes: ["port 3000 is busy", "no browser opened", "a firewall blocks localhost"],
    remedy: remedyOf(
      "free port 3000, open the printed authorization URL by hand if no browser opened, " +
        "and allow connections to localhost",
    ),
  },
  json_syntax: {
    codes: ["config_syntax"],
    messages: ["Invalid configuration: <problem>", "JSON decode error: <problem>"],
    causes: ["a trailing comma, a missing comma or another JSON syntax fault"],
    remedy: remedyOf(
      "fix the file at the position shown; `patchbay config check` (or any JSON " +
        "validator) re-checks it",
    ),
  },
  missing_field: {
    codes: ["config_invalid"],
    messages: ["Missing required field"],
    causes: ["LLM.provider, LLM.model or mcpServers is absent"],
    remedy: remedyOf('add the field; "mcpServers" may be an empty object {}'),
  },
  tool: {
    codes: ["tool_failed", "tool_timeout"],
    messages: [
      "Tool execution failed: <tool>",
      "Tool timeout: <tool> did not finish within <seconds> s",
    ],
    causes: ["the tool call exceeded AgentConfig.tool_call_timeout", "the tool failed"],
    remedy: {
      repl: "raise AgentConfig.tool_call_timeout if the tool is slow, run /debug for details, " +
        "and check the tool exists with /tools",
      script: "raise AgentConfig.tool_call_timeout if the tool is slow, run again with --debug " +
        "for details, and check the tool exists with `patchbay tools`",
    },
  },
  file_permission: {
    codes: ["permission_denied"],
    messages: ["Permission denied: <what>"],
    causes: ["the operating system refused access to a file"],
    remedy: remedyOf(
      "fix the file's permissions (chmod/chown) so the server process can read it",
    ),
  },
  store: {
    codes: ["store_unreachable"],
    messages: ["Could not connect to <store> at <target>: <problem>"],
    causes: ["the memory store is not running", "wrong host, port, db or password"],
    remedy: {
      repl: "start the store, fix the REDIS_* variables (host, port, db, password), " +
        "or turn persistence off with /memory",
      script: "start the store, fix the REDIS_* variables (host, port, db, password), " +
        'or turn persistence off with "Memory": {"backend": "off"}',
    },
  },
  rate_limit: {
    codes: ["rate_limited"],
    messages: ["Rate limit exceeded (Too many requests)"],
    causes: ["the provider's limits were reached"],
    remedy: {
      repl: "lower AgentConfig.request_limit and total_tokens_limit, wait, or switch " +
        "provider; /api_stats shows what was used",
      script: "lower AgentConfig.request_limit and total_tokens_limit, wait, or switch " +
        "provider",
    },
  },
  timeout: {
    codes: ["timeout"],
    messages: ["Connection timeout", "Request timeout"],
    causes: ["the server is slow or unreachable"],
    remedy: remedyOf(
      'raise "timeout" (and "sse_read_timeout" for event streams) in the server ' +
        "entry, and test that the host is reachable",
    ),
  },
  network: {
    codes: ["network"],
    messages: ["Connection refused", "Network unreachable"],
    causes: ["a firewall or proxy blocks the connection", "nothing listens at the address"],
    remedy: remedyOf(
      "open the needed port (and outbound 443 for hosted providers); behind a corporate " +
        "proxy set HTTPS_PROXY",
    ),
  },
  // patchbay's own (docs/tasks.md): a task the server no longer knows, and a task id that
  // names none of the tasks patchbay recorded.
  task_unknown: {
    codes: ["task_unknown"],
    messages: ["Task <task> is unknown to server '<server>'"],
    causes: [
      "the task outlived the time the server keeps tasks (its ttl) and was deleted",
      "the server restarted and lost its tasks (many keep them in memory only)",
    ],
    remedy: {
      repl: "run the tool again; /tasks all lists what patchbay recorded of its tasks",
      script: "run the tool again; `patchbay tasks list --all` lists what patchbay recorded " +
        "of its tasks",
    },
  },
  task_not_found: {
    codes: ["task_not_found"],
    messages: ["Task '<task>' not found"],
    causes: ["no task patchbay recorded has that id (or it was forgotten: the oldest go first)"],
    remedy: {
      repl: "/tasks all lists the recorded tasks with their ids",
      script: "`patchbay tasks list --all` lists the recorded tasks with their ids",
    },
  },
  // Not a row of its own in the contract's table: a TLS-inspecting proxy makes every HTTPS
  // peer (the model's provider, HTTP servers) look like this, and the remedy is Deno's.
  untrusted_certificate: {
    codes: ["network", "server_connect_failed"],
    messages: ["Network unreachable", SESSION_TERMINATED],
    causes: [
      "a TLS-inspecting proxy re-signs traffic with its own CA",
      "the server's certificate is self-signed or signed by a private CA",
    ],
    remedy: remedyOf(
      "trust the CA certificate that signed it: DENO_TLS_CA_STORE=system to use the " +
        "system's certificate store, or DENO_CERT=/path/to/ca.pem for one CA file (a " +
        "TLS-inspecting proxy's), then start patchbay again (docs/first-run.md)",
    ),
  },
  // Skills over MCP (SEP-2640, docs/skills.md): patchbay's own rows, for a bound it keeps.
  skill_refused: {
    codes: ["skill_refused"],
    messages: ["Skill refused: <skill>"],
    causes: [
      "a file of the skill differs from the digest or size its server lists for it " +
      "(tampered, corrupted, or changed since it was listed)",
      "SKILL.md's frontmatter differs from the server's entry for it",
      "the entry cannot be verified (no digests, invalid, or past patchbay's limits)",
    ],
    remedy: {
      repl: "run /refresh <server> to list its skills again and retry; if it fails again " +
        "the server serves content that does not match its listing: do not use the " +
        "skill, and report it to the server's authors",
      script: "run the command again (the skills are listed afresh); if it fails again " +
        "the server serves content that does not match its listing: do not use the " +
        "skill, and report it to the server's authors",
    },
  },
  skill_not_found: {
    codes: ["skill_not_found"],
    messages: ["Unknown skill: <skill>"],
    causes: ["no connected server lists a skill of that name", "the name is ambiguous"],
    remedy: {
      repl: "list the skills with /skills and name one as <server>:<skill>",
      script: "list the skills with `patchbay skills list` and name one as <server>:<skill>",
    },
  },
  // Hooks (docs/hooks.md): patchbay's own rows. A hook that fails never approves anything.
  hook_failed: {
    codes: ["hook_failed"],
    messages: ["Hook failed: <event> hook '<command>'"],
    causes: [
      "the hook ran past its timeout",
      "the hook exited with a code other than 0 or 2, or could not start",
      "the hook printed output past patchbay's bound, or a JSON answer it cannot read",
      "the hook rewrote a tool's input into one the tool's schema refuses",
    ],
    remedy: {
      repl: "run the hook by hand with the input /debug logs for it, and fix it (or raise its " +
        '"timeout" in the Hooks section); while a PreToolUse hook fails, its calls are asked ' +
        "about, never run unasked",
      script: "run the hook by hand with the input --debug logs for it, and fix it (or raise " +
        'its "timeout" in the Hooks section); while a PreToolUse hook fails, its calls are ' +
        "declined unless a person at a terminal approves them",
    },
  },
  hook_blocked: {
    codes: ["hook_blocked"],
    messages: ["Blocked by hook: <what>", "Stopped by hook: <what>"],
    causes: [
      "a hook refused it: exit code 2, or a deny or block decision",
      'a hook ended the turn ("continue": false)',
    ],
    remedy: remedyOf(
      "the hook's reason says why: change the request, or the hook in the Hooks section of " +
        "servers_config.json",
    ),
  },
  // Secrets that never touch a file (docs/secrets.md): patchbay's own rows.
  secret_helper: {
    codes: ["secret_helper_failed"],
    messages: ["Headers helper failed for server '<server>'", "API key helper failed"],
    causes: [
      "the helper program is not found, not executable, or not granted",
      "it ran past its time and was ended",
      "it exited with an error",
      "its output is too large, or not the shape asked for (a JSON object of headers; " +
      "one line holding the key)",
    ],
    remedy: {
      repl: "run the helper by hand in the configuration's folder, fix what it reports or " +
        "prints (docs/secrets.md says what it must print), then /refresh",
      script: "run the helper by hand in the configuration's folder, fix what it reports or " +
        "prints (docs/secrets.md says what it must print), then run the command again",
    },
  },
  keychain: {
    codes: ["keychain_failed"],
    messages: ["Keychain entry '<name>' not found", "Could not read '<name>' from the keychain"],
    causes: [
      "no keychain entry has service patchbay and that account",
      "the keychain's tool is missing, the keychain is locked, or no keychain service runs",
    ],
    remedy: {
      repl: "store the entry with the command shown (or unlock the keychain), then /refresh",
      script: "store the entry with the command shown (or unlock the keychain), then run " +
        "the command again",
    },
  },
  // The administrator's policy (docs/policy.md): patchbay's own rows. A refusal names the
  // policy file; a policy file patchbay cannot use stops it (going on would loosen it).
  policy_refused: {
    codes: ["policy_refused"],
    messages: ["<subject> is refused by the administrator's policy (<file>)"],
    causes: [
      "a rule of the policy file (allowed_servers, denied_servers, denied_tools, " +
      "require_approval) refuses it; user and project configuration cannot loosen it",
    ],
    remedy: {
      repl: "use another server or tool, or ask your administrator to change the policy; " +
        "/mcp lists the servers it refuses",
      script: "use another server or tool, or ask your administrator to change the policy; " +
        "`patchbay mcp list` shows the servers it refuses",
    },
  },
  policy_invalid: {
    codes: ["policy_invalid"],
    messages: ["The administrator's policy <file> cannot be used"],
    causes: [
      "the file is not valid JSON or breaks its schema",
      "it cannot be read, or others than its owner may write it",
    ],
    remedy: remedyOf(
      "ask your administrator to fix it: patchbay does not start without it, since going " +
        "on without the policy would loosen it (docs/policy.md)",
    ),
  },
} as const satisfies Record<string, FailureRow>;

/** Every kind of failure the table knows. */
export type FailureKind = keyof typeof ROWS;

/** `template` with each `<name>` replaced by `values[name]`. */
export function fill(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(
    /<(\w+)>/g,
    (whole, name: string) => name in values ? String(values[name]) : whole,
  );
}

/** The labels a network problem's message starts with. */
export type NetLabel = "Connection refused" | "Connection timeout" | "Network unreachable";

/** The row of each network problem and the label its message starts with. */
export const NET_ROWS: Readonly<Record<NetProblem, { kind: FailureKind; label: NetLabel }>> = {
  tunnel: { kind: "network", label: "Connection refused" },
  refused: { kind: "network", label: "Connection refused" },
  dns: { kind: "network", label: "Network unreachable" },
  timeout: { kind: "timeout", label: "Connection timeout" },
  unreachable: { kind: "network", label: "Network unreachable" },
  tls: { kind: "network", label: "Network unreachable" },
  not_http: { kind: "network", label: "Network unreachable" },
  dropped: { kind: "network", label: "Network unreachable" },
};
