/**
 * `patchbay tools` through `deno task start`, piped as a script reads it: each description
 * whole on its line (not cut at a fixed 110 characters, not wrapped into a pipe), and a
 * hostile one bounded, with what was left out counted and `--json` giving it whole.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { DESCRIPTION_MAX_CHARS } from "../../lib/ui/listing.ts";

const HOSTILE = fileURLToPath(new URL("../fixtures/hostile_server.ts", import.meta.url));
/** The longest description server-everything gives, as it gives it. */
const GZIP_DESCRIPTION = "Compresses a single file using gzip compression. Depending upon the " +
  "selected output type, returns either the compressed data as a gzipped resource or a " +
  "resource link, allowing it to be downloaded in a subsequent request during the current " +
  "session.";

Deno.test("tools piped: every description whole on its line; a hostile one bounded, whole in --json", async () => {
  await using box = await sandbox();
  const length = 50_000;
  await writeConfig(
    box,
    configWith({
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      h: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", HOSTILE, `--long-description=${length}`],
      },
    }),
  );
  const listed = await runPatchbay(box, ["tools"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(
    listed.stdout.split("\n").includes(`    ${GZIP_DESCRIPTION}`),
    `not whole on one line:\n${listed.stdout}`,
  );
  const verbose = listed.stdout.split("\n").find((line) => line.startsWith("    word0 "));
  assert.ok(verbose, listed.stdout);
  const left = (length - DESCRIPTION_MAX_CHARS).toLocaleString("en-US");
  assert.ok(verbose.endsWith(`… (${left} more characters)`), verbose.slice(-80));
  assert.equal(verbose.length, 4 + DESCRIPTION_MAX_CHARS + `… (${left} more characters)`.length);
  const json = await runPatchbay(box, ["tools", "--json"]);
  const tools = JSON.parse(json.stdout).tools as { tool: string; description: string }[];
  assert.equal(tools.find((t) => t.tool === "verbose")!.description.length, length);
});
