/**
 * Messages nested too deep, from a real hostile server over stdio: a tool whose input
 * schema nests 2,000 objects deep used to fail its whole server with a raw
 * `RangeError: Maximum call stack size exceeded` (the SDK's validation) and a remedy
 * about checking that the command is an MCP server. Now that one tool is left out, with a
 * warning naming server and tool, and the server's other tools work.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DepthGuard, jsonDepth, MAX_MESSAGE_DEPTH } from "../../lib/transports/depth.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { RecordingLog } from "../support/servers.ts";

const HOSTILE = fileURLToPath(new URL("../fixtures/hostile_server.ts", import.meta.url));
const logOf = (home: string) => join(home, ".local", "state", "patchbay", "patchbay.log");

function hostile(...flags: string[]) {
  return { command: DENO, args: ["run", "--quiet", "--no-config", HOSTILE, ...flags] };
}

Deno.test("a tool schema nested 2,000 deep is left out with a warning; the server's other tools work", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({ h: hostile("--deep-schema=2000") }));
  const tools = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.doesNotMatch(tools.stderr + tools.stdout, /RangeError|Maximum call stack/);
  const listed = JSON.parse(tools.stdout) as {
    servers: { state: string }[];
    tools: { tool: string }[];
  };
  assert.equal(listed.servers[0].state, "connected");
  assert.deepEqual(listed.tools.map((t) => t.tool), ["echo", "say", "nest"]);
  const log = await Deno.readTextFile(logOf(box.home));
  assert.match(
    log,
    /WARN {2}\[connections:server:h:log\] patchbay left out this server's tool 'deep': its definition nests 4002 levels deep \(patchbay accepts 125\); the server's authors can flatten its input schema/,
  );
  const call = await runPatchbay(box, ["call", "h.echo", '{"message": "still here"}']);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(call.stdout.trim(), "still here");
});

Deno.test("in a session the warning is on the screen, naming server and tool", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { h: hostile("--deep-schema=2000") },
  });
  await using repl = await startRepl(box);
  // At start-up the warning goes to the log (the screen shows the status block); once
  // the session runs, a server's warnings are shown, this one included.
  await repl.send("/refresh", /\[h\] warning: patchbay left out this server's tool 'deep'/, 30_000);
  const tools = await repl.send("/tools", /say/);
  assert.doesNotMatch(tools, /deep/);
});

Deno.test("an answer nested too deep fails that call with the reason, not a crash", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({ h: hostile() }));
  const deep = await runPatchbay(box, ["call", "h.nest", '{"depth": 5000}']);
  assert.equal(deep.code, 1);
  assert.match(
    deep.stderr,
    /patchbay refused the server's answer: it nests 500\d levels deep \(patchbay accepts 128\)/,
  );
  assert.doesNotMatch(deep.stderr, /RangeError|Maximum call stack/);
  const fine = await runPatchbay(box, ["call", "h.nest", '{"depth": 50}']);
  assert.equal(fine.code, 0, fine.stderr);
});

Deno.test("requests and notifications nested too deep are refused or dropped, and logged", () => {
  const log = new RecordingLog();
  const replies: unknown[] = [];
  const guard = new DepthGuard({ log, reply: (m) => Promise.resolve(void replies.push(m)) });
  let nested: Record<string, unknown> = {};
  for (let i = 0; i < MAX_MESSAGE_DEPTH; i++) nested = { a: nested };
  const request = {
    jsonrpc: "2.0" as const,
    id: 7,
    method: "sampling/createMessage",
    params: nested,
  };
  assert.deepEqual(guard.received(request), []);
  assert.deepEqual(replies, [{
    jsonrpc: "2.0",
    id: 7,
    error: {
      code: -32600,
      message: `the request nests ${
        MAX_MESSAGE_DEPTH + 2
      } levels deep (patchbay accepts ${MAX_MESSAGE_DEPTH})`,
    },
  }]);
  assert.deepEqual(
    guard.received({ jsonrpc: "2.0", method: "notifications/progress", params: nested }),
    [],
  );
  assert.equal(log.matching(/notifications\/progress nests 130 levels deep .*dropped/).length, 1);
  const shallow = { jsonrpc: "2.0" as const, method: "notifications/progress", params: {} };
  assert.deepEqual(guard.received(shallow), [shallow]);
  // Depth is measured without recursion: 100,000 levels do not overflow the stack.
  let huge: unknown[] = [];
  for (let i = 0; i < 100_000; i++) huge = [huge];
  assert.equal(jsonDepth(huge), 100_001);
});
