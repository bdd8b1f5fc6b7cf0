/**
 * The agent loop end to end: the scripted model server drives real MCP servers
 * (server-everything and server-filesystem over stdio) through patchbay's connection
 * manager. Each test checks what the user sees (the scripted UI), the usage figures, and the
 * history handed to the memory hook.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { formatError } from "../../commands/_boundary.ts";
import { INTERRUPTED_NOTE } from "../../lib/agent/agent.ts";
import { formatStats } from "../../lib/agent/stats.ts";
import type { ToolHost } from "../../lib/connections/types.ts";
import { estimateTextTokens, TokenEstimator } from "../../lib/llm/tokens.ts";
import { CANCELLED_RESULT, DECLINED_RESULT, TOOL_REMEDY } from "../../lib/agent/tool_runner.ts";
import {
  AuthenticationFailedError,
  CancelledError,
  LimitReachedError,
  PermissionDeniedError,
  ToolDeclinedError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../lib/errors.ts";
import {
  type AgentFixture,
  type AgentFixtureOptions,
  assertConsistent,
  buildAgent,
  connectServers,
  filesystemServer,
  noTools,
  roles,
  tapped,
  type TappedEntry,
  tokenLimitedAgent,
} from "../support/agent_fixtures.ts";
import { capture } from "../support/errors.ts";
import {
  DEFAULT_USAGE,
  reportedUsage,
  type ScriptedLlm,
  startScriptedLlm,
} from "../support/scripted_llm.ts";
import { eventually, everythingStdio } from "../support/servers.ts";
import { bounded } from "../support/bounded.ts";
import { tempDir } from "../support/temp_dir.ts";

/** An agent over `host` that trusts server-everything (its tools run without asking). */
function trustingAgent(
  llm: ScriptedLlm,
  host: ToolHost,
  options: Partial<AgentFixtureOptions> = {},
): AgentFixture {
  return buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything"], ...options });
}

Deno.test("a plain answer streams to the UI and lands in the history with its usage", async () => {
  await using llm = await startScriptedLlm({
    replies: [{
      text: "Paris is the capital of France.",
      usage: { prompt_tokens: 31, completion_tokens: 8 },
    }],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host: noTools });
  const result = await f.agent.runTurn("What is the capital of France?");

  assert.equal(result.text, "Paris is the capital of France.");
  assert.deepEqual(result.usage, reportedUsage(31, 8));
  // The user saw the answer arrive in pieces, then the end of the answer and the usage.
  assert.ok(f.ui.ofType("text").length > 3);
  assert.equal(f.ui.text, "Paris is the capital of France.");
  assert.deepEqual(f.ui.events.slice(-2).map((e) => e.type), ["textDone", "usage"]);
  const usage = f.ui.ofType("usage")[0].report;
  assert.equal(usage.model, "scripted-model");
  assert.deepEqual(usage.session, { requests: 1, totalTokens: 39 });

  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.equal(f.stored[0].content, "What is the capital of France?");
  assert.equal(f.stored[1].content, "Paris is the capital of France.");
  assert.equal(f.stored[1].model, "scripted-model");
  assert.deepEqual(f.agent.history, f.stored);

  const body = llm.requests[0].body;
  assert.equal(body.messages[0].role, "system");
  assert.match(body.messages[0].content, /untrusted/);
  assert.deepEqual(body.messages[1], { role: "user", content: "What is the capital of France?" });
  assert.equal(body.tools, undefined, "no tools offered when no server has any");

  const snapshot = f.stats.snapshot();
  assert.equal(snapshot.session.requests, 1);
  assert.equal(snapshot.session.totalTokens, 39);
  assert.equal(snapshot.byModel["scripted-model"].promptTokens, 31);
});

