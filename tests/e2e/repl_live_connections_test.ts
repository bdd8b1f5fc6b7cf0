/**
 * Live connections as a person meets them: the real `patchbay` in tmux (and
 * the real commands under the start task's flags), real server-everything processes over
 * stdio, streamable HTTP and SSE, and the scripted model.
 *
 * - the prompt comes before a server that never answers `initialize`; slash commands
 *   work, `/tools` and `/connections` show it pending, a message goes without it;
 * - a server that dies while idle is announced and shown in `/connections`, and is back
 *   (tools usable) once it returns, without `/refresh`;
 * - Ctrl+C while `patchbay tools` or `patchbay run` waits skips the hanging server.
 *
 * No wall-clock assertion: intervals are short, every wait is bounded and says what it
 * waited for.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { type Repl, replConfig, startRepl } from "../support/repl.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import {
  eventually,
  processesWith,
  type RunningServer,
  startEverythingHttp,
} from "../support/servers.ts";

/** A server-everything in its HTTP mode started as a stdio command: it never answers. */
function hanging(tag: string) {
  return {
    command: NODE,
    args: [everythingEntry(), "streamableHttp", tag],
    env: { PORT: "0" },
    timeout: 120,
  };
}

Deno.test("prompt first: with a server that never answers, /tools and a turn work with the good one, naming the other", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: {
      good: { command: NODE, args: [everythingEntry(), "stdio"] },
      hang: hanging(tag),
    },
    // Longer than any wait below: the message goes on because of Ctrl+C, not the time.
    AgentConfig: { connect_wait: 60 },
  });
  await using repl = await startRepl(box, { waitForServers: false });
  const banner = await repl.tmux.screen();
  assert.match(banner, /^Servers {2}connecting to (good, )?hang…/m);

  await repl.tmux.waitFor(
    "✓ good connected · 17 tools, 4 prompts, 7 resources · still connecting: hang",
    { timeoutMs: 30_000 },
  );
  const tools = await repl.send("/tools", "its tools are listed once it is connected");
  assert.match(tools, /^good \(17 tools\)$/m);
  assert.match(tools, /echo\(message\)/);
  assert.match(tools, /^… hang: connecting for [\d.]+ s; its tools are listed once/m);

  const connections = await repl.send("/connections", /hang: stdio .* · connecting since/);
  assert.match(connections, /^Servers {2}1 of 2 servers connected \(1 connecting\)$/m);
  assert.match(connections, /✓ good +connected +stdio +17 tools/);
  assert.match(connections, /… hang +connecting +stdio +node /);
  assert.match(connections, /^ {6}connecting for [\d.]+ s$/m);

  // A message waits for it (connect_wait); Ctrl+C stops waiting, and the message goes
  // with the good server's tools.
  llm.enqueue({ text: "Answered with good's tools." });
  const before = (await repl.tmux.screen()).length;
  await repl.tmux.submit("what can you do?");
  await repl.tmux.waitFor("waiting for hang to connect (at most 60 s; Ctrl+C goes on without)", {
    after: before,
  });
  await repl.tmux.press("C-c");
  const turn =
    (await repl.tmux.waitFor(/1 step · \d+ tokens/, { after: before, timeoutMs: 30_000 }))
      .slice(before);
  assert.match(
    turn,
    /… hang is still connecting: this message goes without its tools \(they join once connected\)/,
  );
  assert.match(turn, /Answered with good's tools\./);
  const sent = (llm.requests.at(-1)!.body.tools as { function: { name: string } }[])
    .map((t) => t.function.name);
  assert.equal(sent.length, 17);
  assert.ok(sent.every((name) => name.startsWith("good__")), sent.join(", "));

  // /refresh of a server still connecting waits for it; Ctrl+C stops waiting.
  const refreshed = (await repl.tmux.screen()).length;
  await repl.tmux.submit("/refresh hang");
  await repl.tmux.waitFor("refreshing hang…", { after: refreshed });
  await repl.tmux.press("C-c");
  assert.match(
    (await repl.tmux.waitFor("remedy", { after: refreshed })).slice(refreshed),
    /error: Cancelled: waiting for the refresh \(it goes on; \/connections shows it\)/,
  );
  assert.match(await repl.send("/tools hang", "listed once"), /… hang: connecting for/);

  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("a server that connects during a turn adds its tools from the next model step", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  // The late server answers only once the test lets it start.
  const go = join(box.cwd, "late-may-start");
  await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: {
      good: { command: NODE, args: [everythingEntry(), "stdio"] },
      late: {
        command: "sh",
        args: [
          "-c",
          `while [ ! -e '${go}' ]; do sleep 0.05; done; exec '${NODE}' '${everythingEntry()}' stdio`,
        ],
        timeout: 120,
      },
    },
    AgentConfig: { connect_wait: 0 },
  });
  await using repl = await startRepl(box, { waitForServers: false });
  await repl.tmux.waitFor("✓ good connected", { timeoutMs: 30_000 });
  llm.enqueue(
    { toolCalls: [{ name: "good__echo", arguments: { message: "first step" } }] },
    { text: "Two steps done." },
  );
  const before = (await repl.tmux.screen()).length;
  await repl.tmux.submit("go");
  // The first step goes without it; its tool call waits for approval meanwhile.
  await repl.tmux.waitFor("(default No)", { after: before });
  assert.match(
    (await repl.tmux.screen()).slice(before),
    /… late is still connecting: this message goes without its tools/,
  );
  await Deno.writeTextFile(go, "");
  await repl.tmux.waitFor(/^Servers {2}2 of 2 servers connected/m, {
    after: before,
    timeoutMs: 30_000,
  });
  await repl.tmux.press("y");
  const screen = (await repl.tmux.waitFor("Two steps done.", { after: before })).slice(before);
  // The notice went above the question, which was drawn again, whole, below it.
  assert.match(
    screen,
    /Servers {2}2 of 2 servers connected\n(.*\n){2}\? Run good › echo\n {4}\{"message":"first step"\}\n {4}\[y\]es .*\(default No\) y\n/,
  );
  assert.equal(screen.split("? Run good › echo").length, 2, screen);
  const names = (i: number) =>
    (llm.requests[i].body.tools as { function: { name: string } }[]).map((t) => t.function.name);
  assert.equal(llm.requests.length, 2);
  assert.ok(names(0).every((name) => name.startsWith("good__")), names(0).join(", "));
  assert.ok(names(1).includes("late__echo"), names(1).join(", "));
  assert.ok(names(1).includes("good__echo"));
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

