/**
 * A server that `npx` is still installing is not a slow server: a real `npx` installs
 * @playwright/mcp from an npm registry on loopback (tests/support/npm_registry.ts) that
 * holds each tarball past the entry's `timeout`; patchbay says it is installing, gives the
 * first connect the longer bound, and connects. Once installed, it is an ordinary start.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { NPX_TEST_PACKAGE, TEST_SERVER_PACKAGES } from "../support/deps.ts";
import { startNpmRegistry } from "../support/npm_registry.ts";

const VERSION = TEST_SERVER_PACKAGES[NPX_TEST_PACKAGE];

Deno.test("npx still installing: shown as installing, its first connect outlasts its timeout", async () => {
  // Each tarball is held longer than the entry's whole `timeout`.
  const timeout = 2;
  await using registry = await startNpmRegistry({ tarballDelayMs: (timeout + 1) * 1000 });
  await using box = await sandbox();
  const entry = (timeoutSeconds: number) => ({
    command: "npx",
    args: ["-y", `${NPX_TEST_PACKAGE}@${VERSION}`, "--headless", "--isolated"],
    timeout: timeoutSeconds,
    // The test's own npm cache and the registry on loopback: nothing leaves the machine.
    env: {
      npm_config_registry: registry.url,
      npm_config_cache: join(box.home, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
    },
  });
  await writeConfig(box, configWith({ pw: entry(timeout) }));
  const first = await runPatchbay(box, ["tools", "pw"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stderr,
    new RegExp(
      `^Server 'pw': installing ${NPX_TEST_PACKAGE}@${VERSION} through npx; first connect ` +
        `allowed ${timeout + 120} s$`,
      "m",
    ),
  );
  assert.match(first.stdout, /^pw \(\d+ tools\)/m);
  assert.match(first.stdout, /browser_take_screenshot/);
  assert.ok(registry.requests.some((path) => path.endsWith(".tgz")), registry.requests.join(" "));

  // Installed now: an ordinary start, bound by the entry's own timeout (a roomy one: npx
  // still asks the registry, and the machine may be busy).
  await writeConfig(box, configWith({ pw: entry(60) }));
  const second = await runPatchbay(box, ["tools", "pw"]);
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /installing/);
  assert.match(second.stdout, /^pw \(\d+ tools\)/m);
});
