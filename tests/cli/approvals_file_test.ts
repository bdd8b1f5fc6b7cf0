/**
 * approvals.json decides which tools run unasked: one that other users may write (or a link
 * to one) is refused as a shared configuration or .env is, with its mode and the chmod that
 * fixes it, by `patchbay approvals` and by a session (which then remembers nothing).
 * Through `deno task start`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox } from "../support/cli.ts";

const EMPTY = JSON.stringify({ version: 1, approvals: [] });

Deno.test("a world-writable approvals.json, or a link to one, is refused with the chmod that fixes it", async () => {
  await using box = await sandbox();
  const state = join(box.home, ".local", "state", "patchbay");
  await Deno.mkdir(state, { recursive: true, mode: 0o700 });
  const file = join(state, "approvals.json");
  await Deno.writeTextFile(file, EMPTY);
  await Deno.chmod(file, 0o666);
  for (const args of [["approvals", "list"], ["approvals", "revoke", "--all"]]) {
    const run = await runPatchbay(box, args);
    assert.equal(run.code, 1, `${args.join(" ")}: ${run.stdout}`);
    assert.match(
      run.stderr,
      /Refusing to use the approvals file .*approvals\.json: other users may write it/,
    );
    assert.match(run.stderr, /the file is writable by every user \(mode 0666\)/);
    assert.match(run.stderr, /remedy: +run `chmod go-w .*approvals\.json`/);
  }
  assert.equal(await Deno.readTextFile(file), EMPTY, "left as it was");

  // A link to such a file: the file it leads to is judged.
  const elsewhere = join(state, "shared-approvals.json");
  await Deno.rename(file, elsewhere);
  await Deno.symlink(elsewhere, file);
  const linked = await runPatchbay(box, ["approvals", "list"]);
  assert.equal(linked.code, 1);
  assert.match(
    linked.stderr,
    /the file it links to, .*shared-approvals\.json, is writable by every user/,
  );

  await Deno.chmod(elsewhere, 0o600);
  const fixed = await runPatchbay(box, ["approvals", "list"]);
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /No remembered approvals for /);
});
