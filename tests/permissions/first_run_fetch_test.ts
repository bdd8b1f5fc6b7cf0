/**
 * A first run fetches only what runs: `deno task` installs every package of deno.json's
 * import map and of deno.lock before the `start` task begins, so neither may name what only
 * the tests, benchmarks or the conformance suite use. Those keep lock files of their own
 * (`tests/test.lock`, `scripts/conformance.lock`); the figures are in docs/first-run.md.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { SUITE } from "../../scripts/conformance.ts";
import { TEST_LOCK } from "../../scripts/run_tests.ts";
import { packageOf, projectLock, pruneLock, runtimeSpecifiers } from "../support/lock_closure.ts";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

/** The MCP server SDK the test fixtures import (`tests/support/mcp_server_sdk.ts`). */
const SERVER_SDK = "npm:@modelcontextprotocol/server@2.4.0";

Deno.test("deno.json's import map names only what the client imports", async () => {
  const manifest = JSON.parse(await Deno.readTextFile(`${PROJECT}/deno.json`));
  const imported = new Set(await runtimeSpecifiers());
  for (const [name, target] of Object.entries(manifest.imports as Record<string, string>)) {
    assert.ok(
      imported.has(packageOf(target)),
      `'${name}' (${target}) is not imported by the client`,
    );
  }
  assert.ok(SUITE.startsWith("npm:"), "the conformance suite is pinned by its full specifier");
});

Deno.test("deno.lock holds the client's packages and nothing else; the tests' packages are in their own lock", async () => {
  const lock = await projectLock();
  const client = pruneLock(lock, await runtimeSpecifiers());
  const extra = Object.keys(lock.npm).filter((key) => !(key in client.npm));
  assert.deepEqual(extra, [], "packages a first run would fetch for nothing");
  assert.deepEqual(Object.keys(lock.specifiers).sort(), Object.keys(client.specifiers).sort());
  assert.ok(!(SERVER_SDK in lock.specifiers), `${SERVER_SDK} is a test fixture's`);
  assert.ok(
    !Object.keys(lock.npm).some((key) => key.startsWith("@modelcontextprotocol/conformance@")),
  );
  assert.ok(Object.keys(client.npm).length < 30, `${Object.keys(client.npm).length} packages`);
  // The fixtures' pin is the one the tests' lock resolves (the tests run with it).
  const sdk = await Deno.readTextFile(`${PROJECT}/tests/support/mcp_server_sdk.ts`);
  assert.ok(
    sdk.includes(`"${SERVER_SDK}"`),
    "the pin above follows tests/support/mcp_server_sdk.ts",
  );
  const testLock = JSON.parse(await Deno.readTextFile(TEST_LOCK)) as typeof lock;
  assert.ok(SERVER_SDK in testLock.specifiers, `${TEST_LOCK} pins ${SERVER_SDK}`);
});
