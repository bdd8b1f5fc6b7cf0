/**
 * The client the MCP conformance suite tests: `scripts/conformance.ts` passes this script
 * as `--command`, and the suite runs it with the scenario server's URL appended and the
 * scenario in `MCP_CONFORMANCE_SCENARIO` (its data, e.g. client credentials, as JSON in
 * `MCP_CONFORMANCE_CONTEXT`).
 *
 * It does what a person would do with patchbay: writes a `servers_config.json` with one
 * entry for the scenario's server in a fresh HOME (no login or state carried over from
 * another scenario), then runs patchbay's own commands (`tools`, `call`, `read`,
 * `prompt`) through the real entry point, `deno task start`, under the task's permission
 * flags. OAuth logins go through patchbay's browser opener, with `$BROWSER` set to a
 * headless browser that follows the authorization server's redirects to the callback.
 *
 * Exit code: 0 when every command did what the scenario expects of it (a scenario may
 * expect a refusal, e.g. a server whose metadata names another resource), 1 otherwise.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { certificateEnv } from "../tests/support/cli.ts";

const PROJECT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = "conformance";

/** What the suite passes in `MCP_CONFORMANCE_CONTEXT` (fields depend on the scenario). */
interface Context {
  client_id?: string;
  client_secret?: string;
  /** The client's key for `private_key_jwt` (PKCS#8 PEM), and its algorithm. */
  private_key_pem?: string;
  signing_algorithm?: string;
  /** auth/wif-jwt-bearer: the workload's JWT, as its platform would write it to a file. */
  valid_jwt?: string;
  /** auth/enterprise-managed-authorization: the identity provider and the person's ID token. */
  idp_client_id?: string;
  idp_id_token?: string;
  idp_issuer?: string;
  idp_token_endpoint?: string;
  toolCalls?: { name: string; arguments?: Record<string, unknown> }[];
  [key: string]: unknown;
}

/** One patchbay command a scenario needs, and whether it must succeed. */
interface Step {
  args: string[];
  /** The scenario expects patchbay to refuse (exit code 1). @default false */
  refuses?: boolean;
  /** Derives the next steps from this step's stdout (e.g. a schema to echo back). */
  then?: (stdout: string) => Step[];
}

/** The URL of a client ID metadata document the suite's CIMD scenarios accept. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

/** Scenarios in which patchbay must refuse the server: it misrepresents itself. */
const REFUSALS = new Set([
  "auth/resource-mismatch",
  "auth/metadata-issuer-mismatch",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-supported-missing",
]);

const call = (tool: string, args: Record<string, unknown> = {}, ...flags: string[]): Step => ({
  args: [...flags, "call", `${SERVER}.${tool}`, JSON.stringify(args)],
});

const toolsJson: Step = { args: ["tools", "--json"] };

/** The listed tools of a `tools --json` output. */
function listedTools(stdout: string): { tool: string; input_schema: unknown }[] {
  return (JSON.parse(stdout) as { tools: { tool: string; input_schema: unknown }[] }).tools;
}

/** What patchbay is asked to do in each scenario. */
export function stepsFor(scenario: string, context: Context): Step[] {
  switch (scenario) {
    case "initialize":
    case "request-metadata":
    case "json-schema-ref-no-deref":
      return [toolsJson];
    case "http-custom-headers":
      // The suite names the calls, with arguments that exercise the header encoding.
      return (context.toolCalls ?? []).map((c) => call(c.name, c.arguments ?? {}));
    case "tools_call":
      return [call("add_numbers", { a: 19, b: 23 })];
    case "sse-retry":
      return [call("test_reconnection")];
    case "elicitation-sep1034-client-defaults":
      return [call("test_client_elicitation_defaults", {}, "--accept-form-defaults")];
    case "sep-2322-client-request-state":
      return [
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
      ].map((tool) => call(tool, {}, "--accept-form-defaults"));
    case "http-standard-headers":
      // A tool call, a resource read and a prompt: each request carries its headers.
      return [
        call("test_headers"),
        {
          args: ["resources", "--json"],
          then: (stdout) =>
            (JSON.parse(stdout) as { resources: { uri: string }[] }).resources.slice(0, 1)
              .map((r) => ({ args: ["read", r.uri, "--server", SERVER] })),
        },
        {
          args: ["prompts", "--json"],
          then: (stdout) =>
            (JSON.parse(stdout) as { prompts: { name: string }[] }).prompts.slice(0, 1)
              .map((p) => ({ args: ["prompt", `${SERVER}.${p.name}`] })),
        },
      ];
    case "http-invalid-tool-headers":
      // Every tool patchbay offers is called: a tool with a malformed header declaration
      // must not be among them.
      return [{
        ...toolsJson,
        then: (stdout) => listedTools(stdout).map((t) => call(t.tool)),
      }];
    case "json-schema-2020-12-preservation":
      // The schema the model would see goes back to the server as it was listed.
      return [{
        ...toolsJson,
        then: (stdout) => {
          const focal = listedTools(stdout).find((t) => t.tool === "json_schema_2020_12_tool");
          if (!focal) throw new Error("patchbay did not list json_schema_2020_12_tool");
          return [call("json_schema_echo", { schema: focal.input_schema })];
        },
      }];
  }
  if (scenario.startsWith("auth/")) {
    return [{ ...call("test-tool"), refuses: REFUSALS.has(scenario) }];
  }
  if (scenario === "sep-2640-client-no-prefetch") {
    // Listing (and looking at what is listed) fetches no skill file.
    return [{ args: ["skills", "list", "--json"] }, { args: ["skills", "list"] }];
  }
  if (scenario.startsWith("sep-2640-client-verify-")) {
    // The server tampers with SKILL.md: patchbay must refuse the skill (exit 1), and so
    // never go on to read its other files.
    return [{ args: ["skills", "show", `${SERVER}:pdf-processing`], refuses: true }];
  }
  throw new Error(`no steps known for scenario '${scenario}'`);
}