/** Waits for `pattern` in output that appears after the current screen. */
async function next(repl: Repl, pattern: RegExp | string, timeoutMs = 30_000): Promise<string> {
  return await repl.tmux.waitFor(pattern, { after: await markOf(repl), timeoutMs });
}

const marks = new WeakMap<Repl, number>();
/** Where the screen ended when {@linkcode mark} was last called. */
function markOf(repl: Repl): number {
  return marks.get(repl) ?? 0;
}
async function mark(repl: Repl): Promise<void> {
  // Up to the prompt's line: a notice is written over it (then the prompt is redrawn).
  const screen = await repl.tmux.screen();
  marks.set(repl, screen.lastIndexOf("\n") + 1);
}

for (const mode of ["streamableHttp", "sse"] as const) {
  const transport = mode === "sse" ? "sse" : "streamable_http";
  Deno.test(`${transport}: a server killed while idle is announced and shown, and usable again once restarted on its port`, async () => {
    await using box = await sandbox();
    await using llm = await startScriptedLlm();
    let server: RunningServer = await startEverythingHttp(mode);
    const port = server.port;
    try {
      await writeConfig(box, {
        ...replConfig(box, llm),
        mcpServers: {
          web: {
            transport_type: transport,
            url: `${server.origin}/${mode === "sse" ? "sse" : "mcp"}`,
            ping_interval: 2,
          },
        },
      });
      await using repl = await startRepl(box);
      assert.match(await repl.tmux.screen(), /✓ web +connected +\w+ +\d+ tools/);

      await mark(repl);
      Deno.kill(server.pid, "SIGKILL");
      const notice = await next(repl, /⟳ web: connection lost .*; reconnecting/);
      assert.match(
        notice,
        new RegExp(
          `⟳ web: connection lost — Connection refused: nothing is listening at 127\\.0\\.0\\.1:${port} ` +
            `\\(the server is not running at the configured address\\); reconnecting, attempt \\d+ in [\\d.]+ s`,
        ),
      );
      assert.doesNotMatch(notice, /fetch failed/);

      const connections = await repl.send("/connections", /web: \S+ .* · reconnecting since/);
      assert.match(connections, /^Servers {2}0 of 1 server connected \(1 reconnecting\)$/m);
      assert.match(connections, new RegExp(`… web +reconnecting +${transport} `));
      assert.match(connections, /reconnecting: attempt \d+ (in [\d.]+ s|running)/);
      assert.match(connections, /cause: +Connection refused: nothing is listening/);
      assert.match(connections, /remedy: .*; meanwhile patchbay keeps trying to reconnect/);

      await mark(repl);
      server = await startEverythingHttp(mode, port);
      await next(repl, /✓ web: reconnected · \d+ tools, \d+ prompts, \d+ resources/);
      // Its tools are back without /refresh.
      assert.match(
        await repl.send('/call web.echo {"message": "back again"}', "Echo: back again"),
        /✓ web › echo \d+ ms/,
      );
      await repl.tmux.submit("/exit");
      assert.equal(await repl.tmux.exitCode(), 0);
    } finally {
      await server[Symbol.asyncDispose]();
    }
  });
}

