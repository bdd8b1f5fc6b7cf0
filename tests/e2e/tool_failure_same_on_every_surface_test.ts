/**
 * One voice for tool failures: the same failure, produced under real conditions,
 * reads the same on every surface that can show it — `patchbay call` (text and `--json`),
 * `patchbay run --json`, `/call` and a model turn in the interactive client (tmux). Only a
 * remedy that names a command changes: slash commands in the client, flags and commands in
 * scripts.
 *
 * Rows: a file the server may not read (server-filesystem, run as root without the
 * capabilities that let root read any file, on a 0600 file of `nobody`), a tool that sleeps
 * past `tool_call_timeout`, a result flagged `isError`, and a JSON-RPC error answer.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Surface, toolRemedies } from "../../lib/agent/tool_failure.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";

import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, filesystemEntry, NODE } from "../support/deps.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const FAILING_SERVER = fileURLToPath(
  new URL("../fixtures/failing_tools_server.ts", import.meta.url),
);

/** `AgentConfig.tool_call_timeout` of these tests, in seconds. */
const TIMEOUT_S = 1;

/** What a person reads of one failure. */
interface Shown {
  message: string;
  cause: string;
  remedy: string;
}

/** One failure: how to cause it, and what every surface must say. */
interface Row {
  name: string;
  /** `server.tool` as a person types it. */
  spec: string;
  /** The catalogue name the model calls it by. */
  modelName: string;
  args: Record<string, unknown>;
  message: string;
  cause: RegExp;
  remedy: (surface: Surface) => string;
}

function rows(locked: string): Row[] {
  return [
    {
      name: "a file the server may not read",
      spec: "fs.read_text_file",
      modelName: "fs__read_text_file",
      args: { path: locked },
      message: "Permission denied: fs/read_text_file could not access a file",
      cause: /EACCES: permission denied/,
      remedy: () => ROWS.file_permission.remedy.repl,
    },
    {
      name: "a tool that sleeps past its timeout",
      spec: "bad.hang",
      modelName: "bad__hang",
      args: {},
      message: `Tool timeout: bad/hang did not finish within ${TIMEOUT_S} s`,
      cause: /exceeded AgentConfig\.tool_call_timeout \(1 s\)/,
      remedy: (surface) => toolRemedies(surface).timeout(TIMEOUT_S),
    },
    {
      name: "a result flagged isError",
      spec: "bad.fails",
      modelName: "bad__fails",
      args: {},
      message: "Tool execution failed: bad/fails",
      cause: /^server 'bad' reported: quota exceeded for user 42$/,
      remedy: (surface) => toolRemedies(surface).serverError,
    },
    {
      name: "a JSON-RPC error answer",
      spec: "bad.rpcerr",
      modelName: "bad__rpcerr",
      args: {},
      message: "Tool execution failed: bad/rpcerr",
      cause: /database is locked/,
      remedy: (surface) => toolRemedies(surface).serverError,
    },
  ];
}

/** The sandbox: a locked file, the two servers, the scripted model. */
async function setUp(box: Sandbox, baseUrl: string): Promise<string> {
  const data = join(box.cwd, "data");
  await Deno.mkdir(data);
  const locked = join(data, "locked.txt");
  await Deno.writeTextFile(locked, "not for you\n");
  await Deno.chmod(locked, 0o600);
  await Deno.chown(locked, 65534, 65534);
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: baseUrl },
    AgentConfig: { tool_call_timeout: TIMEOUT_S },
    mcpServers: {
      // Root reads any file; without these capabilities it meets permissions like anyone.
      fs: {
        command: "setpriv",
        args: [
          "--bounding-set",
          "-dac_override,-dac_read_search",
          "--inh-caps",
          "-dac_override,-dac_read_search",
          NODE,
          filesystemEntry(),
          data,
        ],
      },
      bad: { command: DENO, args: ["run", FAILING_SERVER] },
    },
  });
  return locked;
}