Deno.test("one tool call: the model calls echo, reads the result, answers", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [{ name: "everything__echo", arguments: { message: "ping" } }],
        usage: { prompt_tokens: 900, completion_tokens: 20 },
      },
      { text: "The server said ping.", usage: { prompt_tokens: 950, completion_tokens: 6 } },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host });
  const result = await f.agent.runTurn("Echo ping");

  assert.equal(result.text, "The server said ping.");
  assert.equal(result.steps, 2);
  assert.equal(result.toolCalls, 1);
  assert.equal(result.usage.totalTokens, 920 + 956);

  const approval = f.ui.ofType("approveTool");
  assert.equal(approval.length, 1, "an untrusted server's tool is asked about");
  assert.equal(approval[0].request.server, "everything");
  assert.equal(approval[0].request.tool, "echo");
  assert.equal(approval[0].request.argsPreview, '{"message":"ping"}');
  const start = f.ui.ofType("toolStart")[0].call;
  assert.equal(start.server, "everything");
  assert.deepEqual(start.args, { message: "ping" });
  const end = f.ui.ofType("toolEnd")[0].end;
  assert.equal(end.status, "ok");
  assert.equal(end.preview, "Echo: ping");
  assert.equal(end.error, undefined);

  assert.deepEqual(roles(f.stored), ["user", "assistant(1 calls)", "tool", "assistant"]);
  const tool = f.stored[2];
  assert.equal(tool.content, "Echo: ping");
  assert.equal(tool.server, "everything");
  assert.equal(tool.tool, "echo");
  assert.equal(tool.toolCallId, f.stored[1].toolCalls![0].id);
  assert.equal(tool.isError, undefined);

  // The second request carries the result, marked as untrusted output of its server.
  const sent = llm.requests[1].body.messages;
  const toolMessage = sent.find((m: { role: string }) => m.role === "tool");
  assert.equal(
    toolMessage.content,
    '<tool_output server="everything" tool="echo" trust="untrusted">\nEcho: ping\n</tool_output>',
  );
  assert.ok(
    llm.requests[0].body.tools.some((t: { function: { name: string } }) =>
      t.function.name === "everything__echo"
    ),
  );
  assert.equal(f.stats.snapshot().tools.everything.calls, 1);
});

Deno.test("tool calls in one step run concurrently across two servers", async () => {
  await using tmp = await tempDir("patchbay-fs-");
  const dir = tmp.path;
  await Deno.writeTextFile(join(dir, "notes.txt"), "alpha\nbeta\n");
  await using host = await connectServers([everythingStdio(), filesystemServer(dir)]);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [
          {
            name: "everything__trigger-long-running-operation",
            arguments: { duration: 0.6, steps: 2 },
          },
          { name: "fs__read_text_file", arguments: { path: join(dir, "notes.txt") } },
          { name: "everything__get-sum", arguments: { a: 2, b: 3 } },
        ],
      },
      { text: "Done." },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything", "fs"] });
  await f.agent.runTurn("Do three things");

  assert.equal(f.ui.ofType("approveTool").length, 0, "trusted servers are not asked about");
  const order = f.ui.events
    .filter((e) => e.type === "toolStart" || e.type === "toolEnd")
    .map((e) => e.type);
  assert.deepEqual(
    order.slice(0, 3),
    ["toolStart", "toolStart", "toolStart"],
    "all three started before any ended",
  );
  const ends = f.ui.ofType("toolEnd");
  assert.ok(ends.every((e) => e.end.status === "ok"));
  // The quick calls finished first, though the slow one was called first.
  assert.equal(ends.at(-1)!.id, f.stored[1].toolCalls![0].id);
  assert.ok(f.ui.ofType("toolProgress").length >= 1, "progress of the long operation was shown");

  // Results are stored in the order of the calls, each with its server.
  assert.deepEqual(roles(f.stored), [
    "user",
    "assistant(3 calls)",
    "tool",
    "tool",
    "tool",
    "assistant",
  ]);
  assertConsistent(f.stored);
  assert.deepEqual(f.stored.slice(2, 5).map((m) => m.server), ["everything", "fs", "everything"]);
  assert.match(f.stored[2].content!, /Long running operation completed/);
  assert.equal(f.stored[3].content, "alpha\nbeta\n");
  assert.match(f.stored[4].content!, /5/);
  const tools = f.stats.snapshot().tools;
  assert.equal(tools.everything.calls, 2);
  assert.equal(tools.fs.calls, 1);
});

