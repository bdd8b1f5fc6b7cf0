/**
 * The approval question shows what a call will do before it is answered ("v" shows the
 * whole call when its arguments are cut), and "[p]roject: always" remembers an answer
 * beyond the session, listed and revoked by `patchbay approvals`. Driven in tmux through
 * `deno task start`, with server-everything and the scripted model.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalPolicy } from "../../lib/agent/approval.ts";
import { ApprovalStore } from "../../lib/agent/approval_store.ts";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { DENO } from "../support/deps.ts";
import { FIXTURE_SERVER } from "../support/servers.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("approval: cut arguments are said to be hidden and v shows the whole call; p remembers it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const padding = "harmless ".repeat(60);
  {
    await using repl = await startRepl(box);
    llm.enqueue(
      { toolCalls: [{ name: "everything__echo", arguments: { message: `${padding}rm -rf ~` } }] },
      { text: "Echoed." },
    );
    const asked = await repl.send("echo this", "(default No)");
    assert.match(asked, /\d+ more characters of the arguments are hidden: press v to see/);
    assert.ok(!asked.includes("rm -rf ~"), asked);
    assert.match(asked, /\[p\]roject: always/);
    const shown = await repl.expectNext(() => repl.tmux.press("v"), "(default No)");
    assert.match(shown, /The whole call of everything › echo:/);
    assert.match(shown, /harmless rm -rf ~"/);
    await repl.expectNext(() => repl.tmux.press("p"), /Echoed\.\n.*steps? · .*\n›/);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }

  const file = join(box.home, ".local/state/patchbay/approvals.json");
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const listed = await runPatchbay(box, ["approvals", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const [remembered] = JSON.parse(listed.stdout).approvals;
  assert.deepEqual([remembered.server, remembered.tool], ["everything", "echo"]);
  assert.equal(remembered.folder, await Deno.realPath(box.cwd));
  const elsewhere = await runPatchbay(box, ["approvals"], { cwd: box.home });
  assert.match(elsewhere.stdout, /No remembered approvals for /);
  const everywhere = await runPatchbay(box, ["approvals", "list", "--all"], { cwd: box.home });
  assert.match(everywhere.stdout, new RegExp(`${remembered.id}\\s+everything/echo`));

  {
    // A new session in the same folder runs the tool without asking.
    await using repl = await startRepl(box);
    llm.enqueue(
      { toolCalls: [{ name: "everything__echo", arguments: { message: "again" } }] },
      { text: "Echoed again." },
    );
    const turn = await repl.send("echo again", /Echoed again\.\n.*steps? · .*\n›/);
    assert.ok(!turn.includes("(default No)"), turn);
    assert.match(turn, /Echo: again/);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }

  // It holds for one-shot runs too, where nobody could be asked.
  llm.enqueue(
    { toolCalls: [{ name: "everything__echo", arguments: { message: "scripted" } }] },
    { text: "Ran." },
  );
  const scripted = await runPatchbay(box, ["run", "--json", "echo scripted"], {
    env: { LLM_API_KEY: "test-key" },
  });
  assert.equal(scripted.code, 0, scripted.stderr);
  const result = scripted.stdout.trim().split("\n").map((line) => JSON.parse(line))
    .find((event) => event.type === "tool_result");
  assert.equal(result.status, "ok");

  const unknown = await runPatchbay(box, ["approvals", "revoke", "nothing/here"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No remembered approval matches 'nothing\/here'/);
  assert.match(unknown.stderr, new RegExp(`${remembered.id} everything/echo`));
  const revoked = await runPatchbay(box, ["approvals", "revoke", "everything/echo"]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, /Revoked [0-9a-f]{8}: everything\/echo/);
  const after = await runPatchbay(box, ["approvals"]);
  assert.match(after.stdout, /No remembered approvals for /);
});

Deno.test("a remembered approval ends when the tool's definition changes: asked again, saying why", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const withDescription = (description: string) => ({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      fx: {
        command: DENO,
        args: ["run", "--quiet", FIXTURE_SERVER, `--echo-description=${description}`],
      },
    },
  });
  const echo = { toolCalls: [{ name: "fx__echo", arguments: { message: "hi" } }] };
  const settled = /Done\.\n.*steps? · .*\n›/;
  await writeConfig(box, withDescription("Echoes the message"));
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    await repl.send("echo", "(default No)");
    await repl.expectNext(() => repl.tmux.press("p"), settled);
    llm.enqueue(echo, { text: "Done." });
    const again = await repl.send("echo", settled);
    assert.ok(!again.includes("(default No)"), again);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  await writeConfig(box, withDescription("Echoes the message, then deletes your files"));
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    const asked = await repl.send("echo", "(default No)");
    assert.match(asked, /Run fx › echo \(its definition changed since you approved it\)/);
    await repl.expectNext(() => repl.tmux.press("n"), settled);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
});

Deno.test("a remembered approval ends when the server's entry starts another program with the same tool", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  // The fixture ignores --tag: the second program offers exactly the approved definition.
  const withArgs = (...extra: string[]) => ({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { fx: { command: DENO, args: ["run", "--quiet", FIXTURE_SERVER, ...extra] } },
  });
  const echo = { toolCalls: [{ name: "fx__echo", arguments: { message: "hi" } }] };
  const settled = /Done\.\n.*steps? · .*\n›/;
  await writeConfig(box, withArgs());
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    await repl.send("echo", "(default No)");
    await repl.expectNext(() => repl.tmux.press("p"), settled);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  {
    // The same entry: not asked.
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    const again = await repl.send("echo", settled);
    assert.ok(!again.includes("(default No)"), again);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  await writeConfig(box, withArgs("--tag=another-program"));
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    const asked = await repl.send("echo", "(default No)");
    assert.match(
      asked,
      /Run fx › echo \(its server's arguments changed since you approved it\)/,
    );
    await repl.expectNext(() => repl.tmux.press("n"), settled);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
});

Deno.test("a remembered approval ends when the server's env changes (NODE_OPTIONS): asked again, saying so", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const withEnv = (env: Record<string, string>) => ({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { fx: { command: DENO, args: ["run", "--quiet", FIXTURE_SERVER], env } },
  });
  const echo = { toolCalls: [{ name: "fx__echo", arguments: { message: "hi" } }] };
  const settled = /Done\.\n.*steps? · .*\n›/;
  const runEcho = async () => {
    llm.enqueue(echo, { text: "Done." });
    const run = await runPatchbay(box, ["run", "--json", "echo"], {
      env: { LLM_API_KEY: "test-key" },
    });
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    return { run, status: events.find((e) => e.type === "tool_result")?.status };
  };
  await writeConfig(box, withEnv({ LOG_LEVEL: "info" }));
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    await repl.send("echo", "(default No)");
    await repl.expectNext(() => repl.tmux.press("p"), settled);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  assert.equal((await runEcho()).status, "ok", "the same entry runs as approved");
  // The hostile edit: code injected through the environment (Deno, like Node, loads what
  // NODE_OPTIONS --require names), the command and its arguments left alone.
  const inject = join(box.cwd, "inject.js");
  await Deno.writeTextFile(inject, "globalThis.injected = true;\n");
  await writeConfig(box, withEnv({ LOG_LEVEL: "info", NODE_OPTIONS: `--require ${inject}` }));
  assert.equal((await runEcho()).status, "declined", "no longer approved");
  {
    await using repl = await startRepl(box);
    llm.enqueue(echo, { text: "Done." });
    const asked = await repl.send("echo", "(default No)");
    assert.match(
      asked,
      /Run fx › echo \(its server's environment changed since you approved it\)/,
    );
    await repl.expectNext(() => repl.tmux.press("n"), settled);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  // Back as approved, but approvals.json made world-writable: it is refused, not honoured.
  await writeConfig(box, withEnv({ LOG_LEVEL: "info" }));
  await Deno.chmod(join(box.home, ".local/state/patchbay/approvals.json"), 0o666);
  const refused = await runEcho();
  assert.equal(refused.status, "declined");
  assert.match(
    refused.run.stderr,
    /Refusing to use the approvals file .*: other users may write it/,
  );
});

Deno.test("/refresh pointing a server's entry at another program: its 'always' tools are asked again", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const withArgs = (...extra: string[]) => ({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { fx: { command: DENO, args: ["run", "--quiet", FIXTURE_SERVER, ...extra] } },
  });
  const echo = { toolCalls: [{ name: "fx__echo", arguments: { message: "hi" } }] };
  const settled = /Done\.\n.*steps? · .*\n›/;
  await writeConfig(box, withArgs());
  await using repl = await startRepl(box);
  llm.enqueue(echo, { text: "Done." });
  await repl.send("echo", "(default No)");
  await repl.expectNext(() => repl.tmux.press("a"), settled);
  await writeConfig(box, withArgs("--tag=another-program"));
  await repl.send("/refresh", /fx.*(?:restarted|changed|connected)[\s\S]*›\s*$/);
  llm.enqueue(echo, { text: "Done." });
  const asked = await repl.send("echo", "(default No)");
  assert.match(
    asked,
    /Run fx › echo \(its server's arguments changed since you approved it\)/,
  );
  await repl.expectNext(() => repl.tmux.press("n"), settled);
  await repl.tmux.press("C-d");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test('/refresh taking "trusted" and "sampling": "allow" away: calls and sampling are asked at once', async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const entry = (extra: Record<string, unknown>) => ({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { fx: { command: DENO, args: ["run", "--quiet", FIXTURE_SERVER], ...extra } },
  });
  const settled = (text: string) => new RegExp(`${text}\\n.*steps? · .*\\n›`);
  await writeConfig(box, entry({ trusted: true, sampling: "allow" }));
  await using repl = await startRepl(box);
  llm.enqueue(
    { toolCalls: [{ name: "fx__sample", arguments: {} }] },
    { text: "Blue." },
    { text: "Trusted." },
  );
  const trusted = await repl.send("sample", settled("Trusted\\."));
  assert.ok(!trusted.includes("(default No)"), trusted);

  await writeConfig(box, entry({}));
  await repl.send("/refresh", /fx.*(?:restarted|changed|connected)[\s\S]*›\s*$/);
  llm.enqueue(
    { toolCalls: [{ name: "fx__sample", arguments: {} }] },
    { text: "Blue." },
    { text: "Asked." },
  );
  await repl.send("sample", /Run fx › sample\n(?:.*\n)*.*\(default No\)$/);
  await repl.expectNext(
    () => repl.tmux.press("y"),
    /Server fx asks the model[\s\S]*\(default No\)$/,
  );
  await repl.expectNext(() => repl.tmux.press("y"), settled("Asked\\."));
  await repl.tmux.press("C-d");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("a remembered approval covers the definition approved: a changed tool is asked again", async () => {
  await using dir = await tempDir();
  const store = new ApprovalStore(join(dir.path, "approvals.json"));
  const tool: CatalogueTool = {
    name: "fs__write",
    server: "fs",
    originalName: "write",
    description: "Writes a file",
    inputSchema: { type: "object" },
  };
  const first = new ApprovalPolicy([], { folder: "/p", approvals: [], store });
  assert.equal(first.check(tool), "not-approved");
  first.record("always-project", tool, [tool]);
  assert.equal(first.check(tool), undefined);
  await first.flush();
  const approvals = await store.list();
  assert.equal(approvals.length, 1);
  const next = new ApprovalPolicy([], { folder: "/p", approvals, store });
  assert.equal(next.check(tool), undefined);
  assert.equal(next.check({ ...tool, description: "Deletes every file" }), "changed");
  assert.equal(next.check({ ...tool, originalName: "other", name: "fs__other" }), "not-approved");
  const other = new ApprovalPolicy([], { folder: "/q", approvals: [], store });
  assert.equal(other.check(tool), "not-approved");

  // The same name and definition from another program (the entry now starts something
  // else): asked again, and said why; the same program again: not asked.
  const entry = { name: "fs", trusted: false, transport: "stdio", command: "fs-server", args: [] };
  const approving = new ApprovalPolicy([entry], { folder: "/r", approvals: [], store });
  approving.record("always-project", tool, [tool]);
  await approving.flush();
  const remembered = (await store.list()).filter((a) => a.folder === "/r");
  const same = new ApprovalPolicy([entry], { folder: "/r", approvals: remembered, store });
  assert.equal(same.check(tool), undefined);
  const swapped = new ApprovalPolicy([{ ...entry, command: "other-server" }], {
    folder: "/r",
    approvals: remembered,
    store,
  });
  assert.equal(swapped.check(tool), "server-changed");
  assert.equal(
    new ApprovalPolicy([{ ...entry, args: ["--root", "/"] }], {
      folder: "/r",
      approvals: remembered,
      store,
    }).check(tool),
    "server-changed",
  );
  // Within a session too: "always" for a tool is not carried to the same tool of a server
  // entry that starts another program.
  const session = new ApprovalPolicy([entry, { ...entry, name: "fs2", command: "x" }]);
  session.record("always-tool", tool, [tool]);
  assert.equal(session.check(tool), undefined);
  assert.equal(session.check({ ...tool, server: "fs2", name: "fs2__write" }), "not-approved");

  await Deno.writeTextFile(store.path, "{ not json");
  await assert.rejects(() => store.list(), /Cannot read the remembered approvals in/);
  await assert.rejects(
    () => store.revoke(() => true),
    (error: Error & { remedy?: string }) => /fix or delete/.test(error.remedy ?? ""),
  );
  assert.equal(await Deno.readTextFile(store.path), "{ not json");
});
