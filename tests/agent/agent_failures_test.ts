/**
 * The agent over the real connection manager when things fail: every kind of tool failure
 * (named alike for the person and the model, each with its own remedy), a UI that cannot
 * print (a real closed pipe) or throws mid-tool, and session limits held against
 * concurrent sampling requests and retried attempts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatError } from "../../commands/_boundary.ts";
import { INTERRUPTED_NOTE } from "../../lib/agent/agent.ts";
import { TOOL_REMEDY } from "../../lib/agent/tool_runner.ts";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import type { ServerConfig } from "../../lib/config/types.ts";
import { LimitReachedError, ToolExecutionError, ToolTimeoutError } from "../../lib/errors.ts";
import {
  assertConsistent,
  buildAgent,
  buildSamplingHandler,
  noTools,
  roles,
  testLimits,
  tokenLimitedAgent,
} from "../support/agent_fixtures.ts";
import { DENO } from "../support/deps.ts";
import { captureAny } from "../support/errors.ts";
import { ScriptedUi } from "../support/scripted_ui.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import {
  eventually,
  fixtureEntry,
  processesWith,
  RecordingLog,
  stdioEntry,
} from "../support/servers.ts";
import { bounded } from "../support/bounded.ts";
import { tempDir } from "../support/temp_dir.ts";

const FAILING_SERVER = fileURLToPath(
  new URL("../fixtures/failing_tools_server.ts", import.meta.url),
);

/** A started connection manager over `servers`; closing it checks no process is left. */
async function managed(servers: ServerConfig[], tag: string) {
  const log = new RecordingLog();
  const manager = new ConnectionManager({
    servers,
    log,
    backoff: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 3 },
  });
  const states = await manager.start();
  assert.ok(states.every((s) => s.state === "connected"), JSON.stringify(states));
  return {
    manager,
    log,
    async [Symbol.asyncDispose]() {
      await manager.close();
      assert.deepEqual(processesWith(tag), [], "no server process is left");
    },
  };
}

const newTag = () => `patchbay-test-${crypto.randomUUID()}`;

function evil(tag: string): ServerConfig {
  return stdioEntry("evil", DENO, [
    "run",
    "--quiet",
    "--no-config",
    FAILING_SERVER,
    `--tag=${tag}`,
  ]);
}

Deno.test("every kind of tool failure names server/tool for both sides, with its own remedy", async () => {
  const tag = newTag();
  await using session = await managed([evil(tag)], tag);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [
          { name: "evil__rpcerr", arguments: {} },
          { name: "evil__fails", arguments: {} },
          { name: "evil__hang", arguments: {} },
        ],
      },
      { toolCalls: [{ name: "evil__crash", arguments: {} }] },
      { toolCalls: [{ name: "evil__teleport", arguments: {} }] },
      { text: "Nothing worked." },
    ],
  });
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host: session.manager,
    trusted: ["evil"],
    limits: { toolCallTimeoutSeconds: 0.5 },
  });
  const result = await f.agent.runTurn("Try everything");
  assert.equal(result.text, "Nothing worked.");

  const ends = f.ui.ofType("toolEnd").map((e) => e.end);
  const toModel = f.stored.filter((m) => m.role === "tool").map((m) => m.content!);
  assert.deepEqual(ends.map((e) => e.status), ["error", "error", "timeout", "error", "error"]);

  // A JSON-RPC error from the server: its words, once prefixed.
  const [rpc, fails, hang, crash, unknown] = ends.map((e) => e.error!);
  assert.ok(rpc instanceof ToolExecutionError);
  assert.equal(rpc.message, "Tool execution failed: evil/rpcerr");
  assert.equal(rpc.reason, "server 'evil' answered with error -32603: database is locked");
  assert.equal(rpc.remedy, TOOL_REMEDY.serverError);
  assert.equal(
    toModel[0],
    "Tool execution failed: evil/rpcerr: server 'evil' answered with error -32603: " +
      "database is locked",
  );

  // An isError result.
  assert.equal(fails.message, "Tool execution failed: evil/fails");
  assert.equal(fails.reason, "server 'evil' reported: quota exceeded for user 42");
  assert.equal(fails.remedy, TOOL_REMEDY.serverError);
  assert.equal(toModel[1], "Tool execution failed: evil/fails: quota exceeded for user 42");

  // The timeout, enforced by the connection layer, reads the same as the agent's own.
  assert.ok(hang instanceof ToolTimeoutError);
  assert.equal(hang.message, "Tool timeout: evil/hang did not finish within 0.5 s");
  assert.equal(hang.remedy, TOOL_REMEDY.timeout(0.5));
  assert.equal(
    toModel[2],
    "Tool timeout: evil/hang did not finish within 0.5 s (AgentConfig.tool_call_timeout) and " +
      "was cancelled.",
  );

  // The server died mid-call.
  assert.equal(crash.message, "Tool execution failed: evil/crash");
  assert.match(
    crash.reason,
    /^Connection closed: server 'evil' went away during tools\/call crash/,
  );
  assert.equal(crash.remedy, TOOL_REMEDY.connectionLost);
  assert.match(crash.remedy, /\/connections.*\/refresh/);
  assert.match(toModel[3], /^Tool execution failed: evil\/crash: Connection closed: /);
  assert.match(toModel[3], /Whether the call took effect is unknown\.$/);

  // A name no server offers.
  assert.equal(unknown.message, "Tool execution failed: evil__teleport");
  assert.equal(unknown.remedy, TOOL_REMEDY.unknownTool);
  assert.match(toModel[4], /^Tool execution failed: there is no tool named "evil__teleport"\./);

  for (const error of [rpc, fails, hang, crash]) {
    const shown = formatError(error);
    assert.doesNotMatch(shown, /evil__/, "the person sees server/tool, not the catalogue name");
    assert.doesNotMatch(shown, /raise AgentConfig\.tool_call_timeout.*\/tools/);
  }
  for (const text of toModel) assert.doesNotMatch(text, /Tool execution failed: Tool execution/);
  for (const text of toModel.slice(0, 4)) assert.doesNotMatch(text, /evil__/);
  assertConsistent(f.stored);
});

