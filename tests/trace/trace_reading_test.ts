/**
 * Reading a trace a person was handed (docs/trace.md): `trace show` and `trace stats`
 * through `deno task start`, on the hostile trace of `tests/fixtures/hostile_trace.ts`.
 * Lines that are not trace lines are skipped and counted, never a crash; no control or
 * invisible character reaches the output raw, `--json` included, and the JSON reads back
 * the same names.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox } from "../support/cli.ts";
import {
  GOOD_LINES,
  HOSTILE_SERVER,
  hostileTrace,
  INVISIBLE_CHARACTERS,
  MALFORMED_LINES,
} from "../fixtures/hostile_trace.ts";
import { parseTrace } from "../../lib/trace/timeline.ts";
import { escapeInvisible, safeJson } from "../../lib/text/json_text.ts";

function assertNoRaw(text: string, what: string): void {
  for (const char of INVISIBLE_CHARACTERS) {
    const code = char.codePointAt(0)!.toString(16);
    assert.ok(!text.includes(char), `${what} holds U+${code} raw`);
  }
}

Deno.test("trace show and stats skip the lines that are not trace lines, count them, and show the rest", async () => {
  await using box = await sandbox();
  const file = join(box.cwd, "handed.jsonl");
  await Deno.writeTextFile(file, hostileTrace());
  const skipped = new RegExp(
    `${MALFORMED_LINES.length} lines of .*handed\\.jsonl were skipped: not a trace line`,
  );

  const show = await runPatchbay(box, ["trace", "show", file]);
  assert.equal(show.code, 0, show.stderr);
  assert.doesNotMatch(show.stderr, /Internal error/);
  assert.match(show.stderr, skipped);
  const shown = show.stdout.trimEnd().split("\n");
  assert.equal(shown.length, GOOD_LINES.length, show.stdout);
  assert.match(shown[1], /←\s+tools\/list\S* #1 result\s+2\.5 ms/);
  assertNoRaw(show.stdout, "trace show");

  const table = await runPatchbay(box, ["trace", "stats", file]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stderr, skipped);
  assertNoRaw(table.stdout, "trace stats");

  const json = await runPatchbay(box, ["trace", "stats", file, "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.match(json.stderr, skipped);
  assertNoRaw(json.stdout, "trace stats --json");
  const rows = JSON.parse(json.stdout);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].server, HOSTILE_SERVER, "the escapes read back the same name");
  assert.equal(rows[0].count, 1);
  assert.equal(rows[0].p50, 2.5);
  assert.equal(rows[0].bytes, 100);
});

Deno.test("a trace line's fields are checked for the types the reader relies on", () => {
  const read = parseTrace(hostileTrace());
  assert.equal(read.lines.length, GOOD_LINES.length);
  assert.equal(read.skipped, MALFORMED_LINES.length);
});

Deno.test("safe JSON escapes every control and invisible character and parses back the same", () => {
  const value = { name: HOSTILE_SERVER, nested: [`a\u0000b\u001b[2Jc`, "\u00ad\ufeff\u061c"] };
  const text = safeJson(value, 2);
  assertNoRaw(text, "safeJson");
  const raw = [...text].filter((c) => c !== "\n" && (c < " " || "\u00ad\ufeff\u061c".includes(c)));
  assert.deepEqual(raw, [], "no raw control or format character");
  assert.deepEqual(JSON.parse(text), value);
  assert.equal(escapeInvisible("plain text, ünïcödé, 日本"), "plain text, ünïcödé, 日本");
});
