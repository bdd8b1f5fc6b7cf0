/**
 * Records the session the README shows, from a real run: `deno task start` in tmux (100
 * columns), the scripted model (two tool calls, then an answer), server-everything and
 * server-filesystem over stdio, in a fresh HOME at /tmp/rec (the path the sample shows).
 * Prints the screen; paste it into README.md's "A session".
 *
 *     deno run --allow-all scripts/record_session.ts
 *
 * @module
 */
import { join } from "node:path";
import { sandbox, writeConfig } from "../tests/support/cli.ts";
import { PATCHBAY, Repl, replConfig, terminalEnv } from "../tests/support/repl.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { TmuxSession } from "../tests/support/tmux.ts";

try {
  await Deno.mkdir("/tmp/rec");
} catch {
  console.error("error: /tmp/rec exists\n  remedy: remove it (the recording needs a fresh HOME)");
  Deno.exit(1);
}
await Deno.mkdir("/tmp/rec/work");
const base = await sandbox();
const box = {
  ...base,
  home: "/tmp/rec",
  cwd: "/tmp/rec/work",
  env: { ...base.env, HOME: "/tmp/rec" },
};
for (const [name, text] of [["notes.md", "# Notes\n"], ["todo.txt", "- ship\n"]]) {
  await Deno.writeTextFile(join(box.cwd, name), text);
}
await using llm = await startScriptedLlm({
  replies: [
    {
      toolCalls: [
        { name: "filesystem__list_directory", arguments: { path: "/tmp/rec/work" } },
        { name: "everything__get-sum", arguments: { a: 19, b: 23 } },
      ],
    },
    {
      text:
        "Your folder holds **three files**:\n\n- `notes.md`\n- `servers_config.json`\n- `todo.txt`\n\nAnd 19 + 23 = **42**.",
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
  ],
});
await writeConfig(box, replConfig(box, llm));
const tmux = await TmuxSession.start({
  command: [...PATCHBAY],
  env: terminalEnv(box, { NO_COLOR: "1" }),
  cwd: box.cwd,
  width: 100,
  height: 50,
});
const repl = new Repl(tmux, box);
await tmux.waitFor(/^Servers {2}\d+ of \d+ servers? connected/m, { timeoutMs: 60_000 });
await tmux.submit("What is in my folder, and what is 19 + 23?");
await tmux.waitFor(/\(default No\)$/m, { timeoutMs: 30_000 });
await new Promise((r) => setTimeout(r, 300));
await tmux.press("s");
await tmux.waitFor(/get-sum[\s\S]*\(default No\)$/m, { timeoutMs: 30_000 });
await new Promise((r) => setTimeout(r, 300));
await tmux.press("y");
await tmux.waitFor(/tool calls · .* tokens/, { timeoutMs: 30_000 });
await new Promise((r) => setTimeout(r, 500));
console.log(await tmux.screen());
await repl[Symbol.asyncDispose]();
await base[Symbol.asyncDispose]();
await Deno.remove("/tmp/rec", { recursive: true });
