/**
 * `patchbay skills list` and `patchbay skills show` through `deno task start`, against the
 * skills fixture server (honest and hostile skills, `tests/fixtures/skills_server.ts`):
 * listing fetches no file; a skill is fetched only when shown, and shown only when every
 * check passes (size, SHA-256 digest, frontmatter field by field); a refusal says what
 * failed, why and what to do, and exits 1 having printed nothing of the skill.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { fetched, SKILL_SECRET, skillsEntry } from "../support/skills.ts";

async function skillsBox(): Promise<Sandbox> {
  const box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { sk: await skillsEntry(box) },
  });
  return box;
}

Deno.test("skills list: every skill by server, name, description and URI, no file fetched", async () => {
  await using box = await skillsBox();
  const text = await runPatchbay(box, ["skills", "list"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^sk \(10 skills\)$/m);
  assert.match(text.stdout, /^ {2}sk:pdf-processing \(2 files, \d+ B\)\n {4}Extract, fill, and/m);
  // Names repeat across paths: each is listed by its path.
  assert.match(text.stdout, /sk:acme\/billing\/refunds/);
  assert.match(text.stdout, /sk:acme\/support\/refunds/);
  assert.match(text.stdout, /sk:dynamic \(dynamic: no digests, cannot be verified\)/);
  // A description's terminal escapes never reach the terminal.
  assert.match(text.stdout, /Escapes in its description/);
  assert.ok(!text.stdout.includes("\x1b"), "an escape reached the terminal");

  const json = await runPatchbay(box, ["skills", "list", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const listing = JSON.parse(json.stdout);
  const pdf = listing.skills.find((s: { id: string }) => s.id === "sk:pdf-processing");
  assert.deepEqual(
    [pdf.server, pdf.name, pdf.description, pdf.uri, pdf.files],
    [
      "sk",
      "pdf-processing",
      "Extract, fill, and assemble PDF documents",
      "skill://pdf-processing/SKILL.md",
      ["SKILL.md", "references/FORMS.md"],
    ],
  );
  assert.equal(listing.skills.length, 10);
  assert.deepEqual(listing.problems, []);
  assert.equal(listing.servers[0].state, "connected");
  // Two listings, and not one file of any skill fetched.
  assert.deepEqual(await fetched(box), []);
});

Deno.test("skills show: SKILL.md verified and printed; a file on demand, its secret masked", async () => {
  await using box = await skillsBox();
  const shown = await runPatchbay(box, ["skills", "show", "sk:pdf-processing"]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^---\nname: pdf-processing\ndescription: Extract, fill/);
  assert.match(shown.stdout, /Fill forms as references\/FORMS\.md says\.\n$/);
  // Only SKILL.md was fetched: the supporting file waits until it is asked for.
  assert.deepEqual(await fetched(box), ["skill://pdf-processing/SKILL.md"]);

  const file = await runPatchbay(box, [
    "skills",
    "show",
    "sk:pdf-processing",
    "references/FORMS.md",
  ]);
  assert.equal(file.code, 0, file.stderr);
  assert.match(file.stdout, /Field codes: F1, F2\. Account key: \[REDACTED\]/);
  assert.deepEqual(await fetched(box), [
    "skill://pdf-processing/SKILL.md",
    "skill://pdf-processing/references/FORMS.md",
  ]);
  assert.ok(!file.stdout.includes(SKILL_SECRET));

  // A skill the listing leaves out is still loadable by its URI (skills/get gives its entry).
  const hidden = await runPatchbay(box, ["skills", "show", "sk:skill://hidden/SKILL.md"]);
  assert.equal(hidden.code, 0, hidden.stderr);
  assert.match(hidden.stdout, /Found by its URI\./);

  const json = await runPatchbay(box, ["skills", "show", "sk:acme/billing/refunds", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const read = JSON.parse(json.stdout);
  assert.equal(read.verified, true);
  assert.equal(read.path, "SKILL.md");
  assert.equal(read.skill.id, "sk:acme/billing/refunds");
  assert.match(read.text, /Billing refunds\./);
});

Deno.test("skills show: a tampered, resized or misdescribed SKILL.md is refused with cause and remedy", async () => {
  await using box = await skillsBox();
  const cases: [string, RegExp][] = [
    ["tampered", /does not match the SHA-256 digest the server lists for it/],
    ["size-lie", /length differs from the size the server lists for it: .* is 77 bytes; .* 67/],
    [
      "frontmatter-lie",
      /frontmatter differs .*description: the entry has "Fill in expense reports", SKILL\.md has "Exfiltrate credentials"/,
    ],
  ];
  for (const [skill, cause] of cases) {
    const result = await runPatchbay(box, ["skills", "show", `sk:${skill}`]);
    assert.equal(result.code, 1, `${skill}: ${result.stderr}`);
    assert.match(result.stderr, new RegExp(`error: Skill refused: sk:${skill}\\n`));
    assert.match(result.stderr, cause);
    assert.match(result.stderr, /remedy: run the command again \(the skills are listed afresh\)/);
    // Nothing of what failed verification is shown.
    assert.equal(result.stdout, "");
    assert.doesNotMatch(result.stderr, /Evil body/);
  }
  const json = await runPatchbay(box, ["skills", "show", "sk:tampered", "--json"]);
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stdout).error.code, "skill_refused");
  assert.deepEqual(await fetched(box), [
    "skill://tampered/SKILL.md",
    "skill://size-lie/SKILL.md",
    "skill://frontmatter-lie/SKILL.md",
    "skill://tampered/SKILL.md",
  ]);
});

Deno.test("skills show: too large or unverifiable skills are refused before anything is fetched", async () => {
  await using box = await skillsBox();
  const cases: [string[], RegExp, RegExp][] = [
    [
      ["sk:giant"],
      /lists SKILL\.md at 5\.0 MB, more than patchbay reads of one skill file/,
      /smaller skill/,
    ],
    [["sk:huge-file", "data/big.txt"], /lists data\/big\.txt at 5\.0 MB/, /smaller skill/],
    [["sk:dynamic"], /"resources": "dynamic"\), so there are no digests/, /publish this skill/],
  ];
  for (const [args, cause, remedy] of cases) {
    const result = await runPatchbay(box, ["skills", "show", ...args]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /error: Skill refused: sk:/);
    assert.match(result.stderr, cause);
    assert.match(result.stderr, remedy);
  }
  // The entries alone decided: not one of these files was fetched.
  assert.deepEqual(await fetched(box), []);
  // The huge file's skill itself is small, and loads.
  const small = await runPatchbay(box, ["skills", "show", "sk:huge-file"]);
  assert.equal(small.code, 0, small.stderr);
  assert.match(small.stdout, /See data\/big\.txt\./);
});

Deno.test("skills show: a shared name, an unknown skill, file or server, each said, none fetched", async () => {
  await using box = await skillsBox();
  const shared = await runPatchbay(box, ["skills", "show", "sk:refunds"]);
  assert.equal(shared.code, 1);
  assert.match(shared.stderr, /error: Unknown skill: sk:refunds/);
  assert.match(
    shared.stderr,
    /lists 2 skills named 'refunds': sk:acme\/billing\/refunds, sk:acme\/support\/refunds/,
  );
  const unknown = await runPatchbay(box, ["skills", "show", "sk:nope"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /lists no skill 'nope' \(it lists 10 skills: pdf-processing/);
  assert.match(unknown.stderr, /remedy: list the skills with `patchbay skills list`/);
  // A file the skill does not list, however it is written, is never asked for.
  for (const file of ["nope.md", "../../tampered/SKILL.md"]) {
    const unlisted = await runPatchbay(box, ["skills", "show", "sk:pdf-processing", file]);
    assert.equal(unlisted.code, 1);
    assert.match(unlisted.stderr, /error: Skill refused: sk:pdf-processing/);
    assert.match(unlisted.stderr, /cause:\s+the file is not one the skill's entry lists/);
    assert.match(unlisted.stderr, /remedy: ask for a file the skill lists, by its path/);
  }
  const server = await runPatchbay(box, ["skills", "show", "elsewhere:pdf-processing"]);
  assert.equal(server.code, 1);
  assert.match(server.stderr, /no configured server \(sk\) starts 'elsewhere:pdf-processing'/);
  assert.deepEqual(await fetched(box), []);
});
