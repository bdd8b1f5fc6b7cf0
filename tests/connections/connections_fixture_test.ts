/**
 * The connection manager against servers that misbehave on purpose (the fixture of
 * `tests/fixtures/stdio_server.ts`): noise, crashes, silence, early exits, oversized
 * answers. Each case gives the documented message, the other servers keep working, and
 * no process is left behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ConnectionManager, type ConnectionManagerOptions } from "../../lib/connections/manager.ts";
import type { ConnectionState } from "../../lib/connections/types.ts";
import type { ServerConfig } from "../../lib/config/types.ts";
import {
  CancelledError,
  ConnectionClosedError,
  ServerConnectError,
  ServerUnavailableError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../lib/errors.ts";
import { startHttpFixture } from "../fixtures/http_server.ts";
import {
  assumingClosed,
  eventually,
  firstText,
  fixtureEntry,
  freePort,
  httpEntry,
  processesWith,
  rebind,
  startManager,
  stdioEntry,
} from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

/** A started manager over fixture servers tagged for this test; checks nothing is left. */
function managed(servers: ServerConfig[], options: Partial<ConnectionManagerOptions> = {}) {
  return startManager({
    servers,
    backoff: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 3 },
    ...options,
  });
}

/** A fixture entry tagged so the test can find its processes afterwards. */
function tagged(
  name: string,
  tag: string,
  flags: string[] = [],
  extra: Partial<ServerConfig> = {},
) {
  return fixtureEntry(name, [...flags, `--tag=${tag}`], extra as never);
}

const newTag = () => `patchbay-test-${crypto.randomUUID()}`;

Deno.test("start-up: a noisy, a silent, an exiting and a missing server, in parallel", async () => {
  const tag = newTag();
  {
    await using session = await managed([
      tagged("noisy", tag, ["--noise"]),
      tagged("silent", tag, ["--silent"], { timeoutSeconds: 1 }),
      tagged("exits", tag, ["--exit-at-start=3"]),
      stdioEntry("missing", "patchbay-no-such-server"),
    ]);
    const byName = Object.fromEntries(session.states.map((s) => [s.name, s]));

    // The silent server cost its own timeout, not the others': they were settled (connected,
    // or failed with their cause) before it failed.
    const settled = (server: string, state: ConnectionState) =>
      session.events.findIndex((e) =>
        e.type === "state" && e.server === server && e.state === state
      );
    const silentFailed = settled("silent", "failed");
    assert.ok(silentFailed >= 0, "the silent server failed");
    for (const [server, state] of [["noisy", "connected"], ["exits", "failed"]] as const) {
      const at = settled(server, state);
      assert.ok(at >= 0 && at < silentFailed, `${server} ${state} before the silent server failed`);
    }

    assert.equal(byName.noisy.state, "connected");
    assert.equal(firstText(await session.manager.callTool("noisy__echo", { message: "hi" })), "hi");
    assert.ok(session.log.matching(/protocol warning: stdout line is not JSON-RPC/).length >= 1);

    const silent = byName.silent.error!;
    assert.equal(byName.silent.state, "failed");
    assert.ok(silent instanceof ServerConnectError);
    assert.equal(silent.message, "Failed to connect to server 'silent': Session terminated");
    assert.match(
      silent.reason,
      /^Connection timeout: the process started but did not answer initialize within 1 s/,
    );
    assert.match(silent.remedy, /raise "timeout"/);

    const exits = byName.exits.error!;
    assert.equal(exits.message, "Failed to connect to server 'exits': Session terminated");
    assert.match(exits.reason, /exited with code 3 before completing the MCP handshake/);
    assert.deepEqual(exits.details, [
      "stderr: fixture: loading configuration",
      "stderr: fatal: missing FIXTURE_CONFIG, cannot start",
    ]);
    assert.match(exits.remedy, /run the command by hand to see why: .*--exit-at-start=3/);

    assert.equal(
      byName.missing.error!.reason,
      "command 'patchbay-no-such-server' not found on PATH",
    );
  }
  assert.deepEqual(processesWith(tag), [], "fixture processes left behind");
});

