/**
 * The bounds on what a server controls about its tasks (lib/tasks/bounds.ts): the poll
 * interval it suggests, how long a task is followed whatever its ttl, what of a status
 * message may be shown and stored, which task ids are usable, the arguments kept.
 */

import assert from "node:assert/strict";
import {
  boundedPollInterval,
  boundedStatusMessage,
  followUntil,
  maskedArguments,
  MAX_ARGUMENTS_CHARS,
  MAX_FOLLOW_MS,
  MAX_POLL_INTERVAL_MS,
  MAX_STATUS_MESSAGE_CHARS,
  MIN_POLL_INTERVAL_MS,
  usableTaskId,
} from "../../lib/tasks/bounds.ts";
import { Redactor } from "../../lib/redact/redact.ts";

Deno.test("task bounds: a suggested poll interval is held between the bounds", () => {
  assert.equal(boundedPollInterval(0), MIN_POLL_INTERVAL_MS);
  assert.equal(boundedPollInterval(-5), MIN_POLL_INTERVAL_MS);
  assert.equal(boundedPollInterval(5000), 5000);
  assert.equal(boundedPollInterval(3_600_000), MAX_POLL_INTERVAL_MS);
  assert.equal(boundedPollInterval(Number.NaN), 1000);
  assert.equal(boundedPollInterval("10"), 1000);
});

Deno.test("task bounds: a task is followed for its ttl, and never past the bound", () => {
  const created = Date.UTC(2026, 0, 1);
  assert.equal(followUntil(created, 300_000), created + 300_000);
  assert.equal(followUntil(created, 10 * 365 * 24 * 3600 * 1000), created + MAX_FOLLOW_MS);
  assert.equal(followUntil(created, null), created + MAX_FOLLOW_MS, "unlimited is bounded");
  assert.equal(followUntil(created, undefined), created + MAX_FOLLOW_MS);
});

Deno.test("task bounds: a status message is masked, stripped, on one line and short", () => {
  const redactor = new Redactor();
  redactor.addSecret("sk-live-status-secret-123456");
  const message = boundedStatusMessage(
    "\u001b[2J\u001b]0;title\u0007Working\non it\u0000 sk-live-status-secret-123456 " +
      "y".repeat(10_000),
    redactor,
  )!;
  assert.ok(message.startsWith("Working on it [REDACTED] yyy"), message.slice(0, 60));
  assert.equal(message.length, MAX_STATUS_MESSAGE_CHARS);
  assert.ok(message.endsWith("…"));
  assert.equal(boundedStatusMessage("   ", redactor), undefined);
  assert.equal(boundedStatusMessage(42, redactor), undefined);
});

Deno.test("task bounds: usable task ids; arguments kept masked and abridged", () => {
  assert.ok(usableTaskId("786512e2-9e0d-44bd-8f29-789f320fe840"));
  assert.ok(!usableTaskId(""));
  assert.ok(!usableTaskId("a".repeat(257)));
  assert.ok(!usableTaskId("id\u001b[2J"));
  assert.ok(!usableTaskId("two words"));
  assert.ok(!usableTaskId(7));
  const redactor = new Redactor();
  redactor.addSecret("hunter2-secret-value");
  const kept = maskedArguments(
    { password: "hunter2-secret-value", text: "z".repeat(5000) },
    redactor,
  );
  assert.ok(!kept.includes("hunter2-secret-value"));
  assert.equal(kept.length, MAX_ARGUMENTS_CHARS);
});
