/** Pure tests of the approval policy, the session limits and the statistics formatter. */

import assert from "node:assert/strict";
import { ApprovalPolicy } from "../../lib/agent/approval.ts";
import { admitRequest, MIN_ANSWER_TOKENS } from "../../lib/agent/limits.ts";
import { formatStats, UsageStats } from "../../lib/agent/stats.ts";
import type { AgentLimits } from "../../lib/config/types.ts";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { LimitReachedError } from "../../lib/errors.ts";
import { reportedUsage } from "../support/scripted_llm.ts";

/** Session limits with a 30 s tool timeout and 5 steps, and `limits` over them. */
function limitsOf(limits: Partial<AgentLimits>): AgentLimits {
  return { toolCallTimeoutSeconds: 30, maxSteps: 5, ...limits };
}

const tool = (server: string, name: string, description = "does things"): CatalogueTool => ({
  name: `${server}_${name}`,
  server,
  originalName: name,
  description,
  inputSchema: { type: "object" },
});

Deno.test("trusted servers skip approval; others are asked until 'always'", () => {
  const policy = new ApprovalPolicy([{ name: "safe", trusted: true }, {
    name: "web",
    trusted: false,
  }]);
  assert.equal(policy.check(tool("safe", "read")), undefined);
  const fetch = tool("web", "fetch");
  assert.equal(policy.check(fetch), "not-approved");
  policy.record("yes", fetch, [fetch]);
  assert.equal(policy.check(fetch), "not-approved", "yes is for this call only");
  policy.record("always-tool", fetch, [fetch]);
  assert.equal(policy.check(fetch), undefined);
  assert.equal(policy.check(tool("web", "post")), "not-approved", "always-tool covers one tool");
});

Deno.test("always-server covers the tools seen then; later or changed tools are asked again", () => {
  const policy = new ApprovalPolicy([{ name: "web", trusted: false }]);
  const fetch = tool("web", "fetch");
  const search = tool("web", "search");
  policy.record("always-server", fetch, [fetch, search, tool("other", "x")]);
  assert.equal(policy.check(fetch), undefined);
  assert.equal(policy.check(search), undefined);
  assert.equal(policy.check(tool("other", "x")), "not-approved", "only that server");
  assert.equal(policy.check(tool("web", "delete")), "new-tool", "appeared after the approval");
  assert.equal(policy.check(tool("web", "fetch", "now also uploads")), "changed");
  policy.reset();
  assert.equal(policy.check(fetch), "not-approved");
});

Deno.test("limits: unlimited passes; request_limit stops at the limit", () => {
  const stats = new UsageStats({ toolCallTimeoutSeconds: 30, maxSteps: 5 });
  const unlimited = admitRequest(stats, stats.limits, 1_000_000, 4096);
  assert.equal(unlimited.maxTokens, 4096);
  assert.equal(unlimited.capped, false);
  unlimited.release();
  const limits = limitsOf({ requestLimit: 1 });
  stats.recordRequest("chat", "m", reportedUsage(10, 5));
  assert.throws(() => admitRequest(stats, limits, 10, 100), (e: unknown) => {
    assert.ok(e instanceof LimitReachedError);
    assert.equal(e.message, "Limit reached: request_limit");
    return true;
  });
});

Deno.test("limits: total_tokens_limit caps the answer to the room left", () => {
  const limits = limitsOf({ totalTokensLimit: 1000 });
  const stats = new UsageStats(limits);
  stats.recordRequest("chat", "m", reportedUsage(500, 100));
  const capped = admitRequest(stats, limits, 200, 4096);
  assert.equal(capped.maxTokens, 200);
  assert.equal(capped.capped, true);
  capped.release();
  const small = admitRequest(stats, limits, 100, 50);
  assert.equal(small.maxTokens, 50);
  assert.equal(small.capped, false);
  small.release();
  assert.throws(
    () => admitRequest(stats, limits, 400 - MIN_ANSWER_TOKENS + 1, 4096),
    LimitReachedError,
  );
});

Deno.test("limits: requests under way hold their share, so concurrent ones cannot overrun", () => {
  const limits = limitsOf({ requestLimit: 3, totalTokensLimit: 1000 });
  const stats = new UsageStats(limits);
  stats.recordRequest("chat", "m", reportedUsage(300, 50));
  // Two sampling requests arrive while nothing has finished: the first holds 100 + 200.
  const first = admitRequest(stats, limits, 100, 200);
  assert.deepEqual([stats.heldRequests, stats.heldTokens], [1, 300]);
  // The second gets only what the first leaves: 1000 - 350 - 300 - 100.
  const second = admitRequest(stats, limits, 100, 400);
  assert.equal(second.maxTokens, 250);
  // A third would pass request_limit counting the two under way.
  assert.throws(() => admitRequest(stats, limits, 10, 10), (e: unknown) => {
    assert.ok(e instanceof LimitReachedError);
    assert.equal(
      e.reason,
      "this session has made 3 model requests (2 of them still under way) and " +
        "AgentConfig.request_limit is 3",
    );
    return true;
  });
  stats.recordRequest("sampling", "m", reportedUsage(100, 200), { server: "s" });
  first.release();
  stats.recordRequest("sampling", "m", reportedUsage(100, 250), { server: "s" });
  second.release();
  second.release();
  assert.deepEqual([stats.heldRequests, stats.heldTokens], [0, 0], "released once each");
  assert.equal(stats.totalTokens, 1000, "the limit is reached, never passed");
});