Deno.test("a tool error goes back to the model, and the user sees cause and remedy", async () => {
  await using tmp = await tempDir("patchbay-fs-");
  const dir = tmp.path;
  await using host = await connectServers([filesystemServer(dir)]);
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "fs__read_text_file", arguments: { path: "/etc/hostname" } }] },
      { text: "I may not read that file." },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["fs"] });
  const result = await f.agent.runTurn("Read /etc/hostname");

  assert.equal(result.text, "I may not read that file.");
  const end = f.ui.ofType("toolEnd")[0].end;
  assert.equal(end.status, "error");
  assert.ok(end.error instanceof ToolExecutionError);
  assert.equal(end.error.message, "Tool execution failed: fs/read_text_file");
  assert.match(
    end.error.reason,
    /^server 'fs' reported: Access denied - path outside allowed directories/,
  );
  assert.equal(end.error.remedy, TOOL_REMEDY.serverError);
  assert.match(formatError(end.error), /remedy: the cause is the server's own message.*\/debug/);

  const tool = f.stored[2];
  assert.equal(tool.isError, true);
  // Named as the user sees it, with the contract's words once.
  assert.match(tool.content!, /^Tool execution failed: fs\/read_text_file: Access denied/);
  const sent = llm.requests[1].body.messages.find((m: { role: string }) => m.role === "tool");
  assert.match(sent.content, /trust="untrusted">\nTool execution failed: fs\/read_text_file: /);
  assert.equal(f.stats.snapshot().tools.fs.errors, 1);
});

Deno.test("a file the server may not read is reported as Permission denied with the fix", async () => {
  await using tmp = await tempDir("patchbay-fs-");
  const dir = tmp.path;
  const locked = join(dir, "locked.txt");
  await Deno.writeTextFile(locked, "secret");
  await Deno.chmod(locked, 0o000);
  await using host = await connectServers([filesystemServer(dir)]);
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "fs__read_text_file", arguments: { path: locked } }] },
      { text: "The file is not readable." },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["fs"] });
  await f.agent.runTurn("Read locked.txt");

  const end = f.ui.ofType("toolEnd")[0].end;
  assert.equal(end.status, "error");
  assert.ok(
    end.error instanceof PermissionDeniedError,
    `got ${end.error?.name}: ${end.error?.message}`,
  );
  assert.equal(end.error.message, "Permission denied: fs/read_text_file could not access a file");
  assert.match(end.error.reason, /EACCES|permission denied/i);
  assert.match(end.error.remedy, /fix the file's permissions/);
  assert.match(f.stored[2].content!, /^Tool execution failed: .*(EACCES|permission denied)/i);
});

Deno.test("a tool past tool_call_timeout is cancelled and the model told Tool timeout", async () => {
  await using tap = await tapped(everythingStdio());
  await using host = await connectServers([tap.entry]);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [{
          name: "everything__trigger-long-running-operation",
          arguments: { duration: 5, steps: 5 },
        }],
      },
      { text: "The operation took too long." },
    ],
  });
  using f = trustingAgent(llm, host, { limits: { toolCallTimeoutSeconds: 0.5 } });
  const result = await f.agent.runTurn("Run the long operation");

  assert.equal(result.text, "The operation took too long.");
  const end = f.ui.ofType("toolEnd")[0].end;
  assert.equal(end.status, "timeout");
  assert.ok(end.error instanceof ToolTimeoutError);
  assert.match(
    end.error.message,
    /^Tool timeout: everything\/trigger-long-running-operation did not finish within 0.5 s/,
  );
  assert.equal(
    end.error.remedy,
    "raise AgentConfig.tool_call_timeout (now 0.5 s) if the tool is slow; /debug shows how " +
      "far it got",
  );
  // A lower bound only (a loaded machine makes it longer, never shorter): the timer waited
  // its 0.5 s instead of firing at once.
  assert.ok(end.durationMs >= 450, `ended after ${end.durationMs} ms`);

  assert.equal(
    f.stored[2].content,
    "Tool timeout: everything/trigger-long-running-operation did not finish within 0.5 s " +
      "(AgentConfig.tool_call_timeout) and was cancelled.",
  );
  assert.equal(f.stored[2].isError, true);
  const { calls, cancelled } = await cancellations(tap, "trigger-long-running-operation");
  assert.equal(calls.length, 1);
  assert.deepEqual(cancelled, calls, "the MCP request was cancelled on the server");
  assert.equal(f.stats.snapshot().tools.everything.timeouts, 1);
});

