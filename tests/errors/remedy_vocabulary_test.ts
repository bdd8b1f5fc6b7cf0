/**
 * Rows own their remedies: no remedy is written as literal words in `lib/` or `commands/`
 * outside the failure table (`lib/errors/failure_table.ts`), but for the few listed here,
 * each with why it cannot be a row or a step. `tests/support/remedy_scan.ts` says what
 * counts as a remedy written out.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Finding, findRemedies, remedyParameters, tokenize } from "../support/remedy_scan.ts";

const ROOT = join(import.meta.dirname!, "../..");
/**
 * The failure table: its rows and `STEPS`, and the steps of an area kept in a file of their
 * own (`lib/errors/<area>_steps.ts`) so the table stays within the size of a file.
 */
const TABLE = /^lib\/errors\/(?:failure_table|\w+_steps)\.ts$/;

/**
 * Remedies written outside the table on purpose: `file: ` and the literal's first words (no
 * line number, so edits elsewhere in a file do not move them), each with a comment saying
 * why it cannot be a row or a step. Empty: issue 37's backlog of 126 moved into the rows,
 * `STEPS` and the steps of each area (`lib/errors/<area>_steps.ts`), worded per surface where
 * one names a slash command or a flag. The next test fails on an entry no longer found.
 */
const ALLOWED: readonly string[] = [];

async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts") && !TABLE.test(path)) {
        files.set(path, await Deno.readTextFile(join(ROOT, path)));
      }
    }
  };
  await walk("lib");
  await walk("commands");
  return files;
}

async function findings(): Promise<Finding[]> {
  const files = await sources();
  const parameters = new Map<string, number>();
  for (const source of files.values()) {
    for (const [name, index] of remedyParameters(tokenize(source), true)) {
      parameters.set(name, index);
    }
  }
  return [...files].flatMap(([file, source]) => findRemedies(file, source, parameters))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

const key = (finding: Finding) => `${finding.file}: ${finding.text}`;

Deno.test("remedies: none is written outside the failure table but the listed", async () => {
  const found = await findings();
  const outside = found.filter((finding) => !ALLOWED.includes(key(finding)));
  assert.deepEqual(
    outside.map((f) => `${f.file}:${f.line}: ${f.text}`),
    [],
    "remedies written outside lib/errors/failure_table.ts: make them rows or STEPS",
  );
});

Deno.test("remedies: every listed remedy is still written out (the list only shrinks)", async () => {
  const keys = new Set((await findings()).map(key));
  assert.deepEqual(ALLOWED.filter((entry) => !keys.has(entry)), []);
});

Deno.test("remedies: the scanner finds each form of a remedy written out", () => {
  const source = [
    'const a = { remedy: "one" };',
    "const b = { remedy:\n  `two ${x}` };",
    'const c = { remedy: { repl: "three /x", script: "three" } };',
    'const d = { remedy: remedyOf("four") };',
    "const e = { remedy: perSurface`${STEPS.connect}; five` };",
    'const SIX_REMEDY = "six";',
    "class E extends PatchbayError { constructor(a: string, remedy: string) { super(a); } }",
    'const f = new E("a", "seven");',
    "const fail = (reason: string, remedy: RemedyText) => new E(reason, remedy);",
    'fail("a", "eight");',
    '// remedy: "a comment"',
    'const g = { remedy: ROWS.tool.remedy, other: "x", re: /remedy: "no"/ };',
    "const h = { remedy: perSurface`${STEPS.connect}` };",
    'const i = { remedy: perSurface`${STEPS.connect}${"; nine"}` };',
  ].join("\n");
  const parameters = remedyParameters(tokenize(source), true);
  assert.deepEqual(
    findRemedies("x.ts", source, parameters).map((f) => `${f.line} ${f.text}`),
    [
      "1 one",
      "3 two ${x}",
      "4 three /x",
      "5 four",
      "6 ${STEPS.connect}; five",
      "7 six",
      "9 seven",
      "11 eight",
      '15 ${STEPS.connect}${"; nine"}',
    ],
  );
});

/** For a maintainer: `deno run --allow-read tests/errors/remedy_vocabulary_test.ts` lists them. */
if (import.meta.main) {
  for (const f of await findings()) console.log(`${f.file}:${f.line}: ${JSON.stringify(key(f))}`);
}
