/**
 * What is said about an entry's `roots` is true (docs/configuration.md): under the
 * permission plan, patchbay may not look at folders it only offers to servers (`.`, the
 * configuration's own folder, and `/tmp`-like folders elsewhere), so it says nothing about
 * them rather than that they "do not exist"; `patchbay config check`, which may look,
 * reports the folder that is really missing and only that one. The configuration is the
 * fixture: roots outside everything the plan grants, one of them missing. Through
 * `deno task start`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";

Deno.test("roots outside the plan are not reported missing; config check reports the one that is", async () => {
  await using box = await sandbox();
  const elsewhere = await Deno.makeTempDir({ prefix: "patchbay-root-" });
  try {
    const missing = join(elsewhere, "not-made-yet");
    await writeConfig(
      box,
      configWith({
        everything: {
          command: NODE,
          args: [everythingEntry(), "stdio"],
          roots: [".", elsewhere, missing],
        },
      }),
    );

    const tools = await runPatchbay(box, ["tools"]);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /echo/);
    for (const folder of [box.cwd, elsewhere]) {
      assert.ok(
        !tools.stderr.includes(`the root folder ${folder} does not exist`),
        `an existing root was reported missing:\n${tools.stderr}`,
      );
    }

    const check = await runPatchbay(box, ["config", "check"]);
    assert.equal(check.code, 0, check.stderr);
    const said = [...check.stdout + check.stderr].join("");
    assert.match(said, new RegExp(`roots\\[2\\]: the root folder ${missing} does not exist`));
    assert.doesNotMatch(said, /roots\[[01]\]: the root folder/, "only the missing one is named");
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
});
