/** Failures counted by the row of the failure table their message belongs to. */

import assert from "node:assert/strict";
import {
  CancelledError,
  NetworkError,
  PatchbayError,
  ServerConnectError,
  TimeoutError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../lib/errors.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";
import { errorType, failureKind, NO_ROW } from "../../lib/telemetry/failure_kind.ts";

Deno.test("failure kinds: by code, by the row's remedy where rows share a code, else 'other'", () => {
  assert.equal(failureKind(new ToolTimeoutError("s/t", 5, ROWS.tool.remedy.repl)), "tool");
  assert.equal(failureKind(new ToolExecutionError("s/t", "it broke")), "tool");
  assert.equal(
    failureKind(new TimeoutError("Connection timeout", "slow", ROWS.timeout.remedy.repl)),
    "timeout",
  );
  assert.equal(
    failureKind(
      new NetworkError("Connection refused", "nothing listens", ROWS.network.remedy.repl),
    ),
    "network",
  );
  // The four `Session terminated` rows share a code; the remedy, extended, tells them apart.
  const moved = new ServerConnectError("s", {
    reason: "it speaks stdio",
    remedy: `${ROWS.wrong_transport.remedy.repl}: set "transport_type": "stdio"`,
  });
  assert.equal(failureKind(moved), "wrong_transport");
  const slow = new ServerConnectError("s", {
    reason: "no answer",
    remedy: ROWS.timeout.remedy.repl,
  });
  assert.equal(failureKind(slow), "timeout");
  // A diagnosis of its own (a command that is not found): the server did not come up.
  const missing = new ServerConnectError("s", {
    reason: "command 'x' not found on PATH",
    remedy: "install it, or give the full path to 'x' in \"command\"",
  });
  assert.equal(failureKind(missing), "not_running");
  assert.equal(failureKind(new CancelledError("the turn")), NO_ROW);
  assert.equal(failureKind(new Error("bug")), NO_ROW);
  assert.equal(
    failureKind(new PatchbayError("internal", "x", { reason: "y", remedy: "z" })),
    NO_ROW,
  );
  for (const kind of ["tool", "timeout", "network", "wrong_transport", "not_running"]) {
    assert.ok(Object.hasOwn(ROWS, kind));
  }
  assert.equal(errorType(new ToolTimeoutError("s/t", 5, ROWS.tool.remedy.repl)), "tool_timeout");
  assert.equal(errorType(new RangeError("r")), "RangeError");
  assert.equal(errorType("thrown text"), "_OTHER");
});
