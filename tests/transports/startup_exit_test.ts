/**
 * Spawn first, leave promptly: a scripting command starts its stdio servers
 * before it loads the code that speaks to them, the transport takes the process started
 * ahead instead of starting another, whatever nobody took is ended, and after the last
 * answer the servers are signalled at once rather than given time to exit by themselves,
 * with nothing left running afterwards.
 *
 * @module
 */

import assert from "node:assert/strict";
import { childEnvironment } from "../../lib/transports/process.ts";
import { claimPrespawned, endUnclaimed, prespawn } from "../../lib/transports/spawn.ts";
import { StdioTransport } from "../../lib/transports/stdio.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { eventually, FIXTURE_SERVER, processAlive, processesWith } from "../support/servers.ts";

const newTag = () => `patchbay-test-${crypto.randomUUID()}`;

function fixtureArgs(tag: string, flags: string[] = []): string[] {
  return ["run", "--quiet", "--no-config", FIXTURE_SERVER, ...flags, `--tag=${tag}`];
}

Deno.test("a transport takes the process started ahead for its entry, and only once", async () => {
  const tag = newTag();
  const args = fixtureArgs(tag);
  const env = childEnvironment({}, (name) => Deno.env.get(name));
  const pid = prespawn({ command: DENO, args, env });
  assert.ok(pid !== undefined, "the fixture did not start");
  const transport = new StdioTransport({ command: DENO, args });
  try {
    await transport.start();
    assert.equal(transport.pid, pid, "the transport started a second process");
    assert.equal(claimPrespawned({ command: DENO, args, env }), undefined);
  } finally {
    await transport.close();
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("a process started ahead that no transport takes is ended, group and all", async () => {
  const tag = newTag();
  const env = childEnvironment({}, (name) => Deno.env.get(name));
  // --ignore-eof: only a signal ends it; --grandchild: a descendant in its group.
  const pid = prespawn({
    command: DENO,
    args: [
      "run",
      "--quiet",
      "--no-config",
      "--allow-run",
      FIXTURE_SERVER,
      "--ignore-eof",
      "--grandchild",
      `--tag=${tag}`,
    ],
    env,
  });
  assert.ok(pid !== undefined && processAlive(pid));
  await endUnclaimed();
  assert.equal(processAlive(pid), false, "the unclaimed server still runs");
  await eventually(() => processesWith(tag).length === 0, "the fixture's processes to end");
  assert.equal(claimPrespawned({ command: DENO, args: [], env }), undefined);
});

Deno.test("after the last answer a server that asked for roots and ignores stdin's end is signalled at once, and nothing is left", async () => {
  await using box = await sandbox();
  const tag = newTag();
  const config = await writeConfig(
    box,
    configWith({
      lingering: { command: DENO, args: fixtureArgs(tag, ["--ask-roots", "--ignore-eof"]) },
    }),
  );
  const result = await runPatchbay(box, ["--config", config, "--debug", "tools", "--json"], {
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(result.code, 0, result.stderr);
  const tools = JSON.parse(result.stdout).tools.map((t: { tool: string }) => t.tool);
  assert.ok(tools.includes("echo"), result.stdout);
  // The polite close (wait for the server to exit by itself, up to the grace period) is
  // not taken: the server is signalled as soon as its stdin is closed.
  assert.match(result.stderr, /closing promptly; sending SIGTERM/);
  assert.doesNotMatch(result.stderr, /ignored the end of stdin|sent a request after its stdin/);
  assert.deepEqual(processesWith(tag), [], "a server process outlived patchbay");
});