Deno.test("max_steps stops a turn that keeps calling tools, history intact", async () => {
  await using host = await connectServers([everythingStdio()]);
  const call = { toolCalls: [{ name: "everything__echo", arguments: { message: "again" } }] };
  await using llm = await startScriptedLlm({ replies: [call, call, call] });
  using f = trustingAgent(llm, host, { limits: { maxSteps: 2 } });
  const error = await capture(f.agent.runTurn("Loop"));

  assert.ok(error instanceof LimitReachedError);
  assert.equal(error.message, "Limit reached: max_steps");
  assert.match(error.reason, /still calling tools after 2 steps/);
  assert.match(error.remedy, /raise max_steps in the AgentConfig section/);
  assert.equal(llm.requests.length, 2);
  assert.deepEqual(roles(f.stored), [
    "user",
    "assistant(1 calls)",
    "tool",
    "assistant(1 calls)",
    "tool",
  ]);
  assertConsistent(f.stored);
});

Deno.test("request_limit stops the turn before the request that would pass it", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [{ toolCalls: [{ name: "everything__echo", arguments: { message: "x" } }] }, {
      text: "never sent",
    }],
  });
  using f = trustingAgent(llm, host, { limits: { requestLimit: 1 } });
  const error = await capture(f.agent.runTurn("Echo x"));

  assert.ok(error instanceof LimitReachedError);
  assert.equal(error.message, "Limit reached: request_limit");
  assert.equal(
    error.reason,
    "this session has made 1 model requests and AgentConfig.request_limit is 1",
  );
  assert.match(
    error.remedy,
    /raise request_limit in the AgentConfig section of servers_config\.json/,
  );
  assert.equal(llm.requests.length, 1);
  assertConsistent(f.stored);
  assert.deepEqual(roles(f.stored), ["user", "assistant(1 calls)", "tool"]);

  // The next turn is refused before the message joins the history.
  const again = await capture(f.agent.runTurn("And again"));
  assert.ok(again instanceof LimitReachedError);
  assert.equal(f.stored.length, 3);
  const limit = f.stats.snapshot().limits.find((l) => l.name === "request_limit")!;
  assert.deepEqual(limit, { name: "request_limit", used: 1, limit: 1, remaining: 0 });
});

