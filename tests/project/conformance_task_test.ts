/**
 * `deno task conformance` covers what it claims: every client scenario the pinned suite's
 * requirement sets name (18 for 2025-11-25, 32 for 2026-07-28, read from the suite itself)
 * plus patchbay's extras, and the client adapter knows what to do in each.
 *
 * The scenarios themselves run in `deno task conformance` (CI runs it after the tests);
 * this only lists them, which runs the suite's `list` command offline once it is cached.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  EXTRA_SCENARIOS,
  plannedRuns,
  requiredClientScenarios,
} from "../../scripts/conformance.ts";
import { stepsFor } from "../../scripts/conformance_client.ts";

Deno.test("the conformance task runs every required client scenario of both revisions, and more", async () => {
  assert.equal((await requiredClientScenarios("2025-11-25")).length, 18);
  assert.equal((await requiredClientScenarios("2026-07-28")).length, 32);
  const runs = await plannedRuns({});
  assert.equal(runs.length, 18 + 32 + EXTRA_SCENARIOS.length);
  assert.ok(runs.every((r) => r.scored || r.source === "extension"));
  for (
    const scenario of [
      "auth/2025-03-26-oauth-endpoint-fallback",
      "auth/client-credentials-basic",
      "auth/client-credentials-jwt",
      "auth/dpop",
      "json-schema-2020-12-preservation",
    ]
  ) {
    assert.ok(runs.some((r) => r.scenario === scenario && r.scored), `${scenario} is scored`);
  }
  // The adapter has steps for each (the suite passes the calls of http-custom-headers).
  for (const run of runs) {
    const context = run.scenario === "http-custom-headers"
      ? { toolCalls: [{ name: "test_custom_headers", arguments: { region: "us-west1" } }] }
      : {};
    assert.ok(stepsFor(run.scenario, context).length > 0, `no steps for ${run.scenario}`);
  }
});
