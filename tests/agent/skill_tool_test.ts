/**
 * The model's skill tool (`lib/agent/skill_tool.ts`) over a fixed listing: offered only
 * while skills are, bounded and cleaned of its servers' controls; a listing problem told
 * once; arguments the model gets wrong, and a skill it names wrongly, answered with what it
 * can do instead. Pure (what a real server does is `tests/agent/skills_run_test.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { SkillNotFoundError, SkillRefusedError } from "../../lib/errors.ts";
import { MAX_OFFERED_SKILLS, SKILL_TOOL_NAME, SkillTool } from "../../lib/agent/skill_tool.ts";
import type { SkillListing, SkillSummary } from "../../lib/skills/types.ts";

function summary(server: string, name: string, description = `${name} helps`): SkillSummary {
  return {
    server,
    id: `${server}:${name}`,
    name,
    description,
    uri: `skill://${name}/SKILL.md`,
    files: [],
    bytes: 10,
  };
}

/** A source that lists `listing` and reads nothing (each read fails as `fail` says). */
function source(listing: SkillListing, fail: (ref: string) => Error) {
  const reads: string[] = [];
  return {
    reads,
    list: () => Promise.resolve(listing),
    read: (ref: string) => {
      reads.push(ref);
      return Promise.reject(fail(ref));
    },
  };
}

const signal = new AbortController().signal;
const now = new Date("2026-01-01T00:00:00Z");

Deno.test("skill tool: offered only while skills are, bounded, the servers' text cleaned", async () => {
  const none = new SkillTool(source({ skills: [], problems: [] }, () => new Error()));
  await none.refresh(signal, () => {});
  assert.deepEqual(none.definitions(), []);
  assert.equal(none.handles(SKILL_TOOL_NAME), false);

  const skills = Array.from({ length: MAX_OFFERED_SKILLS + 6 }, (_, i) => summary("s", `k${i}`));
  skills[0] = summary("s", "k0", `Line one\nline\x1b]0;TITLE\x07 two ${"long ".repeat(100)}`);
  const tool = new SkillTool(source({ skills, problems: [] }, () => new Error()));
  await tool.refresh(signal, () => {});
  const [definition] = tool.definitions();
  assert.equal(definition.name, SKILL_TOOL_NAME);
  assert.equal(tool.handles(SKILL_TOOL_NAME), true);
  assert.equal(tool.handles("find_tools"), false);
  const description = definition.description!;
  assert.match(description, /- s:k0: Line one line two long long/);
  assert.ok(!description.includes("\x1b") && !description.includes("TITLE"));
  assert.match(description, /- s:k63: k63 helps\n\(and 6 more: give a keyword as "skill"/);
  assert.ok(!description.includes("s:k64"));
  const first = description.split("\n").find((line) => line.startsWith("- s:k0"))!;
  assert.ok(first.length <= 200 + "- s:k0: ".length, first);
});

Deno.test("skill tool: a listing problem is told once, however many steps list again", async () => {
  const problem = {
    server: "s",
    error: new SkillRefusedError("s", "2 invalid entries", "entry", "they break the rules"),
  };
  const tool = new SkillTool(
    source({ skills: [summary("s", "a")], problems: [problem] }, () => new Error()),
  );
  const told: string[] = [];
  for (let step = 0; step < 3; step++) {
    await tool.refresh(signal, (level, text) => told.push(`${level}: ${text}`));
  }
  assert.deepEqual(told, [
    "warning: skills of s: Skill refused: s:2 invalid entries: they break the rules",
  ]);
});

Deno.test("skill tool: wrong arguments and unknown skills get what the model can do instead", async () => {
  const listing = {
    skills: [summary("s", "pdf-processing", "Fill PDF forms"), summary("t", "git-workflow")],
    problems: [],
  };
  const reading = source(listing, (ref) => new SkillNotFoundError(ref, "not listed"));
  const tool = new SkillTool(reading, "script");
  await tool.refresh(signal, () => {});

  const invalid = await tool.answer(
    { id: "c1", name: SKILL_TOOL_NAME, arguments: "{" },
    signal,
    now,
  );
  assert.equal(invalid.message.isError, true);
  assert.match(
    String(invalid.message.content),
    /call load_skill with \{"skill": "<server:skill>"\}/,
  );
  assert.equal(invalid.detail.kind === "skill" && invalid.detail.status, "failed");

  // A bare name one listed skill has stands for it; a keyword finds listed skills.
  await tool.answer(
    { id: "c2", name: SKILL_TOOL_NAME, arguments: '{"skill":"git-workflow"}' },
    signal,
    now,
  );
  const unknown = await tool.answer(
    { id: "c3", name: SKILL_TOOL_NAME, arguments: '{"skill":"pdf forms"}' },
    signal,
    now,
  );
  assert.deepEqual(reading.reads, ["t:git-workflow", "pdf forms"]);
  assert.equal(unknown.level, "warning");
  assert.match(
    String(unknown.message.content),
    /Skills that match: s:pdf-processing \(Fill PDF forms\)/,
  );
  assert.match(
    unknown.notice,
    /^Unknown skill: pdf forms: not listed; list the skills with `patchbay skills list`/,
  );
  assert.equal(unknown.detail.kind === "skill" && unknown.detail.status, "not_found");
});
