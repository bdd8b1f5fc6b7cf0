/**
 * The permission plan under the administrator's policy (docs/policy.md): the client may
 * read the policy's fixed place (it must, to start) and every scope's file, and is granted
 * nothing for a server the policy refuses, whatever the user's or project's file says.
 * The plan through `deno task start` under a real policy: tests/policy/policy_cli_test.ts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ROOT } from "../../commands/_declarations.ts";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { parseLaunchArgs } from "../../lib/permissions/launch_args.ts";
import { fallbackFlags } from "../../lib/permissions/launcher.ts";
import { planPermissions } from "../../lib/permissions/plan.ts";
import { applyPolicy } from "../../lib/policy/apply.ts";
import { parsePolicy } from "../../lib/policy/load.ts";
import { managedFile } from "../../lib/policy/place.ts";

const DIRS = {
  state: "/home/ada/.local/state/patchbay",
  data: "/home/ada/.local/share/patchbay",
  config: "/home/ada/.config/patchbay",
};

Deno.test("plan: the policy's place and every scope's file are read; a refused server gets nothing", () => {
  const env = createEnvironment({ PATH: "/opt/bin:/usr/bin" });
  const text = JSON.stringify({
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      ok: { command: "ok-mcp" },
      fetcher: { command: "curl", args: ["https://evil.example"] },
      remote: { url: "https://evil.example/mcp" },
    },
  });
  const policyFile = managedFile("linux");
  const policy = parsePolicy(
    JSON.stringify({
      denied_servers: [{ command: "curl *" }, { url: "https://evil.example/*" }],
    }),
    policyFile,
  );
  const config = applyPolicy(parseConfig(text, "/work/servers_config.json", env), policy);
  const userFile = `${DIRS.config}/servers_config.json`;
  const plan = planPermissions({
    config,
    configFile: "/work/servers_config.json",
    configFiles: [userFile, "/work/servers_config.json", policyFile],
    envFile: "/work/.env",
    envFiles: [`${DIRS.config}/.env`, "/work/.env"],
    logFile: `${DIRS.state}/patchbay.log`,
    dirs: DIRS,
    env,
    os: "linux",
    configVariables: [],
    resolveCommand: (command) => `/opt/bin/${command}`,
    cwd: "/work",
  });
  const reads = plan.grants.filter((g) => g.kind === "read");
  const policyRead = reads.find((g) => g.value === policyFile);
  assert.ok(policyRead, JSON.stringify(reads));
  assert.match(policyRead.why, /administrator's policy/);
  for (const file of [userFile, `${DIRS.config}/.env`, "/work/.env"]) {
    assert.ok(reads.some((g) => g.value === file), `${file} is not read`);
  }
  const runs = plan.grants.filter((g) => g.kind === "run").map((g) => g.value);
  assert.ok(runs.includes("/opt/bin/ok-mcp"), runs.join(", "));
  assert.ok(!runs.some((r) => r.includes("curl")), `curl granted: ${runs.join(", ")}`);
  const nets = plan.grants.filter((g) => g.kind === "net").map((g) => g.value);
  assert.ok(!nets.some((n) => n.includes("evil.example")), `evil granted: ${nets.join(", ")}`);
  for (const name of ["fetcher", "remote"]) {
    assert.ok(
      plan.notes.some((n) => n.includes(`server '${name}' is refused`) && n.includes(policyFile)),
      plan.notes.join("\n"),
    );
  }
});

Deno.test("launcher: the fallback flags let the client read the policy's place", () => {
  const flags = fallbackFlags(parseLaunchArgs(["config", "check"], ROOT), "/work");
  const read = flags.find((f) => f.startsWith("--allow-read="))!;
  assert.ok(read.slice("--allow-read=".length).split(",").includes(managedFile()), read);
});
