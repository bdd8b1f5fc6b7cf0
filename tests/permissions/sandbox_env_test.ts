/**
 * What the test sandboxes pass on from the machine running the tests, so that the README's
 * test command passes on any network: the certificate variables, and the proxy variables
 * with loopback added to NO_PROXY (test traffic never goes through a proxy).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  configWith,
  proxyEnv,
  runPatchbay,
  sandbox,
  WITHOUT_PROXIES,
  writeConfig,
} from "../support/cli.ts";
import { assumingClosed, freePort, startEverythingHttp } from "../support/servers.ts";

Deno.test("proxy variables are passed on with loopback added to NO_PROXY, both spellings", () => {
  const machine: Record<string, string> = {
    HTTPS_PROXY: "http://proxy.corp:3128",
    no_proxy: "corp.example",
  };
  assert.deepEqual(proxyEnv((name) => machine[name]), {
    HTTPS_PROXY: "http://proxy.corp:3128",
    NO_PROXY: "127.0.0.1,localhost,::1",
    no_proxy: "corp.example,127.0.0.1,localhost,::1",
  });
  // Without a proxy nothing is added.
  assert.deepEqual(
    proxyEnv((name) => ({ NO_PROXY: "corp.example" } as Record<string, string>)[name]),
    {
      NO_PROXY: "corp.example",
    },
  );
  assert.deepEqual(proxyEnv(() => undefined), {});
});

Deno.test("a sandbox on a machine with a proxy that does not answer still reaches its loopback servers", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  const deadProxy = freePort();
  await assumingClosed(deadProxy, async () => {
    const dead = `http://127.0.0.1:${deadProxy}`;
    const machine: Record<string, string> = {
      HTTP_PROXY: dead,
      HTTPS_PROXY: dead,
      ALL_PROXY: dead,
    };
    // The sandbox as a machine with these variables builds it.
    await using box = await sandbox({ ...WITHOUT_PROXIES, ...proxyEnv((name) => machine[name]) });
    await writeConfig(box, configWith({ local: { url: `${server.origin}/mcp` } }));
    const result = await runPatchbay(box, ["call", "local.echo", '{"message": "direct"}']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "Echo: direct\n");
    assert.equal(result.stderr, "", "nothing was downloaded, nothing went through the proxy");
  });
});
