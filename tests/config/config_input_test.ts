/**
 * Hostile or broken bytes in servers_config.json, through `patchbay config check` on real
 * files: deep nesting (100,000 `[` used to end in "Internal error: Maximum call stack size
 * exceeded … this is a bug"), bytes that are not UTF-8 and lone surrogates (both used to
 * be accepted silently as U+FFFD).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { MAX_NESTING, parseJson } from "../../lib/config/json.ts";
import { runPatchbay, sandbox } from "../support/cli.ts";

const VALID_START = '{\n  "LLM": { "provider": "openai", "model": "gpt-4o-mini" },\n  ';

async function check(bytes: Uint8Array | string) {
  const box = await sandbox();
  const file = join(box.cwd, "servers_config.json");
  await (typeof bytes === "string" ? Deno.writeTextFile(file, bytes) : Deno.writeFile(file, bytes));
  const result = await runPatchbay(box, ["config", "check"]);
  await box[Symbol.asyncDispose]();
  assert.doesNotMatch(result.stderr, /Maximum call stack|this is a bug|Internal error/);
  return result;
}

Deno.test("100,000 '[' is a syntax error at the bracket too deep, not a crash", async () => {
  const result = await check("[".repeat(100_000));
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    new RegExp(
      `^error: Invalid configuration: '\\[' nests deeper than ${MAX_NESTING} levels at line 1, ` +
        `column ${MAX_NESTING + 1} of servers_config.json`,
      "m",
    ),
  );
  assert.match(result.stderr, /look for stray '\[' or '\{'/);
});

Deno.test("deep nesting inside a valid configuration is reported where it starts", async () => {
  const deep = '{"a":'.repeat(40) + "1" + "}".repeat(40);
  const result = await check(
    `${VALID_START}"mcpServers": { "s": { "command": "x", "env": ${deep} } }\n}\n`,
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /nests deeper than 32 levels at line 3, column \d+/);
  // The parser itself stops at the limit: no value, one fault.
  const parsed = parseJson("[".repeat(MAX_NESTING) + "]".repeat(MAX_NESTING));
  assert.deepEqual(parsed.faults, []);
  assert.equal(parseJson("[".repeat(MAX_NESTING + 1)).faults.length, 1);
});

Deno.test("a byte that is not UTF-8 is reported with its line and column", async () => {
  const encoder = new TextEncoder();
  const before = encoder.encode(`${VALID_START}"mcpServers": { "s": { "command": "caf`);
  const after = encoder.encode('" } }\n}\n');
  // Latin-1 é (0xE9): a lossy decoder shows it as U+FFFD and the command is silently wrong.
  const latin1 = await check(new Uint8Array([...before, 0xe9, ...after]));
  assert.equal(latin1.code, 1);
  assert.match(
    latin1.stderr,
    /Invalid configuration: byte 0xE9 is not valid UTF-8 here at line 3, column 41 of servers_config\.json/,
  );
  assert.match(latin1.stderr, /save the file as UTF-8; it is probably in another encoding/);
  // A surrogate encoded in UTF-8 bytes (CESU-8): not UTF-8 either.
  const cesu = await check(new Uint8Array([...before, 0xed, 0xa0, 0x80, ...after]));
  assert.equal(cesu.code, 1);
  assert.match(
    cesu.stderr,
    /an encoded lone surrogate \(bytes 0xED 0xA0 \.\.\.\) is not valid UTF-8/,
  );
  assert.match(cesu.stderr, /line 3, column 41/);
});

Deno.test("a UTF-16 file is named as such", async () => {
  const text = `${VALID_START}"mcpServers": {}\n}\n`;
  const utf16 = new Uint8Array(2 + text.length * 2);
  utf16.set([0xff, 0xfe]);
  for (let i = 0; i < text.length; i++) utf16[2 + i * 2] = text.charCodeAt(i);
  const result = await check(utf16);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /the file is UTF-16 text, not UTF-8 at line 1, column 1/);
});

Deno.test("a lone surrogate escape is reported; a pair and a BOM are fine", async () => {
  const lone = await check(
    `${VALID_START}"mcpServers": { "s": { "command": "x\\uD800y" } }\n}\n`,
  );
  assert.equal(lone.code, 1);
  assert.match(lone.stderr, /lone surrogate \\uD800 at line 3, column 39/);
  const lowFirst = await check(
    `${VALID_START}"mcpServers": { "s": { "command": "\\uDE00\\uD83D" } }\n}\n`,
  );
  assert.match(lowFirst.stderr, /lone surrogate \\uDE00/);
  const pair = await check(
    `\uFEFF${VALID_START}"mcpServers": { "s": { "command": "x\\uD83D\\uDE00" } }\n}\n`,
  );
  assert.equal(pair.code, 0, pair.stderr);
  assert.match(pair.stdout, /x😀/);
});
