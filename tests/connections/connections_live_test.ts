/**
 * Connections in motion, against real server-everything processes over
 * streamable HTTP, SSE and stdio, and the HTTP fixture where the test must see the
 * requests: a server that dies while idle is noticed (a dropped stream, a failed
 * request, or the keep-alive ping), diagnosed (never "fetch failed"), restarted with
 * backoff, and usable again once it is back; servers still connecting can be waited for
 * with a bound, and skipped.
 *
 * No wall-clock assertion: intervals are short and every wait is bounded and says what
 * it waited for. The time from a death to the notice is measured by `deno task bench`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import type { HttpServerConfig } from "../../lib/config/types.ts";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import type { ConnectionEvent, ServerStatus } from "../../lib/connections/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import {
  ConfigValidationError,
  ConnectSkippedError,
  ServerConnectError,
  ServerUnavailableError,
} from "../../lib/errors.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startHttpFixture } from "../fixtures/http_server.ts";
import {
  eventually,
  everythingStdio,
  firstText,
  httpEntry,
  processAlive,
  processesWith,
  RecordingLog,
  type RunningServer,
  startEverythingHttp,
  stdioEntry,
} from "../support/servers.ts";

/** Restarts quick enough for a test; the attempts keep their per-transport limit. */
const QUICK = { initialDelayMs: 100, factor: 1, maxDelayMs: 100 };

/** A manager over `servers`, recording its events and log, closed by `await using`. */
function managed(servers: ConstructorParameters<typeof ConnectionManager>[0]["servers"]) {
  const log = new RecordingLog();
  const manager = new ConnectionManager({ servers, log, backoff: QUICK });
  const events: ConnectionEvent[] = [];
  /** Each server's status as its state events were heard. */
  const seen: ServerStatus[] = [];
  manager.on((event) => {
    events.push(event);
    if (event.type === "state") seen.push(manager.status(event.server)!);
  });
  return {
    manager,
    log,
    events,
    seen,
    status: (name: string) => manager.status(name) as ServerStatus,
    async [Symbol.asyncDispose]() {
      await manager.close();
    },
  };
}

function everythingEntryFor(
  server: RunningServer,
  mode: "streamableHttp" | "sse",
  extra: Partial<HttpServerConfig> = {},
): HttpServerConfig {
  return httpEntry("web", `${server.origin}/${mode === "sse" ? "sse" : "mcp"}`, {
    transport: mode === "sse" ? "sse" : "streamable_http",
    timeoutSeconds: 5,
    ...extra,
  });
}

for (const mode of ["streamableHttp", "sse"] as const) {
  Deno.test(`${mode}: a server killed while idle is noticed with keep-alive off, diagnosed, and back once restarted on its port`, async () => {
    let server = await startEverythingHttp(mode);
    const port = server.port;
    try {
      // Pings off: what notices the death is the event stream dropping.
      await using session = managed([everythingEntryFor(server, mode, { pingIntervalSeconds: 0 })]);
      const { manager, status } = session;
      const [started] = await manager.start();
      assert.equal(started.state, "connected", started.error?.reason);

      Deno.kill(server.pid, "SIGKILL");
      await eventually(
        () => status("web").state === "reconnecting",
        "the killed server marked reconnecting",
        20_000,
      );
      const lost = status("web");
      assert.ok(lost.error instanceof ServerConnectError, String(lost.error));
      assert.equal(lost.error.message, "Failed to connect to server 'web': Session terminated");
      assert.ok(
        lost.error.reason.startsWith(
          `Connection refused: nothing is listening at 127.0.0.1:${port}`,
        ),
        lost.error.reason,
      );
      assert.match(lost.error.remedy, /start the server.*; meanwhile patchbay keeps trying/);
      assert.ok(lost.retry && lost.retry.attempt >= 1, JSON.stringify(lost.retry));
      assert.equal(lost.retry.maxAttempts, undefined, "network servers are retried without end");
      assert.equal(manager.tools().length, 0, "its tools leave the catalogue");
      assert.ok(session.log.matching(/^connection lost: Connection refused/).length > 0);

      // A call now says why, with the diagnosis.
      await assert.rejects(
        () => manager.callTool("web__echo", { message: "down" }),
        (error) =>
          error instanceof ServerUnavailableError &&
          error.message === "Server 'web' is not connected (reconnecting)" &&
          /^Connection refused: nothing is listening/.test(error.reason) &&
          !/fetch failed/.test(error.reason),
      );

      server = await startEverythingHttp(mode, port);
      await eventually(() => status("web").state === "connected", "reconnected", 20_000);
      // Back with its lists, without /refresh.
      assert.ok(status("web").counts.tools > 0);
      assert.equal(
        firstText(await manager.callTool("web__echo", { message: "back" })),
        "Echo: back",
      );
      const states = session.events.flatMap((e) => e.type === "state" ? [e.state] : []);
      assert.deepEqual(states, ["connecting", "connected", "reconnecting", "connected"]);
    } finally {
      await server[Symbol.asyncDispose]();
    }
  });
}