/** A UI whose answer goes to a real pipe, as `patchbay run ... | head -c 8` has it. */
class PipedUi extends ScriptedUi {
  readonly thrown: unknown[] = [];
  readonly #pipe: Deno.FsFile;
  constructor(pipe: Deno.FsFile) {
    super();
    this.#pipe = pipe;
  }
  override textDelta(text: string): void {
    super.textDelta(text);
    try {
      this.#pipe.writeSync(new TextEncoder().encode(text));
    } catch (error) {
      this.thrown.push(error);
      throw error;
    }
  }
}

Deno.test("a UI writing to a closed pipe: the turn rejects with that EPIPE, unretried", async () => {
  await using tmp = await tempDir("patchbay-pipe-");
  const dir = tmp.path;
  const fifo = join(dir, "stdout");
  assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
  // `head` reads the first 8 bytes of the answer and exits, closing the pipe.
  const head = new Deno.Command("head", { args: ["-c", "8", fifo], stdout: "piped" }).spawn();
  using pipe = await Deno.open(fifo, { write: true });
  await using llm = await startScriptedLlm({
    replies: [{ text: "A long answer. ".repeat(40), chunkDelayMs: 5 }, { text: "retried" }],
  });
  const ui = new PipedUi(pipe);
  using f = buildAgent({ baseUrl: llm.baseUrl, host: noTools, ui });
  const error = await captureAny(f.agent.runTurn("Hello"));
  const { stdout } = await head.output();

  assert.equal(new TextDecoder().decode(stdout), "A long a");
  assert.ok(error instanceof Deno.errors.BrokenPipe, `got ${error}`);
  assert.equal(error, ui.thrown[0], "the very error the UI threw");
  assert.equal(ui.thrown.length, 1, "nothing was printed after it");
  assert.equal(llm.requests.length, 1, "not retried");
  assert.equal(ui.ofType("retry").length, 0);
  await eventually(() => llm.requests[0].serviceMs !== undefined, "the stream ended");
  assert.equal(llm.requests[0].clientAborted, true, "the stream was abandoned at once");

  const snapshot = f.stats.snapshot();
  assert.equal(snapshot.failedRequests, 0, "not a failed model request");
  assert.equal(snapshot.session.requests, 1);
  assert.equal(snapshot.session.estimatedRequests, 1, "what it cost is estimated");
  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.ok(f.stored[1].content!.endsWith(INTERRUPTED_NOTE));
  assertConsistent(f.stored);
});

