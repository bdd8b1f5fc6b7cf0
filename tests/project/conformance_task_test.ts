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
  UNEXPECTED_EXIT,
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
      "sep-2640-client-no-prefetch",
      "sep-2640-client-verify-digest",
      "sep-2640-client-verify-size",
      "sep-2640-client-verify-frontmatter",
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

Deno.test("Skills over MCP: listing fetches nothing, and a tampered skill must be refused", () => {
  const skills = EXTRA_SCENARIOS.filter((r) => r.scenario.startsWith("sep-2640-"));
  assert.equal(skills.length, 4);
  // Scored and strict: a command exiting otherwise than expected, or a check the suite
  // skips (patchbay never listed), fails the run.
  assert.ok(skills.every((r) => r.scored && r.strict && r.revision === "2026-07-28"));
  // No prefetch: the scenario's server counts reads; patchbay only lists.
  const listing = stepsFor("sep-2640-client-no-prefetch", {});
  assert.ok(listing.every((step) => step.args[0] === "skills" && step.args[1] === "list"));
  // Verify: the suite ignores the client's exit code there, so the adapter's own check
  // (patchbay must exit 1, refusing) is read from its output and fails the run.
  for (const mode of ["digest", "size", "frontmatter"]) {
    const [show] = stepsFor(`sep-2640-client-verify-${mode}`, {});
    assert.deepEqual(show.args, ["skills", "show", "conformance:pdf-processing"]);
    assert.equal(show.refuses, true);
  }
  assert.match("$ patchbay skills show x\npatchbay exited 0, expected 1\n", UNEXPECTED_EXIT);
  assert.doesNotMatch("error: Skill refused: conformance:pdf-processing", UNEXPECTED_EXIT);
});
