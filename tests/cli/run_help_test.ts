/** `patchbay run --help` tells a script what each exit code means, servers failing included. */

import assert from "node:assert/strict";
import { runPatchbay, sandbox } from "../support/cli.ts";

Deno.test("run --help lists the exit codes, 3 for failed servers", async () => {
  await using box = await sandbox();
  const help = await runPatchbay(box, ["run", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /\nExit codes:\n {2}0 {4}answered\n/);
  assert.match(
    help.stdout,
    /\n {2}3 {4}servers failed: every enabled server .*\n.*--require-servers/,
  );
  assert.match(help.stdout, /\n {2}130 {2}interrupted/);
});
