/**
 * The connection layer through the real entry point (`deno task start`): what a person
 * running `patchbay call` or `patchbay tools` sees of roots and of closing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, filesystemEntry, NODE } from "../support/deps.ts";

/** The log a sandboxed patchbay writes (XDG state directory under the sandbox's HOME). */
const logOf = (home: string) => join(home, ".local", "state", "patchbay", "patchbay.log");

Deno.test("server-filesystem run from elsewhere keeps its configured folder, not the working directory", async () => {
  await using box = await sandbox();
  const shared = join(box.home, "shared");
  await Deno.mkdir(shared);
  await Deno.writeTextFile(join(box.cwd, ".env"), `SHARED_DIR=${shared}\n`);
  await writeConfig(
    box,
    configWith({ files: { command: NODE, args: [filesystemEntry(), "${SHARED_DIR}"] } }),
  );
  const result = await runPatchbay(box, ["call", "files.list_allowed_directories"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim(), `Allowed directories:\n${await Deno.realPath(shared)}`);
  const cwd = await runPatchbay(box, [
    "call",
    "files.list_directory",
    JSON.stringify({ path: box.cwd }),
  ]);
  assert.equal(cwd.code, 1);
  assert.match(cwd.stdout + cwd.stderr, /Access denied - path outside allowed directories/);
});

Deno.test("patchbay tools closes its connections without a warning after the fact", async () => {
  await using box = await sandbox();
  const roots = join(box.home, "project");
  await Deno.mkdir(roots);
  // With roots declared, server-everything registers its roots tool a moment after the
  // handshake and announces it with tools/list_changed, usually while patchbay closes.
  await writeConfig(
    box,
    configWith({
      everything: { command: NODE, args: [everythingEntry(), "stdio"], roots: [roots] },
    }),
  );
  const result = await runPatchbay(box, ["tools", "everything"]);
  assert.equal(result.code, 0, result.stderr);
  const log = await Deno.readTextFile(logOf(box.home));
  assert.match(log, /\[connections:server:everything\] state closed/);
  assert.deepEqual(log.split("\n").filter((line) => / WARN /.test(line)), []);
});