Deno.test("past max_context_length, requests leave out old turns, then old steps, never a call without its result; one notice", async () => {
  await using host = await connectServers([everythingStdio()]);
  // Sizes in units of U estimated tokens (4 bytes each: docs/interactive.md). The context
  // holds about 4.6 U of history: the system prompt and server-everything's tool definitions
  // take the rest (about 1,700 tokens), so every request below either fits with room to
  // spare (3.5 U at most) or overflows by far (5 U at least).
  const U = 4000;
  const text = (tag: string, units: number) => `${tag}:`.padEnd(units * U * 4, "x");
  const echo = (tag: string, units: number) => ({
    toolCalls: [{ name: "everything__echo", arguments: { message: text(tag, units) } }],
    usage: null,
  });
  const answer = (tag: string, units: number) => ({
    text: text(tag, units),
    chunkChars: 4000,
    usage: null,
  });
  await using llm = await startScriptedLlm({
    // No usage reported: the estimate stays uncalibrated, so the sizes above hold.
    replies: [
      echo("r1", 0.5),
      answer("a1", 0.5),
      answer("a2", 1),
      echo("r3", 0.25),
      answer("a3", 0.5),
      echo("r4a", 1),
      echo("r4b", 1),
      { text: "Done.", usage: null },
    ],
  });
  using f = trustingAgent(llm, host, { llm: { maxContextLength: 18_500 } });
  const notices: number[] = [];
  for (const turn of ["u1", "u2", "u3", "u4"]) {
    await f.agent.runTurn(text(turn, 1));
    notices.push(f.ui.notices.length);
  }

  // Each request as tags: the user's and the answers' texts, and the echo calls and their
  // results by the message echoed.
  const tag = (s: string) => s.match(/(\w+):x/)![1];
  const sent = llm.requests.map((r) => {
    const [system, ...history] = r.body.messages;
    assert.deepEqual(system, llm.requests[0].body.messages[0], "the system prompt is always sent");
    assert.equal(system.role, "system");
    assertPairs(history);
    return history.map((m: { role: string; content: string; tool_calls?: WireCall[] }) =>
      m.tool_calls
        ? `call ${tag(JSON.parse(m.tool_calls[0].function.arguments).message)}`
        : m.role === "tool"
        ? `result ${tag(m.content)}`
        : tag(m.content)
    );
  });
  assert.deepEqual(sent, [
    ["u1"],
    ["u1", "call r1", "result r1"],
    ["u1", "call r1", "result r1", "a1", "u2"],
    // Turn 3 no longer fits with turn 1: whole old turns go, the oldest first.
    ["u2", "a2", "u3"],
    ["u2", "a2", "u3", "call r3", "result r3"],
    ["u3", "call r3", "result r3", "a3", "u4"],
    ["u4", "call r4a", "result r4a"],
    // The latest turn alone is too long: its older step goes, its question stays.
    ["u4", "call r4b", "result r4b"],
  ]);

  // Said once, when the first messages were left out (turn 3), and never again.
  assert.deepEqual(notices, [0, 0, 1, 1]);
  assert.deepEqual(f.ui.notices, [
    "info: The conversation is longer than LLM.max_context_length (18500 tokens); older " +
    "messages are no longer sent to the model.",
  ]);
  // What is left out of requests stays in the conversation.
  assert.deepEqual(roles(f.stored), [
    ...["user", "assistant(1 calls)", "tool", "assistant"],
    ...["user", "assistant"],
    ...["user", "assistant(1 calls)", "tool", "assistant"],
    ...["user", "assistant(1 calls)", "tool", "assistant(1 calls)", "tool", "assistant"],
  ]);
  assert.deepEqual(f.agent.history, f.stored);
});

Deno.test("total_tokens_limit caps answers and stops before the request that would pass it", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      {
        text: "First answer.",
        usage: { prompt_tokens: 300, completion_tokens: 50 },
        finishReason: "length",
      },
      { text: "never sent" },
    ],
  });
  using f = tokenLimitedAgent(llm.baseUrl, 500);
  await f.agent.runTurn("First question");
  const cap = llm.requests[0].body.max_tokens;
  assert.ok(cap < 500, `the answer was capped to the room left (${cap})`);
  assert.deepEqual(f.ui.notices, [
    "warning: The answer was cut off to stay within AgentConfig.total_tokens_limit; raise the " +
    "limit to let the session go on.",
  ]);

  const error = await capture(f.agent.runTurn("Second question"));
  assert.ok(error instanceof LimitReachedError);
  assert.equal(error.message, "Limit reached: total_tokens_limit");
  assert.match(error.reason, /has used 350 tokens; the next request needs about \d+ more/);
  assert.match(error.reason, /AgentConfig\.total_tokens_limit \(500\)/);
  assert.match(error.remedy, /raise total_tokens_limit/);
  assert.equal(llm.requests.length, 1);
  // A turn refused by a limit leaves no trace in the conversation.
  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.deepEqual(roles(f.agent.history), ["user", "assistant"]);
  const limit = f.stats.snapshot().limits.find((l) => l.name === "total_tokens_limit")!;
  assert.deepEqual(limit, { name: "total_tokens_limit", used: 350, limit: 500, remaining: 150 });
});

Deno.test("401 from the provider ends the turn with Authentication failed", async () => {
  await using llm = await startScriptedLlm({
    replies: [{ status: 401, errorMessage: "Invalid key" }],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host: noTools });
  const error = await capture(f.agent.runTurn("Hello"));

  assert.ok(error instanceof AuthenticationFailedError);
  assert.match(formatError(error), /^error: Authentication failed\n/);
  assert.match(error.reason, /model "scripted-model"/);
  assert.deepEqual(roles(f.stored), ["user"]);
  assert.equal(f.stats.snapshot().failedRequests, 1);
  assert.equal(f.stats.snapshot().session.requests, 0);
});