/** `error: …` / `cause: …` / `remedy: …` as the command layer prints them. */
function parsePrinted(text: string, message: string): Shown {
  const at = text.indexOf(`error: ${message}`);
  assert.ok(at >= 0, `no "error: ${message}" in:\n${text}`);
  const lines = text.slice(at).split("\n");
  return {
    message: lines[0].slice("error: ".length).trim(),
    cause: lines.find((l) => /^\s+cause:/.test(l))!.replace(/^\s+cause:\s+/, "").trim(),
    remedy: lines.find((l) => /^\s+remedy:/.test(l))!.replace(/^\s+remedy:\s+/, "").trim(),
  };
}

/** `✗ server › tool 1.0 s <message>` and its cause and remedy, as a model turn shows them. */
function parseTurn(text: string, message: string): Shown {
  const at = text.indexOf(message);
  assert.ok(at >= 0, `no "${message}" in:\n${text}`);
  const lines = text.slice(at).split("\n");
  return {
    message: lines[0].trim(),
    cause: lines[1].replace(/^\s+cause:\s+/, "").trim(),
    remedy: lines[2].replace(/^\s+remedy:\s+/, "").trim(),
  };
}

function check(row: Row, surface: Surface, where: string, shown: Shown): void {
  assert.equal(shown.message, row.message, `${row.name}, ${where}: message`);
  assert.match(shown.cause, row.cause, `${row.name}, ${where}: cause`);
  assert.equal(shown.remedy, row.remedy(surface), `${row.name}, ${where}: remedy`);
}

Deno.test({
  name: "a tool failure reads the same in call, call --json, run --json, /call and a turn",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using llm = await startScriptedLlm();
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    const locked = await setUp(box, llm.baseUrl);
    const table = rows(locked);

    await t.step("patchbay call", async () => {
      for (const row of table) {
        const result = await runPatchbay(box, ["call", row.spec, JSON.stringify(row.args)]);
        assert.equal(result.code, 1, `${row.name}: ${result.stderr}`);
        check(row, "script", "call", parsePrinted(result.stderr, row.message));
      }
    });

    await t.step("patchbay call --json", async () => {
      for (const row of table) {
        const result = await runPatchbay(box, [
          "call",
          "--json",
          row.spec,
          JSON.stringify(row.args),
        ]);
        assert.equal(result.code, 1, `${row.name}: ${result.stderr}`);
        const parsed = JSON.parse(result.stdout);
        const error = parsed.error as Record<string, string>;
        check(row, "script", "call --json", {
          message: error.message,
          cause: error.cause,
          remedy: error.remedy,
        });
      }
    });

    await t.step("patchbay run --json", async () => {
      llm.enqueue(
        {
          toolCalls: table.map((row, i) => ({
            name: row.modelName,
            arguments: row.args,
            id: `call_${i}`,
          })),
        },
        { text: "done" },
      );
      const result = await runPatchbay(box, ["run", "--json", "--yes", "use the tools"]);
      assert.equal(result.code, 0, result.stderr + result.stdout);
      const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
      for (const [i, row] of table.entries()) {
        const end = events.find((e) => e.type === "tool_result" && e.id === `call_${i}`);
        assert.ok(end?.error, `${row.name}: no tool_result error in ${result.stdout}`);
        check(row, "script", "run --json", {
          message: end.error.message,
          cause: end.error.cause,
          remedy: end.error.remedy,
        });
      }
    });

    await t.step("/call and a model turn in the interactive client", async () => {
      await using repl = await startRepl(box, { args: ["--yes"] });
      for (const row of table) {
        const shown = await repl.send(
          `/call ${row.spec} ${JSON.stringify(row.args)}`,
          /remedy: .+\n/,
          30_000,
        );
        check(row, "repl", "/call", parsePrinted(shown, row.message));
      }
      for (const row of table) {
        llm.enqueue({ toolCalls: [{ name: row.modelName, arguments: row.args }] }, {
          text: `after ${row.name}`,
        });
        const shown = await repl.send("go", `after ${row.name}`, 30_000);
        check(row, "repl", "a turn", parseTurn(shown, row.message));
      }
    });
  },
});
