/**
 * A request's one deadline (`lib/connections/request_deadline.ts`), driven directly on real
 * sessions: the stdio fixture server (its `slow` tool honours cancellation and says so on
 * stderr, `hang` never answers) and the HTTP fixture server. The bound is the request's
 * own (a tool call's `AgentConfig.tool_call_timeout`) or the server's `timeout`; the time
 * the server waits on us is left out; a timeout on a network session sets off a ping, and
 * a server that went away is diagnosed as the session's loss.
 */

import assert from "node:assert/strict";
import type { RequestOptions } from "@modelcontextprotocol/client";
import {
  CancelledError,
  ServerConnectError,
  TimeoutError,
  ToolTimeoutError,
} from "../../lib/errors.ts";
import { requestWithDeadline } from "../../lib/connections/request_deadline.ts";
import type { ServerSession } from "../../lib/connections/session/server_session.ts";
import { startHttpFixture } from "../fixtures/http_server.ts";
import { openLiveSession } from "../support/live_session.ts";
import { eventually, fixtureEntry, httpEntry } from "../support/servers.ts";

/** `tools/call` of `name` with `args`, as the connection manager runs it. */
const callTool =
  (name: string, args: Record<string, unknown> = {}) =>
  (session: ServerSession, request: RequestOptions) =>
    session.client.callTool({ name, arguments: args }, request);

Deno.test("a tool call ends at its own bound (tool_call_timeout), is cancelled on the server, and names the tool", async () => {
  // The server's own timeout is far longer: the tool call's bound is the one that counts.
  await using live = await openLiveSession(fixtureEntry("slow", [], { timeoutSeconds: 600 }));
  await assert.rejects(
    () =>
      requestWithDeadline(
        live.host,
        live.session,
        "tools/call slow",
        callTool("slow", { steps: 50 }),
        { timeoutSeconds: 0.3, tool: "slow__slow" },
      ),
    (error) =>
      error instanceof ToolTimeoutError &&
      error.message === "Tool timeout: slow__slow did not finish within 0.3 s",
  );
  await eventually(
    () => live.log.matching(/cancelled request/).length === 1,
    "the server saw notifications/cancelled",
  );
});

Deno.test("without a bound of its own, a request runs under the server's timeout and says which request", async () => {
  await using live = await openLiveSession(fixtureEntry("slow", [], { timeoutSeconds: 0.3 }));
  await assert.rejects(
    () => requestWithDeadline(live.host, live.session, "tools/call hang", callTool("hang")),
    (error) =>
      error instanceof TimeoutError && error.message === "Request timeout" &&
      error.reason === "server 'slow' did not answer tools/call hang within 0.3 s",
  );
});

Deno.test("the time the server waits on us is left out of the deadline; progress does not extend it", async () => {
  await using live = await openLiveSession(fixtureEntry("slow", [], { timeoutSeconds: 600 }));
  // Six steps of 100 ms under a bound of 0.3 s: while the server waits on us (a form, a
  // sampling answer) the deadline stands still, so the call completes.
  const waiting = live.clock.begin();
  const result = await requestWithDeadline(
    live.host,
    live.session,
    "tools/call slow",
    callTool("slow", { steps: 6 }),
    { timeoutSeconds: 0.3, tool: "slow__slow" },
  );
  waiting();
  assert.equal(result.isError, undefined, JSON.stringify(result));
  // The same call with nothing to leave out ends at the bound, its progress notwithstanding.
  const progress: number[] = [];
  await assert.rejects(
    () =>
      requestWithDeadline(
        live.host,
        live.session,
        "tools/call slow",
        callTool("slow", { steps: 6 }),
        { timeoutSeconds: 0.3, tool: "slow__slow", onProgress: (p) => progress.push(p.progress) },
      ),
    ToolTimeoutError,
  );
  assert.ok(progress.length >= 1, `progress seen: ${progress.join(", ")}`);
});

Deno.test("the caller's signal cancels: at once when already aborted (nothing is sent), and mid-call", async () => {
  await using live = await openLiveSession(fixtureEntry("slow", [], { timeoutSeconds: 600 }));
  let sent = 0;
  const counted = (session: ServerSession, request: RequestOptions) => {
    sent++;
    return callTool("slow", { steps: 50 })(session, request);
  };
  await assert.rejects(
    () =>
      requestWithDeadline(live.host, live.session, "tools/call slow", counted, {
        signal: AbortSignal.abort(),
      }),
    (error) =>
      error instanceof CancelledError && error.message.includes("tools/call slow on server 'slow'"),
  );
  assert.equal(sent, 0);

  const controller = new AbortController();
  await assert.rejects(
    () =>
      requestWithDeadline(live.host, live.session, "tools/call slow", counted, {
        signal: controller.signal,
        onProgress: () => controller.abort(),
      }),
    CancelledError,
  );
  assert.equal(sent, 1);
  await eventually(
    () => live.log.matching(/cancelled request/).length === 1,
    "the server saw notifications/cancelled",
  );
});

Deno.test("a request that times out on a network session sets off one ping", async () => {
  // The server stopped answering tool calls; its socket is open and it answers pings.
  await using fixture = startHttpFixture({ unanswered: ["tools/call"] });
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { timeoutSeconds: 600, pingIntervalSeconds: 0 }),
  );
  await assert.rejects(
    () =>
      requestWithDeadline(
        live.host,
        live.session,
        "tools/call echo",
        callTool("echo", { message: "hi" }),
        { timeoutSeconds: 0.3, tool: "web__echo" },
      ),
    ToolTimeoutError,
  );
  await eventually(() => fixture.rpcMethods().includes("ping"), "a ping after the timeout");
  assert.deepEqual(
    live.log.matching(/checking the connection/).map((line) => line.message),
    ["checking the connection: tools/call echo got no answer within 0.3 s"],
  );
  assert.deepEqual(live.losses, [], "the ping was answered: the session is kept");
});

Deno.test("a request that cannot reach its network server is the session's loss, diagnosed", async () => {
  const fixture = startHttpFixture();
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { timeoutSeconds: 600, pingIntervalSeconds: 0 }),
  );
  await fixture[Symbol.asyncDispose]();
  const failure = await requestWithDeadline(
    live.host,
    live.session,
    "tools/call echo",
    callTool("echo", { message: "hi" }),
    { tool: "web__echo" },
  ).then(() => undefined, (error) => error);
  assert.ok(failure instanceof ServerConnectError, String(failure));
  assert.match(failure.reason, /Connection refused/);
  assert.doesNotMatch(failure.reason, /fetch failed/);
  assert.deepEqual(live.losses, [failure], "the loss, once, with the diagnosis");
  assert.equal(live.liveness.lossOf(live.session), failure);
});
