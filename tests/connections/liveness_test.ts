/**
 * The liveness watch of a network session (`lib/connections/liveness.ts`), driven directly
 * on real sessions with the HTTP fixture server: a session silent for half its
 * `ping_interval` is pinged; a ping unanswered within the other half loses the session
 * ("Connection timeout"); a server that went away is diagnosed ("Connection refused"),
 * once for every request that met the loss; stdio sessions, which an exit reports, are
 * never pinged.
 */

import assert from "node:assert/strict";
import { ConnectionClosedError, ServerConnectError } from "../../lib/errors.ts";
import { startHttpFixture } from "../fixtures/http_server.ts";
import { openLiveSession } from "../support/live_session.ts";
import { eventually, fixtureEntry, httpEntry } from "../support/servers.ts";

Deno.test("a silent network session is pinged after half its ping_interval; an answer keeps it", async () => {
  await using fixture = startHttpFixture();
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { pingIntervalSeconds: 0.4 }),
  );
  assert.equal(fixture.rpcMethods().filter((m) => m === "ping").length, 0);
  live.liveness.start(live.session);
  await eventually(
    () => fixture.rpcMethods().filter((m) => m === "ping").length >= 2,
    "keep-alive pings, one after another",
  );
  assert.deepEqual(live.losses, []);
});

Deno.test("a ping unanswered within the other half of ping_interval loses the session: Connection timeout", async () => {
  // The socket stays open: only the missing answer tells the server is gone.
  await using fixture = startHttpFixture({ unanswered: ["ping"] });
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { timeoutSeconds: 600, pingIntervalSeconds: 0.4 }),
  );
  live.liveness.start(live.session);
  await eventually(() => live.losses.length === 1, "the session lost");
  const [loss] = live.losses;
  assert.ok(loss instanceof ConnectionClosedError, String(loss));
  assert.equal(
    loss.reason,
    "Connection timeout: the server did not answer a ping within 0.2 s " +
      "(it had been silent for a while)",
  );
  assert.equal(live.liveness.lossOf(live.session), loss);
});

Deno.test("suspicions in a burst set off one check, with the reason logged; stdio sessions are not pinged", async () => {
  await using fixture = startHttpFixture();
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { pingIntervalSeconds: 0 }),
  );
  live.liveness.suspect(live.session, "the event stream dropped");
  live.liveness.suspect(live.session, "a reconnect of it failed");
  await eventually(() => fixture.rpcMethods().includes("ping"), "the ping of the check");
  assert.deepEqual(
    live.log.matching(/checking the connection/).map((line) => line.message),
    ["checking the connection: the event stream dropped"],
  );
  assert.equal(fixture.rpcMethods().filter((m) => m === "ping").length, 1);

  // A stdio server's exit says it is gone: neither keep-alive nor suspicion pings it.
  await using stdio = await openLiveSession(fixtureEntry("quiet"));
  stdio.liveness.start(stdio.session);
  stdio.liveness.suspect(stdio.session, "a stray line");
  assert.deepEqual(stdio.log.matching(/checking the connection/), []);
});

Deno.test("a server that went away is diagnosed once, and every request that met the loss gets it", async () => {
  const fixture = startHttpFixture();
  await using live = await openLiveSession(
    httpEntry("web", `${fixture.origin}/mcp`, { pingIntervalSeconds: 0 }),
  );
  await fixture[Symbol.asyncDispose]();
  const error = new TypeError("fetch failed");
  const [first, second] = await Promise.all([
    live.liveness.confirmLoss(live.session, error),
    live.liveness.confirmLoss(live.session, error),
  ]);
  assert.ok(first instanceof ServerConnectError, String(first));
  assert.match(first.reason, /Connection refused/);
  assert.doesNotMatch(first.reason, /fetch failed/);
  assert.equal(second, first, "one diagnosis, shared");
  assert.deepEqual(live.losses, [first]);
  assert.equal(live.liveness.lossOf(live.session), first);
});