Deno.test("keep-alive: a server that stops answering (SIGSTOP) is lost by its ping within the interval, and back when it answers again", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  try {
    // A ping after 1 s of silence, answered within 1 s.
    await using session = managed([
      everythingEntryFor(server, "streamableHttp", { pingIntervalSeconds: 2 }),
    ]);
    const { manager, status } = session;
    const [started] = await manager.start();
    assert.equal(started.state, "connected", started.error?.reason);

    // Stopped, it keeps its sockets: nothing drops, nothing is refused; only a ping shows it.
    Deno.kill(server.pid, "SIGSTOP");
    await eventually(
      () => status("web").state === "reconnecting",
      "the silent server marked reconnecting by the keep-alive",
      20_000,
    );
    const lost = status("web");
    assert.equal(
      lost.error?.message,
      "Connection closed: server 'web' went away during the session",
    );
    assert.match(
      lost.error!.reason,
      /^Connection timeout: the server did not answer a ping within 1(\.0)? s/,
    );

    Deno.kill(server.pid, "SIGCONT");
    await eventually(() => status("web").state === "connected", "reconnected", 30_000);
    assert.equal(
      firstText(await manager.callTool("web__echo", { message: "awake" })),
      "Echo: awake",
    );
  } finally {
    if (processAlive(server.pid)) Deno.kill(server.pid, "SIGCONT");
  }
});

Deno.test("keep-alive: an idle server is pinged; ping_interval 0 sends none", async () => {
  await using pinged = startHttpFixture({ getStream: "none" });
  await using quiet = startHttpFixture({ getStream: "none" });
  await using session = managed([
    httpEntry("pinged", `${pinged.origin}/mcp`, { pingIntervalSeconds: 0.4 }),
    httpEntry("quiet", `${quiet.origin}/mcp`, { pingIntervalSeconds: 0 }),
  ]);
  const states = await session.manager.start();
  assert.deepEqual(states.map((s) => s.state), ["connected", "connected"]);
  const pings = (fixture: typeof pinged) => fixture.rpcMethods().filter((m) => m === "ping");
  await eventually(() => pings(pinged).length >= 3, "three keep-alive pings", 20_000);
  assert.deepEqual(pings(quiet), [], "ping_interval 0 turns them off");
  assert.equal(session.status("pinged").state, "connected");
});

Deno.test("a request that cannot reach its server is the loss: diagnosed, never 'fetch failed'", async () => {
  // No event stream and no pings: the call is the first to find the server gone.
  let fixture = startHttpFixture({ getStream: "none" });
  const port = Number(new URL(fixture.origin).port);
  try {
    await using session = managed([
      httpEntry("web", `${fixture.origin}/mcp`, { pingIntervalSeconds: 0, timeoutSeconds: 3 }),
    ]);
    await session.manager.start();
    await fixture[Symbol.asyncDispose]();
    await assert.rejects(
      () => session.manager.callTool("web__echo", { message: "down" }),
      (error) =>
        error instanceof ServerConnectError &&
        error.message === "Failed to connect to server 'web': Session terminated" &&
        error.reason ===
          `Connection refused: nothing is listening at 127.0.0.1:${port} (the server is not ` +
            "running at the configured address)" &&
        !/fetch failed/.test(error.remedy),
    );
    assert.equal(session.status("web").state, "reconnecting");

    // /refresh retries at once, in the same series.
    fixture = startHttpFixture({ getStream: "none" }, port);
    const [refreshed] = await session.manager.refresh("web");
    assert.equal(refreshed.state, "connected", refreshed.error?.reason);
    assert.equal(firstText(await session.manager.callTool("web__echo", { message: "up" })), "up");
  } finally {
    await fixture[Symbol.asyncDispose]();
  }
});