/** Scenarios of the client_credentials grant (no browser). */
const CLIENT_CREDENTIALS = new Set([
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
]);

/** Scenarios whose MCP server takes DPoP-bound tokens. */
const DPOP = new Set(["auth/dpop", "auth/dpop-nonce"]);

/** The file a `private_key_jwt` scenario's key is written to, in the scenario's HOME. */
const KEY_FILE = "client-key.pem";

/**
 * The files the organisation sign-ins read their token from, as a workload's platform
 * (a Kubernetes projected token) or a single sign-on tool would write them.
 */
const WORKLOAD_JWT_FILE = "workload.jwt";
const ID_TOKEN_FILE = "id-token.jwt";

/** The `auth` fields of the organisation sign-in scenarios. */
function organisationGrant(scenario: string, context: Context): Record<string, unknown> {
  if (scenario === "auth/wif-jwt-bearer") {
    return { grant: "jwt_bearer", assertion_file: WORKLOAD_JWT_FILE };
  }
  if (scenario === "auth/enterprise-managed-authorization") {
    return {
      grant: "token_exchange",
      idp: {
        issuer: context.idp_issuer,
        token_endpoint: context.idp_token_endpoint,
        client_id: context.idp_client_id,
        subject_token_file: ID_TOKEN_FILE,
      },
    };
  }
  return {};
}

/**
 * The server entry for the scenario, as a person would write it: a private key goes in a
 * file beside servers_config.json (`private_key_file`), owner-readable only.
 */
function serverEntry(url: string, scenario: string, context: Context): Record<string, unknown> {
  const entry: Record<string, unknown> = { transport_type: "streamable_http", url };
  if (scenario.startsWith("auth/")) {
    entry.auth = {
      method: "oauth",
      ...(CLIENT_CREDENTIALS.has(scenario) ? { grant: "client_credentials" } : {}),
      ...organisationGrant(scenario, context),
      ...(context.client_id ? { client_id: context.client_id } : {}),
      ...(context.client_secret ? { client_secret: context.client_secret } : {}),
      ...(context.private_key_pem
        ? { private_key_file: KEY_FILE, private_key_alg: context.signing_algorithm ?? "ES256" }
        : {}),
      ...(DPOP.has(scenario) ? { dpop: true } : {}),
      ...(scenario === "auth/basic-cimd" ? { client_metadata_url: CIMD_URL } : {}),
    };
  }
  return entry;
}

async function runPatchbay(
  home: string,
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string }> {
  console.error(`$ patchbay ${args.join(" ")}`);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", join(PROJECT, "deno.json"), "start", "--debug", ...args],
    cwd: join(home, "work"),
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const { code, stdout } = await child.output();
  const text = new TextDecoder().decode(stdout);
  // The suite keeps the client's output with its results.
  console.log(text);
  return { code, stdout: text };
}

async function main(): Promise<number> {
  const url = Deno.args.at(-1);
  const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO");
  if (!url || !scenario) {
    console.error("usage: MCP_CONFORMANCE_SCENARIO=<name> conformance_client.ts <server-url>");
    return 2;
  }
  const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") || "{}") as Context;
  const home = await Deno.makeTempDir({ prefix: "patchbay-conformance-" });
  try {
    await Deno.mkdir(join(home, "work"));
    const config = {
      LLM: { provider: "openai-compatible", model: "none", base_url: "http://127.0.0.1:9/v1" },
      mcpServers: { [SERVER]: serverEntry(url, scenario, context) },
    };
    const files: [string, string | undefined][] = [
      [KEY_FILE, context.private_key_pem],
      [WORKLOAD_JWT_FILE, scenario === "auth/wif-jwt-bearer" ? context.valid_jwt : undefined],
      [ID_TOKEN_FILE, context.idp_id_token],
    ];
    for (const [name, text] of files) {
      if (text) await Deno.writeTextFile(join(home, "work", name), text, { mode: 0o600 });
    }
    await Deno.writeTextFile(
      join(home, "work", "servers_config.json"),
      JSON.stringify(config, null, 2),
    );
    const env: Record<string, string> = {
      HOME: home,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      // A fresh HOME must not mean a fresh npm cache (~70 MB per run).
      DENO_DIR: Deno.env.get("DENO_DIR") ??
        join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME")!, ".cache"), "deno"),
      ...certificateEnv(),
      NO_COLOR: "1",
      TERM: "dumb",
      BROWSER: `${Deno.execPath()} run --allow-net ${
        join(PROJECT, "tests", "support", "fake_browser_cli.ts")
      }`,
    };
    const pending = stepsFor(scenario, context);
    while (pending.length > 0) {
      const step = pending.shift()!;
      const { code, stdout } = await runPatchbay(home, env, step.args);
      const expected = step.refuses ? 1 : 0;
      if (code !== expected) {
        console.error(`patchbay exited ${code}, expected ${expected}`);
        return 1;
      }
      if (step.then) pending.unshift(...step.then(stdout));
    }
    return 0;
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