Deno.test("429 with retry-after: the user is told about the wait, then gets the answer", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      {
        status: 429,
        errorMessage: "Rate limit reached for requests",
        headers: { "retry-after": "1" },
      },
      { text: "Here it is." },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host: noTools });
  const result = await f.agent.runTurn("Hello");

  assert.equal(result.text, "Here it is.");
  const retry = f.ui.ofType("retry")[0].notice;
  assert.equal(retry.delayMs, 1000);
  assert.equal(retry.attempt, 1);
  assert.match(retry.reason, /^HTTP 429 Too Many Requests: Rate limit reached/);
  assert.equal(retry.billable, false, "a refused request costs nothing");
  assert.equal(f.stats.snapshot().retries, 1);
  assert.match(formatStats(f.stats.snapshot()), /Retries: {11}1; failed requests: 0/);

  // The retry carried the whole conversation, and nothing of the refusal was stored.
  assert.equal(llm.requests.length, 2);
  assert.deepEqual(llm.requests[1].body.messages, llm.requests[0].body.messages);
  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.equal(f.stored[0].content, "Hello");
  assert.equal(f.stored[1].content, "Here it is.");
  assert.equal(f.stored[1].toolCalls, undefined);
  assert.deepEqual(f.agent.history, f.stored);
  // One request with its retry, counted as the answer the provider reported.
  const answered = {
    promptTokens: DEFAULT_USAGE.prompt_tokens,
    completionTokens: DEFAULT_USAGE.completion_tokens,
    totalTokens: DEFAULT_USAGE.prompt_tokens + DEFAULT_USAGE.completion_tokens,
  };
  assert.deepEqual(result.usage, { ...answered, estimated: false });
  assert.deepEqual(f.stats.snapshot().session, {
    requests: 1,
    ...answered,
    estimatedRequests: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
});

Deno.test("a dropped stream is retried; the history keeps only the complete answer", async () => {
  await using llm = await startScriptedLlm({
    replies: [{ text: "Partial words that", dropAfterChunks: 3 }, { text: "The full answer." }],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host: noTools });
  const result = await f.agent.runTurn("Hello");

  assert.equal(result.text, "The full answer.");
  const retry = f.ui.ofType("retry")[0].notice;
  assert.equal(retry.discardedPartial, true);
  assert.equal(retry.reason, "the connection dropped mid-answer");
  assert.ok(f.ui.text.startsWith("Part"), "the user saw the cut attempt");
  assert.ok(f.ui.text.endsWith("The full answer."));
  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.equal(f.stored[1].content, "The full answer.");

  // The turn's usage is what the provider reported for the answer; the session also
  // counts what the cut attempt may have cost: its prompt and the text it streamed, both
  // estimated (no usage arrives on a dropped stream), so the totals are marked estimated.
  const answered = {
    promptTokens: DEFAULT_USAGE.prompt_tokens,
    completionTokens: DEFAULT_USAGE.completion_tokens,
    totalTokens: DEFAULT_USAGE.prompt_tokens + DEFAULT_USAGE.completion_tokens,
  };
  assert.deepEqual(result.usage, { ...answered, estimated: false });
  assert.equal(retry.billable, true);
  const cutPrompt = new TokenEstimator().prompt(llm.requests[0].body.messages);
  const cutText = estimateTextTokens(f.ui.text.slice(0, -"The full answer.".length));
  assert.ok(cutText > 0);
  const session = f.stats.snapshot().session;
  assert.deepEqual(session, {
    requests: 1,
    promptTokens: answered.promptTokens + cutPrompt,
    completionTokens: answered.completionTokens + cutText,
    totalTokens: answered.totalTokens + cutPrompt + cutText,
    estimatedRequests: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  const usage = f.ui.ofType("usage");
  assert.equal(usage.length, 1, "one request, whatever its attempts");
  assert.deepEqual(usage[0].report.usage, result.usage);
  assert.deepEqual(usage[0].report.session, { requests: 1, totalTokens: session.totalTokens });
});

Deno.test("aborting mid-stream stops the answer and keeps it, marked, in the history", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { text: "A long answer that the user will interrupt", chunkDelayMs: 100 },
      { text: "Next answer." },
    ],
  });
  const controller = new AbortController();
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host: noTools,
    uiOptions: { onEvent: (_e, ui) => ui.ofType("text").length === 3 && controller.abort() },
  });
  const error = await capture(f.agent.runTurn("Talk", { signal: controller.signal }));

  assert.ok(error instanceof CancelledError);
  assert.equal(f.ui.ofType("textDone").length, 1, "the UI could end the line");
  assert.deepEqual(roles(f.stored), ["user", "assistant"]);
  assert.equal(f.stored[1].content, `${f.ui.text}\n${INTERRUPTED_NOTE}`);
  await waitFor(() => llm.requests[0].serviceMs !== undefined);
  assert.equal(llm.requests[0].clientAborted, true, "the stream was stopped");
  const snapshot = f.stats.snapshot();
  assert.equal(snapshot.session.requests, 1);
  assert.equal(
    snapshot.session.estimatedRequests,
    1,
    "usage of the interrupted request is estimated",
  );

  // The conversation goes on from a consistent state.
  await f.agent.runTurn("Go on");
  assert.equal(llm.requests[1].body.messages.at(-2).content, f.stored[1].content);
});