Deno.test("a stdio server that exits while idle is restarted; its restarts are counted and bounded", async () => {
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  await using session = managed([
    stdioEntry("local", NODE, [everythingEntry(), "stdio", tag]),
  ]);
  const { manager, status } = session;
  await manager.start();
  const [pid] = processesWith(tag);
  Deno.kill(pid, "SIGKILL");
  await eventually(() => session.seen.some((s) => s.state === "reconnecting"), "the exit seen");
  const lost = session.seen.find((s) => s.state === "reconnecting")!;
  assert.match(lost.error!.reason, /killed by SIGKILL/);
  // Planned before anyone hears of the loss: the first restart, of at most six.
  assert.equal(lost.retry?.attempt, 1);
  assert.equal(lost.retry?.maxAttempts, 6);
  assert.ok(lost.retry?.nextAt instanceof Date);
  await eventually(() => status("local").state === "connected", "restarted", 20_000);
  assert.notDeepEqual(processesWith(tag), [pid]);
  assert.equal(
    firstText(await manager.callTool("local__echo", { message: "again" })),
    "Echo: again",
  );
});

Deno.test("start-up in the background: pending servers are named, waited for with a bound, and skipped", async () => {
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  await using session = managed([
    everythingStdio("good"),
    // An HTTP server started as a stdio command: it never answers initialize.
    stdioEntry("hang", NODE, [everythingEntry(), "streamableHttp", tag], {
      env: { PORT: "0" },
      timeoutSeconds: 60,
    }),
  ]);
  const { manager, status } = session;
  const started = manager.start();
  assert.deepEqual(manager.pending(), ["good", "hang"]);
  await eventually(() => status("good").state === "connected", "the good server connected");
  assert.deepEqual(manager.pending(), ["hang"]);
  assert.ok(manager.tools().length > 0 && manager.tools().every((t) => t.server === "good"));
  // A bounded wait gives the servers still pending.
  assert.deepEqual(await manager.settled({ timeoutMs: 200 }), ["hang"]);

  assert.deepEqual(manager.skipPending(), ["hang"]);
  const states = await started;
  const hang = states.find((s) => s.name === "hang")!;
  assert.equal(hang.state, "failed");
  assert.ok(hang.error instanceof ConnectSkippedError, String(hang.error));
  assert.match(hang.error.message, /^Skipped server 'hang': still connecting after \d/);
  assert.deepEqual(manager.pending(), []);
  assert.deepEqual(manager.skipPending(), [], "nothing left to skip");
  await eventually(() => processesWith(tag).length === 0, "the skipped server's process ended");
});

Deno.test("configuration: ping_interval and connect_wait have defaults, bounds, and a transport", () => {
  const env = createEnvironment({});
  const parse = (value: unknown) => parseConfig(JSON.stringify(value), "servers_config.json", env);
  const llm = { provider: "openai", model: "gpt-4o-mini" };
  const config = parse({
    LLM: llm,
    mcpServers: {
      web: { url: "http://127.0.0.1:1/mcp" },
      slow: { url: "http://x/mcp", ping_interval: 0 },
    },
  });
  assert.equal(config.agent.connectWaitSeconds, 5);
  assert.equal((config.servers[0] as HttpServerConfig).pingIntervalSeconds, 30);
  assert.equal((config.servers[1] as HttpServerConfig).pingIntervalSeconds, 0);

  const problems = (value: unknown) => {
    try {
      parse(value);
    } catch (error) {
      assert.ok(error instanceof ConfigValidationError, String(error));
      return error.problems.map((p) => `${p.path}: ${p.message}`).join("\n");
    }
    assert.fail("accepted");
  };
  assert.match(
    problems({ LLM: llm, mcpServers: { s: { command: "x", ping_interval: 10 } } }),
    /mcpServers\.s\.ping_interval: "ping_interval" does not apply to transport_type stdio/,
  );
  assert.match(
    problems({ LLM: llm, mcpServers: { s: { url: "http://x/mcp", ping_interval: 3601 } } }),
    /ping_interval.*3600/,
  );
  assert.match(
    problems({ LLM: llm, mcpServers: { s: { url: "http://x/mcp", ping_interval: -1 } } }),
    /ping_interval/,
  );
  assert.match(
    problems({ LLM: llm, mcpServers: {}, AgentConfig: { connect_wait: 301 } }),
    /AgentConfig\.connect_wait.*300/,
  );
});
