/**
 * The permission plan of the organisation grants (lib/oauth/grant_needs.ts, through
 * `planPermissions`): the file a token is read from, the command that prints one, the
 * identity provider's hosts.
 */

import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { planPermissions } from "../../lib/permissions/plan.ts";

function planFor(auth: Record<string, unknown>) {
  const env = createEnvironment({ PATH: "/opt/bin" });
  const text = JSON.stringify({
    LLM: { provider: "openai", model: "m" },
    mcpServers: { s: { url: "https://mcp.example.com/mcp", auth: { method: "oauth", ...auth } } },
  });
  return planPermissions({
    config: parseConfig(text, "/work/servers_config.json", env),
    configFile: "/work/servers_config.json",
    envFile: "/work/.env",
    logFile: "/home/ada/.local/state/patchbay/patchbay.log",
    dirs: {
      state: "/home/ada/.local/state/patchbay",
      data: "/home/ada/.local/share/patchbay",
      config: "/home/ada/.config/patchbay",
    },
    env,
    os: "linux",
    configVariables: [],
    resolveCommand: (command) => command.startsWith("missing") ? undefined : `/opt/bin/${command}`,
    cwd: "/work",
  });
}

function granted(plan: ReturnType<typeof planFor>, kind: string, value: string): string {
  const grant = plan.grants.find((g) => g.kind === kind && g.value === value);
  assert.ok(grant, `${kind} ${value} is granted`);
  return grant.why;
}

Deno.test("plan: jwt_bearer reads the assertion file, or runs the command by the file it resolves to", () => {
  const fromFile = planFor({ grant: "jwt_bearer", assertion_file: "/var/run/secrets/tokens/mcp" });
  assert.match(
    granted(fromFile, "read", "/var/run/secrets/tokens/mcp"),
    /the workload's JWT for 's' \(auth\.assertion_file\)/,
  );
  const fromCommand = planFor({ grant: "jwt_bearer", assertion_command: ["gcloud", "auth"] });
  assert.match(granted(fromCommand, "run", "/opt/bin/gcloud"), /prints the workload's JWT/);
  const missing = planFor({ grant: "jwt_bearer", assertion_command: ["missing-helper"] });
  assert.ok(missing.notes.some((n) => n.includes("'missing-helper' (auth.assertion_command)")));
});

Deno.test("plan: token_exchange reaches the identity provider and reads the ID token", () => {
  const plan = planFor({
    grant: "token_exchange",
    client_id: "c",
    idp: {
      issuer: "https://sso.example.com",
      token_endpoint: "https://login.example.net:8443/token",
      client_id: "p",
      subject_token_file: "id.jwt",
    },
  });
  assert.match(granted(plan, "net", "sso.example.com:443"), /identity provider of 's'/);
  assert.match(granted(plan, "net", "login.example.net:8443"), /identity provider of 's'/);
  assert.match(granted(plan, "read", "/work/id.jwt"), /your ID token for 's'/);
  const discovered = planFor({
    grant: "token_exchange",
    client_id: "c",
    idp: { issuer: "https://sso.example.com", client_id: "p", subject_token_file: "id.jwt" },
  });
  assert.ok(discovered.notes.some((n) => n.includes("set auth.idp.token_endpoint")));
});
