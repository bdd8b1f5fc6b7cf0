/**
 * The README: the two commands it opens with, the test command CI runs, and its size and
 * width (a person deciding whether to use patchbay reads it in a terminal, in five minutes).
 */

import assert from "node:assert/strict";
import { displayWidth } from "../../lib/terminal/terminal.ts";

const root = new URL("../../", import.meta.url);
const readme = await Deno.readTextFile(new URL("README.md", root));

/** The README's size limit, in bytes. */
const MAX_README_BYTES = 20 * 1024;
/** Columns every README line fits in, code blocks included (recorded output is recorded narrow). */
const MAX_README_COLUMNS = 100;

Deno.test("README opens with the run command and the test command", () => {
  const block = /^# patchbay\n\n```sh\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, "README must start with a sh block");
  const commands = block[1].trim().split("\n").map((line) => line.replace(/\s+#.*$/, ""));
  assert.deepEqual(commands, ["npx -y deno@2.9.6 task start", "npx -y deno@2.9.6 task test"]);
});

Deno.test(".ci/run runs exactly the README's test command, then the conformance suite", async () => {
  const ci = await Deno.readTextFile(new URL(".ci/run", root));
  const commands = ci.trim().split("\n").filter((l) => l && !l.startsWith("#"));
  const readmeTest = /^(npx -y deno@[\d.]+ task test)\s+#/m.exec(readme)?.[1];
  assert.equal(readmeTest, "npx -y deno@2.9.6 task test");
  const at = commands.indexOf(readmeTest);
  assert.ok(at >= 0, `.ci/run does not run "${readmeTest}"`);
  assert.deepEqual(commands.slice(at + 1), ["npx -y deno@2.9.6 task conformance"]);
});

Deno.test("README is at most 20 KB and every line of it fits 100 columns", () => {
  const bytes = new TextEncoder().encode(readme).length;
  assert.ok(bytes <= MAX_README_BYTES, `README.md is ${bytes} bytes, over ${MAX_README_BYTES}`);
  const wide = readme.split("\n").flatMap((text, i) =>
    displayWidth(text) > MAX_README_COLUMNS ? [`line ${i + 1} (${displayWidth(text)})`] : []
  );
  assert.deepEqual(wide, [], `README lines wider than ${MAX_README_COLUMNS} columns`);
});

Deno.test("README shows how to add servers, and what to do about the common errors", () => {
  for (const phrase of ["patchbay mcp add ", "patchbay mcp import", "patchbay doctor"]) {
    assert.ok(readme.includes(phrase), `README does not show ${phrase}`);
  }
  const fixes = readme.split("\n").filter((line) => /^\| `[^|]+` +\| /.test(line));
  for (
    const message of ["Invalid API key", "Failed to connect to server", "Invalid configuration"]
  ) {
    assert.ok(fixes.some((row) => row.includes(message)), `README's table lacks ${message}`);
  }
});