Deno.test("a crash mid-call: that call fails naming the server, others go on, it comes back", async () => {
  const tag = newTag();
  {
    await using session = await managed([tagged("crashy", tag), tagged("steady", tag)]);
    const { manager } = session;
    const crash = manager.callTool("crashy__crash", {});
    const steady = manager.callTool("steady__echo", { message: "unaffected" });
    await assert.rejects(crash, (error) => {
      assert.ok(error instanceof ConnectionClosedError);
      assert.equal(
        error.message,
        "Connection closed: server 'crashy' went away during tools/call crash",
      );
      assert.match(error.reason, /exited with code 7; its last stderr line: "boom: crashing/);
      return true;
    });
    assert.equal(firstText(await steady), "unaffected");
    await eventually(() => manager.status("crashy")?.state === "connected", "crashy back");
    assert.deepEqual(session.statesOf("crashy"), [
      "connecting",
      "connected",
      "reconnecting",
      "connected",
    ]);
    assert.equal(firstText(await manager.callTool("crashy__echo", { message: "back" })), "back");
    assert.deepEqual(session.statesOf("steady"), ["connecting", "connected"]);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("a server that keeps dying is retried with bounded backoff, then marked failed", async () => {
  const tag = newTag();
  {
    await using session = await managed([tagged("flaky", tag, ["--die-after-ms=30"])]);
    await eventually(() => session.manager.status("flaky")?.state === "failed", "gave up", 15_000);
    const states = session.statesOf("flaky");
    // The first connection, then maxAttempts (3) restarts, each dying again.
    assert.equal(states.filter((s) => s === "connected").length, 4, states.join(" "));
    assert.equal(states.at(-1), "failed");
    const error = session.manager.status("flaky")!.error!;
    assert.match(error.reason, /exited with code 9/);
    assert.ok(session.log.matching(/gave up after 3 attempts/).length === 1);
    await assert.rejects(
      () => session.manager.callTool("flaky__echo", { message: "x" }),
      ServerUnavailableError,
    );
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("timeouts and cancellation send notifications/cancelled", async () => {
  const tag = newTag();
  {
    await using session = await managed([tagged("slow", tag)]);
    const { manager, log } = session;

    await assert.rejects(
      () => manager.callTool("slow__hang", {}, { toolCallTimeoutSeconds: 0.3 }),
      (error) =>
        error instanceof ToolTimeoutError &&
        error.message === "Tool timeout: slow__hang did not finish within 0.3 s",
    );

    await assert.rejects(
      () => manager.callTool("slow__slow", { steps: 50 }, { toolCallTimeoutSeconds: 0.35 }),
      ToolTimeoutError,
    );
    await eventually(() => log.matching(/cancelled request/).length === 1, "server saw the cancel");

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 250);
    await assert.rejects(
      () => manager.callTool("slow__slow", { steps: 50 }, { signal: controller.signal }),
      CancelledError,
    );
    await eventually(() => log.matching(/cancelled request/).length === 2, "server saw the abort");

    // Progress keeps a call alive only up to its bound.
    const updates: number[] = [];
    await assert.rejects(
      () =>
        manager.callTool("slow__slow", { steps: 30 }, {
          toolCallTimeoutSeconds: 0.5,
          onProgress: (p) => updates.push(p.progress),
        }),
      ToolTimeoutError,
    );
    assert.ok(updates.length >= 2, `progress seen: ${updates.join(", ")}`);
    assert.equal(manager.status("slow")?.state, "connected");
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("server log messages and list_changed reach the log and the events", async () => {
  const tag = newTag();
  await using session = await managed([tagged("chatty", tag)]);
  const { manager, events, log } = session;
  /** The first event of `type`, once one has arrived. */
  const firstEvent = async (type: string, what: string) => {
    await eventually(() => events.some((e) => e.type === type), what);
    return events.find((e) => e.type === type);
  };
  await manager.callTool("chatty__log", {});
  assert.deepEqual(await firstEvent("log", "log event"), {
    type: "log",
    server: "chatty",
    level: "warning",
    logger: "fixture",
    data: "disk almost full",
  });
  assert.ok(log.lines.some((l) => l.level === "warn" && l.message === "fixture: disk almost full"));

  const before = manager.tools().length;
  await manager.callTool("chatty__change", {});
  await eventually(
    () =>
      events.some((e) => e.type === "list_changed" && e.server === "chatty" && e.list === "tools"),
    "list_changed event",
  );
  assert.equal(manager.tools().length, before + 1);
  assert.ok(manager.tools().some((t) => t.name.startsWith("chatty__added-")));

  await manager.callTool("chatty__touch", {});
  assert.deepEqual(await firstEvent("resource_updated", "resource update"), {
    type: "resource_updated",
    server: "chatty",
    uri: "fixture://note",
  });

  manager.setLoggingLevel("debug");
  await eventually(() => log.matching(/^log level set to debug$/).length === 1, "setLevel sent");
});

Deno.test("prompts/list_changed: the prompts are listed again and the event names the list", async () => {
  const tag = newTag();
  await using session = await managed([tagged("chatty", tag)]);
  const { manager, events } = session;
  assert.deepEqual(manager.prompts(), [], "the fixture starts without prompts");

  await manager.callTool("chatty__add-prompt", {});
  await eventually(
    () =>
      events.some((e) =>
        e.type === "list_changed" && e.server === "chatty" && e.list === "prompts"
      ),
    "prompts list_changed event",
  );
  assert.deepEqual(
    manager.prompts().map((p) => [p.server, p.name, p.description]),
    [["chatty", "prompt-1", "Added later"]],
  );
  assert.ok(
    !events.some((e) => e.type === "list_changed" && e.list !== "prompts"),
    "only the prompts changed",
  );
});

Deno.test("a re-listing cut short by close stops quietly: no warning after the session ends", async () => {
  const tag = newTag();
  const session = await managed([tagged("lagging", tag, ["--slow-relist-ms=2000"])]);
  const { manager, log } = session;
  // The notification precedes the call's answer, so the re-listing is pending by now.
  await manager.callTool("lagging__change", {});
  await manager.close();
  const relists = log.matching(/^re-listing/);
  assert.ok(relists.length > 0, "the pending re-listing was not cut short by close");
  assert.deepEqual(relists.filter((l) => l.level === "warn"), []);
  assert.match(relists[0].message, /^re-listing tools stopped: the session ended/);
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("an oversized answer closes only that server, which then restarts", async () => {
  const tag = newTag();
  {
    await using session = await managed([tagged("huge", tag), tagged("fine", tag)]);
    const { manager } = session;
    await assert.rejects(
      () => manager.callTool("huge__big", { bytes: 11 * 1024 * 1024 }),
      (error) => error instanceof ConnectionClosedError && /more than 10 MB/.test(error.reason),
    );
    assert.equal(firstText(await manager.callTool("fine__echo", { message: "fine" })), "fine");
    await eventually(() => manager.status("huge")?.state === "connected", "huge restarted");
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("server requests: refusals without handlers, answers with them, roots, sampling deny", async () => {
  const tag = newTag();
  {
    // The session (and the folder) end with this block, before the check that no process is left.
    await using tmp = await tempDir("patchbay-roots-");
    const dir = tmp.path;
    await using session = await managed([
      tagged("asker", tag, [], { roots: [dir] }),
      tagged("denied", tag, [], { sampling: "deny" }),
    ]);
    const { manager } = session;

    assert.match(
      firstText(await manager.callTool("asker__sample", {}))!,
      /patchbay refused the sampling request: no language model is attached/,
    );
    assert.match(
      firstText(await manager.callTool("asker__elicit", {}))!,
      /patchbay refused the elicitation request/,
    );
    assert.match(
      firstText(await manager.callTool("asker__roots", {}))!,
      new RegExp(`file://${dir}`),
    );

    const asked: string[] = [];
    manager.setHandlers({
      sampling: (server, params) => {
        asked.push(`${server}:${params.maxTokens}`);
        return Promise.resolve({
          role: "assistant",
          content: { type: "text", text: "from the model" },
          model: "test-model",
        });
      },
      elicitation: () => Promise.resolve({ action: "accept", content: { name: "Ada" } }),
    });
    assert.match(firstText(await manager.callTool("asker__sample", {}))!, /from the model/);
    assert.deepEqual(asked, ["asker:10"]);
    assert.match(firstText(await manager.callTool("asker__elicit", {}))!, /"name":"Ada"/);

    const refusal = JSON.parse(firstText(await manager.callTool("denied__sample", {}))!);
    assert.deepEqual(refusal, {
      code: -1,
      message: "patchbay refused the sampling request: the entry for server 'denied' has " +
        '"sampling": "deny"',
    });
    assert.deepEqual(asked, ["asker:10"]);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("unknown tools and servers, and disabled entries, give errors that say so", async () => {
  const tag = newTag();
  await using session = await managed([
    tagged("live", tag),
    tagged("parked", tag, [], { disabled: true }),
  ]);
  const { manager } = session;
  const parked = manager.status("parked")!;
  assert.equal(parked.state, "disconnected");
  assert.equal(parked.disabled, true);
  assert.equal(processesWith(tag).length, 1, "the disabled entry was started");

  await assert.rejects(
    () => manager.callTool("live__ecko", { message: "x" }),
    (error) =>
      error instanceof ToolExecutionError &&
      /no connected server offers a tool named 'live__ecko' \(did you mean 'live__echo'\?\)/
        .test(error.reason),
  );
  await assert.rejects(
    () => manager.getPrompt("parked", "anything"),
    (error) => error instanceof ServerUnavailableError && /\(disabled\)/.test(error.message),
  );
  await assert.rejects(
    () => manager.readResource("livee", "x://y"),
    (error) => error instanceof ServerUnavailableError && /did you mean 'live'/.test(error.reason),
  );
  const unsupported = await manager.complete("live", {
    ref: { type: "ref/prompt", name: "p" },
    argument: { name: "a", value: "" },
  });
  assert.deepEqual(unsupported, { values: [] });
});

Deno.test("refresh: a server that was down connects once it is up; a forced refresh reconnects", async () => {
  const tag = newTag();
  const port = freePort();
  await assumingClosed(port, async () => {
    await using session = await managed([
      httpEntry("web", `http://127.0.0.1:${port}/mcp`, { timeoutSeconds: 2 }),
      tagged("local", tag),
    ]);
    const { manager } = session;
    assert.equal(manager.status("web")?.state, "failed");
    assert.match(manager.status("web")!.error!.reason, /^Connection refused/);

    await using _fixture = startHttpFixture({}, port);
    const states = await manager.refresh();
    assert.equal(states.find((s) => s.name === "web")?.state, "connected");
    assert.equal(firstText(await manager.callTool("web__echo", { message: "up" })), "up");

    const pidBefore = processesWith(tag);
    await manager.refresh("local", { force: true });
    assert.equal(manager.status("local")?.state, "connected");
    assert.notDeepEqual(processesWith(tag), pidBefore);
    assert.deepEqual(session.statesOf("local"), [
      "connecting",
      "connected",
      "connecting",
      "connected",
    ]);
  });
});

Deno.test("events can be consumed as a stream until close", async () => {
  const tag = newTag();
  const manager = new ConnectionManager({ servers: [tagged("one", tag)] });
  const seen: ConnectionState[] = [];
  const reading = (async () => {
    for await (const event of manager.events()) if (event.type === "state") seen.push(event.state);
  })();
  await manager.start();
  await manager.close();
  await reading;
  assert.deepEqual(seen, ["connecting", "connected", "closed"]);
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("an HTTP server that goes away: calls fail naming it with the diagnosed cause, it reconnects when back", async () => {
  let fixture = startHttpFixture();
  const port = Number(new URL(fixture.origin).port);
  try {
    await using session = await managed([
      httpEntry("web", `http://127.0.0.1:${port}/mcp`, { timeoutSeconds: 2 }),
    ], { backoff: { initialDelayMs: 100, factor: 1, maxDelayMs: 100, maxAttempts: 50 } });
    const { manager } = session;
    assert.equal(firstText(await manager.callTool("web__echo", { message: "up" })), "up");

    await fixture[Symbol.asyncDispose]();
    // The call finds the server gone: what a look at its address found, not "fetch failed".
    await assert.rejects(
      () => manager.callTool("web__echo", { message: "down" }),
      (error) =>
        error instanceof ServerConnectError &&
        error.message === "Failed to connect to server 'web': Session terminated" &&
        error.reason.startsWith(`Connection refused: nothing is listening at 127.0.0.1:${port}`) &&
        !/fetch failed/.test(`${error.reason} ${error.remedy}`),
    );
    assert.equal(manager.status("web")?.state, "reconnecting");
    assert.match(manager.status("web")!.error!.reason, /^Connection refused/);

    fixture = rebind(port, () => startHttpFixture({}, port));
    await eventually(() => manager.status("web")?.state === "connected", "reconnected");
    assert.equal(firstText(await manager.callTool("web__echo", { message: "back" })), "back");
  } finally {
    await fixture[Symbol.asyncDispose]();
  }
});
