/**
 * A server's skill entries read (`lib/skills/entries.ts`, `registry.ts`'s `resolveServer`,
 * `refusal.ts`): the path that names a skill, which entry a name means, the checks an entry
 * must pass before any file of it is fetched, and a failed verification as the error a
 * person reads. Pure.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Skill } from "@modelcontextprotocol/client/ext/skills";
import { SkillVerificationError } from "@modelcontextprotocol/client/ext/skills";
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { SkillNotFoundError, SkillRefusedError } from "../../lib/errors.ts";
import {
  checkEntry,
  filePath,
  findEntry,
  listedSize,
  SKILL_MAX_FILE_BYTES,
  skillPath,
  summaryOf,
} from "../../lib/skills/entries.ts";
import { resolveServer } from "../../lib/skills/registry.ts";
import { refusal } from "../../lib/skills/refusal.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";

const digest = `sha256:${"a".repeat(64)}`;

function entry(path: string, name: string, files: [string, number][] = []): Skill {
  const uri = `skill://${path}/SKILL.md`;
  return {
    uri,
    frontmatter: { name, description: `${name} does things` },
    resources: [
      { uri, digest, size: 100 },
      ...files.map(([file, size]) => ({ uri: `skill://${path}/${file}`, digest, size })),
    ],
  };
}

Deno.test("skill paths: the SKILL.md URI without scheme and file, files relative to the root", () => {
  assert.equal(skillPath("skill://pdf-processing/SKILL.md"), "pdf-processing");
  assert.equal(skillPath("skill://acme/billing/refunds/SKILL.md"), "acme/billing/refunds");
  assert.equal(skillPath("github://o/r/skills/x/SKILL.md"), "o/r/skills/x");
  const pdf = entry("pdf-processing", "pdf-processing", [["references/FORMS.md", 20]]);
  assert.equal(filePath(pdf, "skill://pdf-processing/references/FORMS.md"), "references/FORMS.md");
  assert.equal(listedSize(pdf, "references/FORMS.md"), 20);
  assert.equal(listedSize(pdf, "skill://pdf-processing/SKILL.md"), 100);
  assert.equal(listedSize(pdf, "nope.md"), undefined);
  assert.deepEqual(summaryOf("docs", pdf), {
    server: "docs",
    id: "docs:pdf-processing",
    name: "pdf-processing",
    description: "pdf-processing does things",
    uri: "skill://pdf-processing/SKILL.md",
    files: ["references/FORMS.md"],
    bytes: 120,
  });
});

Deno.test("a name means one entry: by path, by a name no other has, or by URI; never a guess", () => {
  const entries = [
    entry("acme/billing/refunds", "refunds"),
    entry("acme/support/refunds", "refunds"),
    entry("git-workflow", "git-workflow"),
  ];
  assert.equal(findEntry("s", entries, "acme/support/refunds"), entries[1]);
  assert.equal(findEntry("s", entries, "git-workflow"), entries[2]);
  assert.equal(findEntry("s", entries, "skill://acme/billing/refunds/SKILL.md"), entries[0]);
  assert.throws(() => findEntry("s", entries, "refunds"), (error: SkillNotFoundError) => {
    assert.equal(error.message, "Unknown skill: s:refunds");
    assert.match(error.reason, /lists 2 skills named 'refunds': s:acme\/billing\/refunds, s:acme/);
    return true;
  });
  assert.throws(() => findEntry("s", [], "x"), /Unknown skill: s:x/);
});

Deno.test("server names: the longest configured name before the colon; names may hold one", () => {
  assert.deepEqual(resolveServer("docs:pdf", ["docs", "d"]), { server: "docs", skill: "pdf" });
  assert.deepEqual(resolveServer("a:b:c", ["a", "a:b"]), { server: "a:b", skill: "c" });
  assert.throws(() => resolveServer("pdf", ["docs"]), (error: SkillNotFoundError) => {
    assert.equal(error.code, "skill_not_found");
    assert.match(error.reason, /<server>:<skill>, and no configured server \(docs\) starts 'pdf'/);
    assert.deepEqual(error.remedies, ROWS.skill_not_found.remedy);
    return true;
  });
  assert.throws(() => resolveServer("docs:", ["docs"]), /Unknown skill/);
});

Deno.test("entries are refused before any fetch: no digests, past the limits, a file too large", () => {
  const refused = (check: () => void, pattern: RegExp) =>
    assert.throws(check, (error: SkillRefusedError) => {
      assert.equal(error.code, "skill_refused");
      assert.equal(error.refusal, "entry");
      assert.match(error.reason, pattern);
      return true;
    });
  const dynamic: Skill = { ...entry("d", "d"), resources: "dynamic" };
  refused(() => checkEntry("s", dynamic), /"resources": "dynamic"\), so there are no digests/);
  const many = entry("m", "m", Array.from({ length: 512 }, (_, i) => [`f${i}`, 1]));
  refused(() => checkEntry("s", many), /lists 513 files of 0\.0 MB in all, more than a skill/);
  const large = entry("l", "l", [["big.bin", 17 * 1024 * 1024]]);
  refused(() => checkEntry("s", large), /of 17\.0 MB in all/);
  const file = entry("f", "f", [["data/x.txt", SKILL_MAX_FILE_BYTES + 1]]);
  checkEntry("s", file);
  refused(
    () => checkEntry("s", file, { path: "data/x.txt", size: SKILL_MAX_FILE_BYTES + 1 }),
    /lists data\/x\.txt at 4\.0 MB, more than patchbay reads of one skill file \(4\.0 MB\)/,
  );
  checkEntry("s", file, { path: "data/x.txt", size: SKILL_MAX_FILE_BYTES });
});

Deno.test("a failed verification reads as a refusal naming the check; other failures stay theirs", () => {
  const cases = [
    ["digest", /content does not match the SHA-256 digest/],
    ["size", /length differs from the size/],
    ["frontmatter", /frontmatter differs from the server's entry/],
    ["unlisted", /not one the skill's entry lists/],
  ] as const;
  for (const [reason, meaning] of cases) {
    const error = refusal("s", "x", new SkillVerificationError(reason, "skill://x/SKILL.md", "m"));
    assert.ok(error instanceof SkillRefusedError);
    assert.equal(error.message, "Skill refused: s:x");
    assert.equal(error.refusal, reason);
    assert.match(error.reason, meaning);
    if (reason === "unlisted") {
      assert.match(error.remedies.script, /ask for a file the skill lists/);
    } else {
      // The row's remedy, naming the skill's server (`/refresh s`).
      assert.equal(error.remedies.repl, ROWS.skill_refused.remedy.repl.replace("<server>", "s"));
      assert.match(error.remedies.repl, /^run \/refresh s to list its skills again/);
    }
  }
  // A server's account is shown on one line, its controls visible.
  const shown = refusal("s", "x", new SkillVerificationError("digest", "u", "a\x1b[2Jb\nc"))!;
  assert.match(shown.reason, /a\\x1b\[2Jb\\nc$/);
  const empty = refusal("s", "x", new SdkError(SdkErrorCode.InvalidResult, "no contents"));
  assert.equal(empty?.refusal, "entry");
  assert.equal(refusal("s", "x", new Error("fetch failed")), undefined);
});
