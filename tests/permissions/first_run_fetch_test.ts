/**
 * A first run fetches only what runs: `deno task` installs every package of deno.json's
 * import map and of deno.lock before the `start` task begins, so neither may name what only
 * the tests, benchmarks or the conformance suite use. The one exception is the MCP server
 * SDK the test fixtures import (deno.lock records every package a test resolves); the
 * figures are in docs/first-run.md.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { SUITE } from "../../scripts/conformance.ts";
import { projectLock, pruneLock, runtimeSpecifiers } from "../support/lock_closure.ts";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

/** Test-only packages deno.lock may still hold, with why. */
const TOLERATED_TEST_ONLY = ["npm:@modelcontextprotocol/server@2.4.0"];

Deno.test("deno.json's import map names only what the client imports", async () => {
  const manifest = JSON.parse(await Deno.readTextFile(`${PROJECT}/deno.json`));
  const imported = new Set(await runtimeSpecifiers());
  for (const [name, target] of Object.entries(manifest.imports as Record<string, string>)) {
    assert.ok(imported.has(target), `'${name}' (${target}) is not imported by the client`);
  }
  assert.ok(SUITE.startsWith("npm:"), "the conformance suite is pinned by its full specifier");
});

Deno.test("deno.lock holds the client's packages, and beyond them only the server SDK the fixtures use", async () => {
  const lock = await projectLock();
  const client = pruneLock(lock, await runtimeSpecifiers());
  const tolerated = pruneLock(lock, TOLERATED_TEST_ONLY);
  const extra = Object.keys(lock.npm).filter((key) =>
    !(key in client.npm) && !(key in tolerated.npm)
  );
  assert.deepEqual(extra, [], "packages a first run would fetch for nothing");
  assert.ok(
    !Object.keys(lock.npm).some((key) => key.startsWith("@modelcontextprotocol/conformance@")),
  );
  assert.ok(Object.keys(client.npm).length < 30, `${Object.keys(client.npm).length} packages`);
});