Deno.test("limits: a retry counts what the failed attempt may have cost", () => {
  const limits = limitsOf({ totalTokensLimit: 1000 });
  const stats = new UsageStats(limits);
  const admission = admitRequest(stats, limits, 300, 400);
  const notice = {
    attempt: 1,
    maxRetries: 2,
    delayMs: 500,
    reason: "the connection dropped mid-answer",
    discardedPartial: true,
    billable: true,
  };
  // 300 prompt + 100 streamed tokens were probably billed; the retry's prompt is 300 more.
  assert.equal(admission.retry(notice, "x".repeat(400)), 300);
  assert.equal(stats.heldTokens, 400 + 300 + 300);
  // A refusal (HTTP 503: not billable) costs nothing: the next retry gets the same room.
  assert.equal(admission.retry({ ...notice, billable: false }, ""), 300);
  // A second cut: 400 more spent, and the next prompt no longer fits.
  assert.throws(() => admission.retry(notice, "x".repeat(400)), (e: unknown) => {
    assert.ok(e instanceof LimitReachedError);
    assert.equal(e.message, "Limit reached: total_tokens_limit");
    assert.match(e.reason, /^the model request failed \(the connection dropped mid-answer\)/);
    return true;
  });
  assert.deepEqual(admission.withSpent(), {
    promptTokens: 600,
    completionTokens: 200,
    totalTokens: 800,
    estimated: true,
  });
  admission.release();
  assert.equal(stats.heldTokens, 0);
});

Deno.test("stats: per model, chat and sampling apart, tools per server, what limits leave", () => {
  const limits = limitsOf({ maxSteps: 10, requestLimit: 3, totalTokensLimit: 1000 });
  const stats = new UsageStats(limits, new Date("2026-03-01T10:00:00Z"));
  stats.recordRequest("chat", "gpt-a", reportedUsage(100, 20), { retries: 1 });
  stats.recordRequest("chat", "gpt-a", reportedUsage(50, 5));
  stats.recordRequest("sampling", "gpt-a", { ...reportedUsage(7, 3), estimated: true }, {
    server: "srv",
  });
  stats.recordToolCall("fs", "ok", 120);
  stats.recordToolCall("fs", "error", 30);
  stats.recordToolCall("fs", "timeout", 30_000);
  stats.recordToolCall("web", "declined", 0);
  stats.recordFailure(2);
  const snapshot = stats.snapshot();
  assert.deepEqual(snapshot.limits, [
    { name: "request_limit", used: 3, limit: 3, remaining: 0 },
    { name: "total_tokens_limit", used: 185, limit: 1000, remaining: 815 },
    { name: "sampling_request_limit", used: 0, limit: 100, remaining: 100 },
  ]);
  assert.equal(
    formatStats(snapshot, { now: new Date("2026-03-01T10:05:30Z") }),
    [
      "Session usage (since 2026-03-01T10:00:00.000Z, 5 min 30 s)",
      "  Requests:          3 (chat 2, sampling 1)",
      "  Prompt tokens:     157",
      "  Completion tokens: 28",
      "  Total tokens:      185 (1 of 3 requests estimated: the provider reported no usage)",
      "  Retries:           3; failed requests: 1",
      "",
      "By model",
      "  gpt-a: 3 requests, 157 prompt + 28 completion = 185 tokens (1 of 3 requests estimated: " +
      "the provider reported no usage)",
      "",
      "Sampling (model requests made for servers)",
      "  srv: 1 request, 10 tokens (estimated: the provider reported no usage)",
      "",
      "Tool calls",
      "  fs: 3 calls (1 error, 1 timeout), 30.1 s in tools",
      "  web: 1 call (1 declined)",
      "",
      "Limits (AgentConfig)",
      "  request_limit: 3 of 3 used, 0 remaining",
      "  total_tokens_limit: 185 of 1,000 used, 815 remaining",
      "  sampling_request_limit: 0 of 100 used, 100 remaining",
      "  max_steps: 10 per turn",
      "  tool_call_timeout: 30 s",
      "  sampling_per_tool_call: 10 per tool call (most in one call so far: 0)",
    ].join("\n"),
  );
});

Deno.test("stats: a prompt larger than its estimate shows no negative remainder", () => {
  // The token limit can be passed only by the prompt estimate's error: the provider reports
  // more prompt tokens than were estimated for the last request admitted.
  const limits = limitsOf({ maxSteps: 10, totalTokensLimit: 1000 });
  const stats = new UsageStats(limits);
  const admission = admitRequest(stats, limits, 400, 4096);
  assert.equal(admission.maxTokens, 600);
  stats.recordRequest("chat", "m", reportedUsage(430, 600));
  admission.release();
  const tokens = stats.snapshot().limits.find((l) => l.name === "total_tokens_limit")!;
  assert.deepEqual(tokens, { name: "total_tokens_limit", used: 1030, limit: 1000, remaining: 0 });
  assert.throws(() => admitRequest(stats, limits, 10, 100), LimitReachedError);
});

Deno.test("stats: unset limits read unlimited; a fresh session says no tool calls yet", () => {
  const stats = new UsageStats({ toolCallTimeoutSeconds: 30, maxSteps: 20 }, new Date(0));
  const text = formatStats(stats.snapshot(), { now: new Date(0) });
  assert.match(text, /Requests: {10}0\n/);
  assert.match(text, /Tool calls\n {2}none yet/);
  assert.match(text, /request_limit: unlimited \(0 used\)/);
  assert.match(text, /total_tokens_limit: unlimited \(0 used\)/);
  assert.deepEqual(stats.snapshot().limits.map((l) => l.remaining), [
    "unlimited",
    "unlimited",
    100,
  ]);
});
