/**
 * Mentions and server prompts in the interactive client as a person uses them: the real
 * `patchbay` through `deno task start` in tmux, real server-everything, the scripted model.
 */

import assert from "node:assert/strict";
import { sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const DOC = "demo://resource/static/document/architecture.md";

Deno.test("@ completes servers, URIs and templates; the mention is attached and in /history", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);

  await repl.tmux.type("explain @every");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› explain @everything:$/m);
  await repl.tmux.type("demo://resource/static/document/archi");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(new RegExp(`› explain @everything:${DOC}\\s*$`, "m"));
  llm.enqueue({ text: "It is a demo server." });
  const answer = await repl.send(" please", "It is a demo server.");
  assert.match(answer, new RegExp(`Attached everything:${DOC}`));
  const sent = llm.requests.at(-1)!.body.messages.at(-1).content;
  assert.match(sent, new RegExp(`^explain @everything:${DOC} please\\n\\n<resource `));
  assert.match(sent, /trust="untrusted"/);

  // A template: its fixed part, then its variable filled in by hand.
  await repl.tmux.type("and @everything:demo://resource/dynamic/t");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› and @everything:demo:\/\/resource\/dynamic\/text\/$/m);
  llm.enqueue({ text: "Resource seven." });
  await repl.send("7", "Resource seven.");
  assert.match(
    llm.requests.at(-1)!.body.messages.at(-1).content,
    /Resource 7: This is a plaintext resource/,
  );

  const history = await repl.send("/history", /conversation \w+/);
  assert.match(
    history,
    new RegExp(`attached everything:${DOC} \\(text/markdown|attached everything:${DOC} \\(text,`),
  );
  assert.match(history, /attached everything:demo:\/\/resource\/dynamic\/text\/7/);

  // Not readable: said, and nothing sent.
  const before = llm.requests.length;
  const failed = await repl.send("see @everything:demo://nope", "Could not read");
  assert.match(failed, /Could not read @everything:demo:\/\/nope/);
  assert.equal(llm.requests.length, before);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("/server:prompt runs a server's prompt, with completion of names and values", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);

  await repl.tmux.type("/everything:args");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› \/everything:args-prompt\s*$/m);
  llm.enqueue({ text: "Sunny." });
  await repl.send(" city=Paris", "Sunny.");
  assert.equal(llm.requests.at(-1)!.body.messages.at(-1).content, "What's weather in Paris?");

  await repl.tmux.type("/everything:completable-prompt department=Eng");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› \/everything:completable-prompt department=Engineering$/m);
  await repl.tmux.type(" name=A");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/department=Engineering name=Alice$/m);
  llm.enqueue({ text: "Promoted." });
  await repl.send("", "Promoted.");
  assert.equal(
    llm.requests.at(-1)!.body.messages.at(-1).content,
    "Please promote Alice to the head of the Engineering team.",
  );

  const missing = await repl.send("/everything:args-prompt", "Usage");
  assert.match(missing, /Usage: \/everything:args-prompt city=…/);
  const unknown = await repl.send("/everything:args-promt", "Unknown prompt");
  assert.match(unknown, /did you mean \/everything:args-prompt\?/);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("/image names the latest image's saved path, and says when the terminal cannot draw it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  const everything = { ...config.mcpServers.everything, trusted: true };
  await writeConfig(box, {
    ...config,
    LLM: { ...config.LLM, vision: true },
    mcpServers: { ...config.mcpServers, everything },
  });
  await using repl = await startRepl(box);
  const status = await repl.send("/status", "Uptime");
  assert.match(
    status,
    /Context\s+images to the model \(LLM\.vision true\) · tool search off \(31 tools, within 40 tools/,
  );
  const none = await repl.send("/image", "No image 1");
  assert.match(none, /no tool result or mention has brought an image yet/);
  llm.enqueue(
    { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
    { text: "A logo." },
  );
  const turn = await repl.send("show the tiny image", "A logo.");
  const saved = /saved to (\S+\.png)/.exec(turn)?.[1];
  assert.ok(saved, turn);
  assert.match(JSON.stringify(llm.requests.at(-1)!.body), /data:image\/png;base64,iVBOR/);
  const shown = await repl.send("/image", "open the file");
  assert.ok(shown.includes(`everything: image/png, 4.0 kB saved to ${saved}`), shown);
  // tmux passes no image protocol on, so the path is what is shown.
  assert.match(shown, /speaks no image protocol patchbay knows/);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});
