/**
 * The model and Skills over MCP, through `deno task start run` with the scripted model and
 * the skills fixture server: the model is offered the skills by name and description only
 * (`load_skill`), loads one and a file of it when it asks, verified, as its server's output;
 * a skill that does not verify is refused to the model and the person alike, and nothing of
 * it reaches the model.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import { fetched, SKILL_SECRET, skillsEntry } from "../support/skills.ts";

// deno-lint-ignore no-explicit-any
type Body = any;

async function skillsBox(llm: ScriptedLlm): Promise<Sandbox> {
  const box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { sk: await skillsEntry(box) },
  });
  return box;
}

/** The tool messages of a request the model received. */
const toolMessages = (body: Body): string[] =>
  body.messages.filter((m: Body) => m.role === "tool").map((m: Body) => m.content);

Deno.test("run: the model is offered skills by name, loads one and a file of it, verified", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "load_skill", arguments: { skill: "sk:pdf-processing" } }] },
      {
        toolCalls: [{
          name: "load_skill",
          arguments: { skill: "sk:pdf-processing", file: "references/FORMS.md" },
        }],
      },
      { text: "Filled." },
    ],
  });
  await using box = await skillsBox(llm);
  const result = await runPatchbay(box, ["run", "fill in the PDF form"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "Filled.\n");

  // Offered: names and descriptions, one small tool; escapes in a description stripped.
  const tool = llm.requests[0].body.tools.find((t: Body) => t.function.name === "load_skill");
  const offered: string = tool.function.description;
  assert.match(offered, /- sk:pdf-processing: Extract, fill, and assemble PDF documents/);
  assert.match(offered, /- sk:acme\/billing\/refunds: Process refunds per billing policy/);
  assert.match(offered, /- sk:escapes: Escapes in its description/);
  assert.ok(!offered.includes("\x1b"));
  assert.deepEqual(tool.function.parameters.required, ["skill"]);

  // Loaded when asked, as the server's untrusted output, with its other files named.
  const [skillMd] = toolMessages(llm.requests[1].body);
  assert.match(skillMd, /^<tool_output server="sk" tool="load_skill" trust="untrusted">/);
  assert.match(skillMd, /Skill sk:pdf-processing \(from server 'sk'\), verified/);
  assert.match(skillMd, /Its other files .*: references\/FORMS\.md\./);
  assert.match(skillMd, /---\nname: pdf-processing\n[\s\S]*Fill forms as references\/FORMS\.md/);
  const forms = toolMessages(llm.requests[2].body).at(-1)!;
  assert.match(forms, /File references\/FORMS\.md of skill sk:pdf-processing/);
  assert.match(forms, /Account key: \[REDACTED\]/);
  assert.ok(!JSON.stringify(llm.requests.map((r) => r.body)).includes(SKILL_SECRET));

  // Fetched: exactly what the model asked for, when it asked.
  assert.deepEqual(await fetched(box), [
    "skill://pdf-processing/SKILL.md",
    "skill://pdf-processing/references/FORMS.md",
  ]);
  assert.match(result.stderr, /Skill loaded: sk:pdf-processing \(verified\)/);
  assert.match(result.stderr, /Skill loaded: sk:pdf-processing › references\/FORMS\.md/);
});

Deno.test("run --json: a skill that does not verify is refused to the model and the person", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      // A bare name one listed skill has stands for it.
      { toolCalls: [{ name: "load_skill", arguments: { skill: "frontmatter-lie" } }] },
      { text: "It was refused." },
    ],
  });
  await using box = await skillsBox(llm);
  const result = await runPatchbay(box, ["run", "--json", "file my expenses"]);
  assert.equal(result.code, 0, result.stderr);
  const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const notice = events.find((e) => e.type === "notice" && e.kind === "skill");
  assert.deepEqual(
    [notice.level, notice.status, notice.server, notice.skill, notice.code],
    ["warning", "refused", "sk", "sk:frontmatter-lie", "skill_refused"],
  );
  assert.match(notice.text, /^Skill refused: sk:frontmatter-lie: SKILL\.md's frontmatter differs/);
  assert.match(notice.text, /run the command again \(the skills are listed afresh\)/);
  const [told] = toolMessages(llm.requests[1].body);
  assert.match(told, /Skill refused: sk:frontmatter-lie: .*description: the entry has "Fill in/);
  assert.match(told, /Nothing of it was used\. Do not load it again/);
  // The body of what failed verification never reached the model.
  assert.ok(!told.includes("Skill body."));
  assert.deepEqual(await fetched(box), ["skill://frontmatter-lie/SKILL.md"]);
});