Deno.test("aborting mid-tool-call cancels the MCP request and records the cancellation", async () => {
  await using tap = await tapped(everythingStdio());
  await using host = await connectServers([tap.entry]);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [
          {
            name: "everything__trigger-long-running-operation",
            // Far longer than the bound below: a turn that waited for it fails there.
            arguments: { duration: 3600, steps: 3600 },
          },
          { name: "everything__echo", arguments: { message: "quick" } },
        ],
      },
      { text: "Understood." },
    ],
  });
  const controller = new AbortController();
  using f = trustingAgent(llm, host, {
    uiOptions: { onEvent: (e) => e.type === "toolProgress" && controller.abort() },
  });
  const error = await bounded(
    capture(f.agent.runTurn("Start it", { signal: controller.signal })),
    "the turn to end at the abort, without waiting for the hour-long tool",
  );

  assert.ok(error instanceof CancelledError);
  const ends = f.ui.ofType("toolEnd").map((e) => e.end.status).sort();
  assert.deepEqual(ends, ["cancelled", "ok"]);
  assert.deepEqual(roles(f.stored), ["user", "assistant(2 calls)", "tool", "tool"]);
  assertConsistent(f.stored);
  assert.equal(f.stored[2].content, CANCELLED_RESULT);
  assert.equal(f.stored[2].isError, true);
  assert.equal(f.stored[3].content, "Echo: quick");
  const { calls, cancelled } = await cancellations(tap, "trigger-long-running-operation");
  assert.equal(calls.length, 1);
  assert.deepEqual(cancelled, calls, "only the long operation was cancelled on the server");
  assert.equal(f.stats.snapshot().tools.everything.cancelled, 1);

  await f.agent.runTurn("Never mind");
  const sent = llm.requests[1].body.messages.filter((m: { role: string }) => m.role === "tool");
  assert.equal(sent.length, 2);
});

Deno.test("aborting while an approval is pending cancels every call of the step", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [{
      toolCalls: [
        { name: "everything__echo", arguments: { message: "a" } },
        { name: "everything__get-sum", arguments: { a: 1, b: 2 } },
      ],
    }],
  });
  const controller = new AbortController();
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host,
    uiOptions: {
      // The user presses Ctrl+C at the first question instead of answering it.
      toolApprovals: () => {
        controller.abort();
        throw new DOMException("The question was withdrawn", "AbortError");
      },
    },
  });
  const error = await capture(f.agent.runTurn("Two calls", { signal: controller.signal }));

  assert.ok(error instanceof CancelledError);
  assert.deepEqual(f.ui.ofType("toolEnd").map((e) => e.end.status), ["cancelled", "cancelled"]);
  assert.deepEqual(roles(f.stored), ["user", "assistant(2 calls)", "tool", "tool"]);
  assertConsistent(f.stored);
  assert.ok(f.stored.slice(2).every((m) => m.content === CANCELLED_RESULT));
});

