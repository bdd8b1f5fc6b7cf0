/**
 * Closing the terminal: SIGHUP (the terminal closed), SIGQUIT (Ctrl+\) and SIGTERM end
 * the interactive client alike. Its stdio servers run in process groups of their own,
 * which a terminal's signals do not reach, so the client must end them: a server that
 * started a child of its own (a grandchild of patchbay) is checked to be gone, whether the
 * signal reached the client or the launcher in front of it, and the conversation is
 * stored. Driven through `deno task start` in tmux (docs/security-limits.md).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { bounded } from "../support/bounded.ts";
import { type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { type Repl, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { processesWith } from "../support/servers.ts";

/** The pid of the process of this sandbox whose command line runs `script`. */
async function pidOf(repl: Repl, script: string): Promise<number> {
  const pattern = new RegExp(`[ /]${script.replace(".", "\\.")}( |$)`);
  const found = (await repl.leftoverProcesses()).find((line) => pattern.test(line));
  assert.ok(found, `no ${script} among ${(await repl.leftoverProcesses()).join("\n")}`);
  return Number(found.split(" ")[0]);
}

/**
 * Processes of the sandbox (its HOME in their environment or on their command line)
 * other than `except` and tmux: what `Repl.leftoverProcesses` finds, without asking tmux,
 * which is gone once the terminal was closed.
 */
function sandboxProcesses(box: Sandbox, except: number): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid) || pid === except || pid === Deno.pid) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const command = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").join(" ").trim();
      if (/^(\S*\/)?tmux\b/.test(command)) continue;
      const environment = Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0");
      if (command.includes(box.home) || environment.includes(`HOME=${box.home}`)) {
        found.push(`${pid} ${command}`);
      }
    } catch {
      // Exited while listing, or not ours to read.
    }
  }
  return found;
}

/** The stored conversation files' text, all of them. */
async function storedText(box: Sandbox): Promise<string> {
  const dir = join(box.home, ".local/share/patchbay/sessions");
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    text += await Deno.readTextFile(join(dir, entry.name));
  }
  return text;
}

type Target = "client" | "launcher" | "terminal";

async function closeWith(target: Target, signal: Deno.Signal, debug = false) {
  await using llm = await startScriptedLlm({ replies: [{ text: "Noted: the blue folder." }] });
  await using box = await sandbox();
  // A real stdio server that starts a child of its own: the odd sleep marks it.
  const marker = `4000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      everything: {
        command: "sh",
        args: ["-c", `sleep ${marker} & exec ${NODE} ${everythingEntry()} stdio`],
      },
    },
  });
  await using repl = await startRepl(box);
  await repl.send("remember the blue folder", "Noted: the blue folder.");
  assert.equal(processesWith(marker).length, 1, "the server's own child runs");
  // With /debug on, the log's lines go to the terminal too: closing it makes those writes
  // fail (EIO) in the middle of ending the servers, which must not stop the ending.
  if (debug) await repl.send("/debug", /[Dd]ebug/);
  const client = await pidOf(repl, "main.ts");
  const pane = await repl.tmux.panePid();
  if (target === "terminal") {
    // What closing a terminal window does: the pane goes away, and with it the terminal.
    await repl.tmux[Symbol.asyncDispose]();
  } else {
    Deno.kill(target === "client" ? client : await pidOf(repl, "launch.ts"), signal);
  }
  let waiting = true;
  let left: string[] = [];
  await bounded(
    (async () => {
      while (waiting) {
        left = [...sandboxProcesses(box, pane), ...processesWith(marker).map(String)];
        if (left.length === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })(),
    `every process of the session to end after ${signal} to the ${target}`,
    undefined,
    () => {
      waiting = false;
      console.error(`still running:\n${left.join("\n")}`);
    },
  );
  const stored = await storedText(box);
  assert.match(stored, /remember the blue folder/, "the question is stored");
  assert.match(stored, /Noted: the blue folder\./, "the answer is stored");
}

for (
  const [target, signal] of [
    ["client", "SIGHUP"],
    ["launcher", "SIGHUP"],
    ["client", "SIGQUIT"],
    ["launcher", "SIGQUIT"],
    ["client", "SIGTERM"],
    ["terminal", "SIGHUP"],
  ] as const
) {
  Deno.test(`${signal} to the ${target} ends every server process and child; the conversation is kept`, async () => {
    await closeWith(target, signal);
  });
}

Deno.test("closing the terminal with /debug on: the log's writes to it fail, every process still ends", async () => {
  await closeWith("terminal", "SIGHUP", true);
});
