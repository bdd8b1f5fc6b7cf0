/**
 * The real entry point (`deno task start`, under the start task's permission flags)
 * with a configuration mixing a good server and broken ones: the status block, the
 * diagnoses, the session going on with the servers that connected, and no process left
 * behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  configWith,
  runPatchbay,
  type Sandbox,
  sandbox,
  spawnStartTask,
  writeConfig,
} from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import {
  assumingClosed,
  eventually,
  FIXTURE_SERVER,
  freePort,
  processesWith,
} from "../support/servers.ts";
import { bounded } from "../support/bounded.ts";

/** One start-up of patchbay with a good, an offline, a confused and a parked server. */
async function startUp(box: Sandbox, tag: string, closedPort: number) {
  // The confused server binds this port itself (another program may take it first: its
  // EADDRINUSE then shows in the output, and the start-up is tried again).
  const httpPort = freePort();
  const config = await writeConfig(
    box,
    configWith({
      good: { command: NODE, args: [everythingEntry(), "stdio", tag] },
      offline: { transport_type: "streamable_http", url: `http://127.0.0.1:${closedPort}/mcp` },
      // An HTTP server configured as stdio. The diagnosis probes the port the process
      // announces, which the plan does not grant (a port no configuration names): hence
      // --unrestricted below. Deno still refuses /proc (only reading is unrestricted there,
      // and the diagnosis works from what the process announces).
      confused: {
        command: NODE,
        args: [everythingEntry(), "streamableHttp", tag],
        env: { PORT: String(httpPort) },
        // Long enough for node to start and announce its port on a loaded machine.
        timeout: 10,
      },
      parked: { command: "patchbay-never-started", disabled: true },
    }),
  );
  const result = await runPatchbay(box, ["--unrestricted", "--config", config]);
  return { result, out: result.stderr, httpPort };
}

/** Start-ups tried when the confused server's port was taken before it could bind it. */
const START_UP_ATTEMPTS = 3;

Deno.test("start-up prints each server's state and every failure's cause and remedy", async () => {
  await using box = await sandbox();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const closedPort = freePort();
  await assumingClosed(closedPort, async () => {
    let run = await startUp(box, tag, closedPort);
    for (let attempt = 1; attempt < START_UP_ATTEMPTS && /EADDRINUSE/.test(run.out); attempt++) {
      run = await startUp(box, tag, closedPort);
    }
    const { result, out, httpPort } = run;
    // Failed servers do not stop the session: it runs (stdin is empty, so it ends at once)
    // with the servers that did connect, and ends normally.
    assert.equal(result.code, 0, out);
    assert.match(out, /Servers {2}1 of 3 servers connected/);
    assert.match(out, /✓ good\s+connected\s+stdio\s+\d+ tools, 4 prompts, 7 resources/);
    assert.match(out, /- parked\s+disabled/);

    assert.match(out, /✗ offline\s+failed\s+streamable_http\s+http:\/\/127\.0\.0\.1:\d+\/mcp/);
    assert.ok(
      out.includes("error: Failed to connect to server 'offline': Session terminated"),
      out,
    );
    assert.ok(
      out.includes(
        `cause:  Connection refused: nothing is listening at 127.0.0.1:${closedPort} (the server is not running at the configured address)`,
      ),
      out,
    );
    assert.match(out, /remedy: start the server first, then the client/);

    assert.ok(
      out.includes("error: Failed to connect to server 'confused': Session terminated"),
      out,
    );
    assert.ok(
      out.includes(
        `cause:  wrong transport_type: the process does not speak MCP on stdio; it serves MCP over HTTP (streamable_http) at http://127.0.0.1:${httpPort}/mcp, found by probing`,
      ),
      out,
    );
    assert.doesNotMatch(out, /fetch failed|<html/i);

    assert.deepEqual(processesWith(tag), [], "server processes left behind");

    // The servers' stderr went to the log, not the terminal.
    const logText = await Deno.readTextFile(
      join(box.home, ".local", "state", "patchbay", "patchbay.log"),
    );
    assert.match(logText, /\[connections:server:good:stderr\] Starting default \(STDIO\) server/);
    assert.doesNotMatch(out, /Starting default \(STDIO\) server/);
  });
});

Deno.test("with every server connected the session starts and ends cleanly (exit 0)", async () => {
  await using box = await sandbox();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const config = await writeConfig(
    box,
    configWith({ good: { command: NODE, args: [everythingEntry(), "stdio", tag] } }),
  );
  const result = await runPatchbay(box, ["--config", config]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /Servers {2}1 of 1 server connected/);
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("Ctrl+C during start-up closes every server and exits with 130", async () => {
  await using box = await sandbox();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const config = await writeConfig(
    box,
    configWith({
      silent: {
        command: DENO,
        args: ["run", "--no-config", FIXTURE_SERVER, "--silent", `--tag=${tag}`],
        // A day: a start-up that waited for it, not for Ctrl+C, fails at the bound below.
        timeout: 86_400,
      },
    }),
  );
  const child = await spawnStartTask(box, config, "piped");
  await eventually(() => processesWith(tag).length === 1, "server started");
  child.kill("SIGINT");
  const { code } = await bounded(
    child.output(),
    "patchbay to exit on Ctrl+C (not at the server's one-day timeout)",
    undefined,
    () => child.kill("SIGKILL"),
  );
  assert.equal(code, 130);
  assert.deepEqual(processesWith(tag), []);
});