Deno.test("stdio: a server that exits while idle is announced, shown reconnecting with its attempts, and back", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  // The server starts only while this file exists: its restarts can be held off.
  const allowed = join(box.cwd, "server-allowed");
  await Deno.writeTextFile(allowed, "");
  await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: {
      local: {
        command: "sh",
        args: [
          "-c",
          `[ -e '${allowed}' ] || exit 3; exec '${NODE}' '${everythingEntry()}' stdio ${tag}`,
        ],
      },
    },
  });
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /✓ local +connected +stdio +17 tools/);

  await Deno.remove(allowed);
  await mark(repl);
  const [pid] = processesWith(tag);
  Deno.kill(pid, "SIGKILL");
  await next(
    repl,
    /⟳ local: connection lost — the server process was killed by SIGKILL.*; reconnecting, attempt 1 of 6 in 0\.5 s/,
  );
  await eventually(
    async () => {
      const screen = await repl.send("/connections", /local: stdio .* · \w+ since/);
      return /reconnecting: attempt [2-6] of 6/.test(screen);
    },
    "/connections showing a failed restart and the next one",
    30_000,
  );
  const connections = await repl.tmux.screen();
  assert.match(connections, /… local +reconnecting +stdio /);
  assert.match(connections, /cause: +the server process exited with code 3/);

  await mark(repl);
  await Deno.writeTextFile(allowed, "");
  await next(repl, "✓ local: reconnected · 17 tools, 4 prompts, 7 resources");
  assert.match(
    await repl.send('/call local.echo {"message": "restarted"}', "Echo: restarted"),
    /✓ local › echo/,
  );
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

// ── the commands: Ctrl+C while they wait skips the hanging server ─────────────────────

const PROJECT = new URL("../../", import.meta.url);

/** `deno task start <args>` under the start task's flags, output piped. */
async function spawnCommand(box: Sandbox, args: string[]): Promise<Deno.ChildProcess> {
  const manifest = JSON.parse(await Deno.readTextFile(new URL("deno.json", PROJECT)));
  const flags = (manifest.tasks.start as string).replaceAll("$HOME", box.home).split(/\s+/)
    .slice(1);
  return new Deno.Command(DENO, {
    args: [...flags, ...args],
    cwd: PROJECT,
    env: { ...box.env, LLM_API_KEY: "test-key" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Waits until the log says `server` connected, and `hanging` runs. */
async function goodConnectedHangWaiting(box: Sandbox, server: string, tag: string) {
  const log = join(box.home, ".local", "state", "patchbay", "patchbay.log");
  await eventually(
    async () => {
      const text = await Deno.readTextFile(log).catch(() => "");
      return new RegExp(`\\[connections:server:${server}\\] connected in`).test(text);
    },
    `the log saying ${server} connected`,
    30_000,
  );
  await eventually(() => processesWith(tag).length > 0, "the hanging server running");
}

async function commandConfig(box: Sandbox, llm: ScriptedLlm, tag: string) {
  return await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: {
      good: { command: NODE, args: [everythingEntry(), "stdio"] },
      hang: hanging(tag),
    },
  });
}

Deno.test("Ctrl+C during `patchbay tools` with a hanging server: the connected server's tools, the skipped one named", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const config = await commandConfig(box, llm, tag);
  const child = await spawnCommand(box, ["tools", "--config", config]);
  await goodConnectedHangWaiting(box, "good", tag);
  child.kill("SIGINT");
  const { code, stdout, stderr } = await child.output();
  const out = new TextDecoder().decode(stdout);
  const err = new TextDecoder().decode(stderr);
  // No terminal: no elicitation capability, and `tools` loads no model: no sampling either
  // (nor task-backed requests), so server-everything leaves out its form and sampling tools.
  assert.match(out, /^good \(13 tools\)$/m, err);
  assert.match(out, /echo\(message\)/);
  assert.match(err, /^Skipping 'hang': still connecting \(Ctrl\+C again cancels\)$/m);
  assert.match(err, /✗ hang +failed +stdio /);
  assert.match(err, /error: Skipped server 'hang': still connecting after [\d.]+ s/);
  assert.match(err, /cause: +Ctrl\+C was pressed while patchbay waited for it/);
  // A server the command wanted did not connect: exit 1, as for any failed server.
  assert.equal(code, 1, err);
  await eventually(() => processesWith(tag).length === 0, "the skipped server's process ended");
});

Deno.test("Ctrl+C during `patchbay run` with a hanging server: the turn goes on with the servers that connected", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const config = await commandConfig(box, llm, tag);
  llm.enqueue({ text: "Answered after the skip." });
  const child = await spawnCommand(box, ["run", "--config", config, "hello"]);
  await goodConnectedHangWaiting(box, "good", tag);
  child.kill("SIGINT");
  const { code, stdout, stderr } = await child.output();
  const out = new TextDecoder().decode(stdout);
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, err);
  assert.match(out, /Answered after the skip\./);
  assert.match(err, /^Skipping 'hang': still connecting \(Ctrl\+C again cancels\)$/m);
  assert.match(err, /error: Skipped server 'hang': still connecting after/);
  const sent = (llm.requests.at(-1)!.body.tools as { function: { name: string } }[])
    .map((t) => t.function.name);
  assert.ok(sent.length > 0 && sent.every((name) => name.startsWith("good__")), sent.join(", "));
  await eventually(() => processesWith(tag).length === 0, "the skipped server's process ended");
});