Deno.test("a declined call is not run; the model is told so", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-env", arguments: {} }] },
      { text: "OK, I will not." },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, uiOptions: { toolApprovals: ["no"] } });
  await f.agent.runTurn("Show the environment");

  const end = f.ui.ofType("toolEnd")[0].end;
  assert.equal(end.status, "declined");
  assert.ok(end.error instanceof ToolDeclinedError);
  assert.equal(end.error.message, "Tool call declined: everything/get-env");
  assert.match(end.error.reason, /^it was not approved: you answered no/);
  assert.match(end.error.remedy, /--yes.*"trusted"/);
  assert.doesNotMatch(formatError(end.error), /Tool execution failed/);
  assert.equal(f.stored[2].content, DECLINED_RESULT);
  assert.equal(f.stats.snapshot().tools.everything.declined, 1);
});

Deno.test("invalid arguments and unknown tools are answered, not run", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [
          { name: "everything__echo", arguments: '{"message": "unterminated' },
          { name: "everything__ecko", arguments: { message: "typo" } },
        ],
      },
      { text: "Let me fix that." },
    ],
  });
  using f = trustingAgent(llm, host);
  await f.agent.runTurn("Echo");

  assert.match(
    f.stored[2].content!,
    /^Tool execution failed: everything\/echo: the arguments are not a JSON object/,
  );
  assert.match(
    f.stored[3].content!,
    /^Tool execution failed: there is no tool named "everything__ecko"\. Did you mean "everything__echo"\?/,
  );
  const ends = f.ui.ofType("toolEnd").map((e) => e.end);
  assert.deepEqual(ends.map((end) => end.status), ["error", "error"]);
  assert.equal(ends[0].error?.message, "Tool execution failed: everything/echo");
  assert.equal(ends[0].error?.remedy, TOOL_REMEDY.invalidArguments);
  assert.equal(ends[1].error?.message, "Tool execution failed: everything__ecko");
  assert.equal(
    ends[1].error?.reason,
    'the model asked for a tool named "everything__ecko", which no connected server offers ' +
      "(closest: everything/echo)",
  );
  assert.equal(ends[1].error?.remedy, TOOL_REMEDY.unknownTool);
  assert.match(ends[1].error!.remedy, /tool list changed.*invented the name.*\/tools/);
  assertConsistent(f.stored);
});

/** A tool call as the model server receives it. */
type WireCall = { id: string; function: { name: string; arguments: string } };

/**
 * Checks a request's messages: each assistant message with tool calls is followed by
 * exactly their results, and no result comes without its call.
 */
function assertPairs(messages: { role: string; tool_calls?: WireCall[]; tool_call_id?: string }[]) {
  for (let i = 0; i < messages.length; i++) {
    const ids = (messages[i].tool_calls ?? []).map((c) => c.id);
    const results = [];
    while (messages[i + 1 + results.length]?.role === "tool") {
      results.push(messages[i + 1 + results.length].tool_call_id);
    }
    if (messages[i].role === "tool") {
      throw new assert.AssertionError({
        message: `result ${messages[i].tool_call_id} without its call`,
      });
    }
    assert.deepEqual(results, ids, "a tool call and its result are sent together");
    i += results.length;
  }
}

/**
 * The ids of the `tools/call` requests for `tool` that patchbay sent the tapped server, and
 * the ids its `notifications/cancelled` named, once one has arrived.
 */
async function cancellations(
  tap: TappedEntry,
  tool: string,
): Promise<{ calls: unknown[]; cancelled: unknown[] }> {
  type Sent = { id?: unknown; method?: string; params?: Record<string, unknown> };
  let sent: Sent[] = [];
  await eventually(async () => {
    sent = await tap.sent() as Sent[];
    return sent.some((m) => m.method === "notifications/cancelled");
  }, "notifications/cancelled reached the server");
  return {
    calls: sent.filter((m) => m.method === "tools/call" && m.params?.name === tool).map((m) =>
      m.id
    ),
    cancelled: sent.filter((m) => m.method === "notifications/cancelled").map((m) =>
      m.params?.requestId
    ),
  };
}

async function waitFor(condition: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
