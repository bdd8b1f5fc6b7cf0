/**
 * `/skills` in the interactive client (tmux, `deno task start`, the skills fixture server,
 * the scripted model): the list; a skill shown verified with its server's escapes stripped;
 * a tampered one refused with the interactive remedy; and one sent with the next message as
 * the server's untrusted content. Only the files asked for are fetched.
 *
 * @module
 */

import assert from "node:assert/strict";
import { sandbox, writeConfig } from "../support/cli.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { fetched, skillsEntry } from "../support/skills.ts";

Deno.test("/skills lists, shows verified, refuses tampered, and sends one with a message", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { sk: await skillsEntry(box) },
  });
  await using repl = await startRepl(box);

  const listed = await repl.send("/skills", "sk:dynamic");
  assert.match(listed, /sk \(10 skills\)/);
  assert.match(listed, /sk:pdf-processing \(2 files, \d+ B\)\s+Extract, fill, and assemble/);
  assert.match(listed, /Escapes in its description/);

  // Shown verified; its clear-screen and window-title sequences are stripped: the listing
  // above is still on the screen.
  const shown = await repl.send("/skills show sk:escapes", "Clears the screen and sets");
  assert.match(shown, /description: Escapes in its description/);
  const screen = await repl.tmux.screen();
  assert.match(screen, /sk \(10 skills\)/);
  assert.ok(!screen.includes("PWNED-BY-SKILL"), screen);

  const refused = await repl.send("/skills show sk:tampered", /remedy:/);
  assert.match(refused, /error: Skill refused: sk:tampered/);
  assert.match(refused, /cause:\s+the file's content does not match the SHA-256 digest/);
  assert.match(refused, /remedy: run \/refresh sk to list its skills again and retry/);
  assert.doesNotMatch(refused, /Evil body/);

  const used = await repl.send("/skills use sk:pdf-processing", /goes with your next message/);
  assert.match(used, /Skill sk:pdf-processing verified; its SKILL\.md goes with your next/);
  llm.enqueue({ text: "Following the skill." });
  await repl.send("fill in the form", "Following the skill.");
  const sent = JSON.stringify(llm.requests.at(-1)!.body.messages.at(-1));
  assert.match(sent, /<resource server=\\"sk\\" uri=\\"skill:\/\/pdf-processing\/SKILL\.md\\"/);
  assert.match(sent, /trust=\\"untrusted\\"/);
  assert.match(sent, /Fill forms as references\/FORMS\.md says\./);

  assert.deepEqual(await fetched(box), [
    "skill://escapes/SKILL.md",
    "skill://tampered/SKILL.md",
    "skill://pdf-processing/SKILL.md",
  ]);
});
