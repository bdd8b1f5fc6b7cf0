/**
 * What a stdio server starts dies with it, under narrow flags too. `Deno.kill` (and with it
 * signals to a process group) needs `--allow-run` for every program; under
 * `--allow-run=<commands>` the transport signals the group through the `kill` program,
 * which `patchbay permissions` lists for every configuration with a stdio server.
 *
 * @module
 */

import assert from "node:assert/strict";
import { resolveCommandPath } from "../../lib/permissions/command_path.ts";
import { DENO } from "../support/deps.ts";
import { FIXTURE_SERVER, processesWith } from "../support/servers.ts";

const CONNECT_ONE = new URL("../fixtures/connect_one.ts", import.meta.url).pathname;
const KILL = resolveCommandPath("kill", Deno.env.get("PATH"), Deno.cwd());
const SH = resolveCommandPath("sh", Deno.env.get("PATH"), Deno.cwd());

/**
 * Connects (then closes) `sh -c "sleep <marker> & exec <fixture server>"` under
 * `--allow-run=<allowRun>`, and returns the pids of the sleeper left afterwards.
 */
async function leftBehind(allowRun: string[]): Promise<number[]> {
  // A sleep of an odd length is the marker that finds the grandchild in /proc.
  const marker = `3000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const output = await new Deno.Command(DENO, {
    args: [
      "run",
      "--no-prompt",
      "--allow-env",
      `--allow-run=${allowRun.join(",")}`,
      CONNECT_ONE,
      SH!,
      "-c",
      `sleep ${marker} & exec ${DENO} run --quiet --no-config ${FIXTURE_SERVER}`,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stderr));
  assert.equal(decoder.decode(output.stdout).trim(), '"connected"');
  return processesWith(marker);
}

Deno.test({
  name: "under --allow-run=<commands> with kill, a stdio server's grandchildren end with it",
  ignore: KILL === undefined || SH === undefined,
  async fn() {
    assert.deepEqual(await leftBehind([SH!, KILL!]), [], "the sleeper outlived its server");
  },
});

Deno.test({
  name: "without kill allowed the grandchild is orphaned: the check above can fail",
  ignore: KILL === undefined || SH === undefined,
  async fn() {
    const orphans = await leftBehind([SH!]);
    for (const pid of orphans) Deno.kill(pid, "SIGKILL");
    assert.equal(orphans.length, 1, "a run without kill leaves the sleeper (what main did)");
  },
});
