/**
 * A word too many on the command line is a usage error naming it, never ignored: before,
 * `patchbay call s.t {} extra` called the tool and dropped `extra` without a word, and JSON
 * arguments split by the shell (`{"message": "hi"}` unquoted) lost their second half.
 *
 * @module
 */

import assert from "node:assert/strict";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { fixtureEntry } from "../support/servers.ts";

Deno.test("call with an extra argument is a usage error naming it, and the tool is not called", async () => {
  await using box = await sandbox();
  const entry = fixtureEntry("s");
  await writeConfig(box, configWith({ s: { command: entry.command, args: entry.args } }));
  const result = await runPatchbay(box, ["call", "s.echo", '{"message": "x"}', "extra"]);
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.equal(result.stdout, "", "the tool was not called");
  assert.match(result.stderr, /^error: unexpected argument 'extra' for 'patchbay call'$/m);
  assert.match(
    result.stderr,
    /remedy: usage: patchbay call \[options\] <tool> \[json-args\]; JSON arguments are one word: quote them/,
  );
});

Deno.test("JSON arguments split by the shell are reported, not half used", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({}));
  const result = await runPatchbay(box, ["call", "s.echo", '{"message":', '"hi"}']);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /unexpected argument '"hi"}' for 'patchbay call'/);
});

Deno.test("every fixed-argument command refuses extra words; the word-reading ones keep their own messages", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({}));
  for (
    const [args, name] of [
      [["tools", "s", "more"], "patchbay tools"],
      [["config", "check", "now"], "patchbay config check"],
      [["sessions", "show", "abc", "def"], "patchbay sessions show"],
      [["read", "file:///a", "file:///b"], "patchbay read"],
    ] as const
  ) {
    const result = await runPatchbay(box, [...args]);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, new RegExp(`unexpected argument '${args.at(-1)}' for '${name}'`));
  }
  const typo = await runPatchbay(box, ["sessions", "lsit"]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown command 'lsit' \(did you mean 'list'\?\)/);
  const unknown = await runPatchbay(box, ["tols"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'tols' \(did you mean 'tools'\?\)/);
});