Deno.test("a UI failing mid-tool-call: the call is cancelled on the server, the error rethrown", async () => {
  const tag = newTag();
  await using session = await managed([evil(tag)], tag);
  await using llm = await startScriptedLlm({
    replies: [{
      toolCalls: [{ name: "evil__ticks", arguments: {} }, { name: "evil__fails", arguments: {} }],
    }],
  });
  const gone = new Error("the terminal went away");
  const ui = new ScriptedUi({
    onEvent: (event) => {
      if (event.type === "toolProgress") throw gone;
    },
  });
  // The tool's timeout is far beyond the bound below: a turn that ran on to it fails there.
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host: session.manager,
    trusted: ["evil"],
    ui,
    limits: { toolCallTimeoutSeconds: 3600 },
  });
  const error = await bounded(
    captureAny(f.agent.runTurn("Tick")),
    "the turn to end when the UI failed (not at the tool's 3600 s timeout)",
  );

  assert.equal(error, gone);
  assert.equal(llm.requests.length, 1, "the turn stopped");
  await eventually(
    () => session.log.matching(/ticks: cancelled request/).length === 1,
    "the server was told to cancel",
  );
  // Every call has its result; the UI was not called again after it failed.
  assert.deepEqual(roles(f.stored), ["user", "assistant(2 calls)", "tool", "tool"]);
  assertConsistent(f.stored);
  assert.deepEqual(f.ui.ofType("toolProgress").length, 1);
  assert.equal(f.ui.ofType("toolEnd").length, 0);
  assert.equal(f.stats.snapshot().failedRequests, 0);
});

Deno.test("concurrent sampling requests cannot pass request_limit together", async () => {
  const tag = newTag();
  await using session = await managed([
    fixtureEntry("asker", [`--tag=${tag}`], { sampling: "allow" }),
  ], tag);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [
          { name: "asker__sample", arguments: {}, id: "call_a" },
          { name: "asker__sample", arguments: {}, id: "call_b" },
        ],
      },
      // The sampling answer is slow, so both requests are asked while it is under way.
      { text: "sampled", delayMs: 300, usage: { prompt_tokens: 12, completion_tokens: 2 } },
    ],
    fallback: () => ({ text: "a request past the limit" }),
  });
  const limits = testLimits({ requestLimit: 2 });
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host: session.manager,
    trusted: ["asker"],
    limits,
  });
  session.manager.setHandlers({ sampling: buildSamplingHandler(f, { asker: "allow" }, limits) });
  const error = await captureAny(f.agent.runTurn("Sample twice"));

  assert.ok(error instanceof LimitReachedError);
  assert.equal(error.message, "Limit reached: request_limit");
  assert.equal(llm.requests.length, 2, "the chat request and one sampling request");
  const results = f.stored.filter((m) => m.role === "tool").map((m) => m.content!);
  assert.equal(results.filter((r) => r.includes("sampled")).length, 1);
  assert.equal(results.filter((r) => r.includes("Limit reached: request_limit")).length, 1);
  const sampling = f.ui.ofType("samplingEnd").map((e) => e.end.status).sort();
  assert.deepEqual(sampling, ["error", "ok"]);
  assert.deepEqual(f.stats.snapshot().limits[0], {
    name: "request_limit",
    used: 2,
    limit: 2,
    remaining: 0,
  });
  assertConsistent(f.stored);
});

Deno.test("a retry after a cut-off answer must fit in total_tokens_limit too", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      // 750 tokens (within the answer cap) stream before the connection drops: the prompt
      // and they were probably billed, and a retry's prompt no longer fits.
      { text: "word ".repeat(1000), chunkChars: 1000, chunkDelayMs: 20, dropAfterChunks: 4 },
      { text: "the retry, past the limit" },
    ],
  });
  using f = tokenLimitedAgent(llm.baseUrl, 1000);
  const error = await captureAny(f.agent.runTurn("Write a long answer"));

  assert.ok(error instanceof LimitReachedError, `got ${error}`);
  assert.equal(error.message, "Limit reached: total_tokens_limit");
  assert.match(
    error.reason,
    /^the model request failed \(the connection dropped mid-answer\) and was not retried/,
  );
  assert.equal(llm.requests.length, 1, "the retry was not sent");
  const prompt = 1000 - llm.requests[0].body.max_tokens;
  assert.ok(prompt > 50, `the request's prompt was estimated at ${prompt} tokens`);
  const snapshot = f.stats.snapshot();
  assert.equal(snapshot.failedRequests, 1);
  assert.equal(snapshot.session.estimatedRequests, 1, "the cut attempt's cost is counted");
  assert.equal(f.ui.text.length, 3000);
  assert.equal(snapshot.session.totalTokens, prompt + 750, "the prompt and the streamed text");
  assert.ok(snapshot.session.totalTokens <= 1000, `counted ${snapshot.session.totalTokens}`);
  assert.deepEqual(roles(f.stored), ["user"]);
});
