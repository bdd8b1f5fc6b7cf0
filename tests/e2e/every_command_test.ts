/**
 * Every command works as users run it: each command and subcommand of the command tree
 * (read from the tree itself, so a command added later is covered without a new entry) runs
 * through `deno task start`, under the launcher's computed flags, with `--help`, as
 * `patchbay help <command>` and with a real invocation, with and without NO_COLOR,
 * FORCE_COLOR and CLICOLOR_FORCE, piped and in a terminal. None may end in a stack trace or
 * a permission the plan lacks.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Command } from "commander";
import { buildProgram } from "../../commands/_program.ts";
import { type CliResult, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { PATCHBAY, terminalEnv } from "../support/repl.ts";
import { TmuxSession } from "../support/tmux.ts";

/** Every command path of the tree, the root (`[]`) first. */
async function commandPaths(): Promise<string[][]> {
  const program = await buildProgram(() => {});
  const paths: string[][] = [];
  const walk = (command: Command, path: string[]) => {
    paths.push(path);
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return paths;
}

/**
 * Real invocations of the commands that need arguments to do their work; any other command
 * runs as its bare words (a command added later runs at least that way).
 */
const INVOCATIONS: Readonly<Record<string, readonly string[][]>> = {
  // The interactive client is driven in a terminal by the REPL tests.
  "": [],
  "config check": [["config", "check"], ["config", "check", "--json"]],
  "permissions": [["permissions"], ["permissions", "--json"]],
  "doctor": [["doctor", "--offline"]],
  "run": [["run", "say hello"]],
  "tools": [["tools"], ["tools", "--json"]],
  "call": [["call", "everything.echo", '{"message":"hi"}']],
  "read": [["read", "demo://resource/static/document/architecture.md"]],
  "prompt": [["prompt", "simple-prompt"]],
  "auth login": [["auth", "login", "everything"]],
  "auth logout": [["auth", "logout", "--all"]],
  "sessions show": [["sessions", "show", "0000"]],
  "sessions delete": [["sessions", "delete", "0000"]],
  "skills show": [["skills", "show", "everything:pdf-processing"]],
};

/** The colour settings every command line runs under. */
const COLOUR_VARIANTS: readonly Record<string, string | undefined>[] = [
  { NO_COLOR: "1" },
  // Neither: commander would read FORCE_COLOR and then CLICOLOR_FORCE.
  { NO_COLOR: undefined },
  { NO_COLOR: undefined, FORCE_COLOR: "1" },
  // The other forcing variable of the one colour rule (lib/terminal.ts colorEnabled).
  { NO_COLOR: undefined, CLICOLOR_FORCE: "1" },
];

/** What must never reach a person: a trace, or a grant the plan lacks. */
function assertClean(label: string, output: string): void {
  for (
    const [what, pattern] of [
      ["a stack trace", /^\s+at .*:\d+:\d+\)?\s*$/m],
      ["an uncaught error", /Uncaught/],
      ["a raw Deno refusal", /NotCapable|PermissionDenied/],
      ["a permission the plan lacks", /Permission denied/],
      ["an internal error", /Internal error/],
    ] as const
  ) {
    assert.doesNotMatch(output, pattern, `${label} shows ${what}:\n${output}`);
  }
}

interface Setup {
  box: Sandbox;
  close(): Promise<void>;
}

async function setUp(): Promise<Setup> {
  const llm = await startScriptedLlm({ fallback: () => ({ text: "hello" }) });
  const box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  });
  return {
    box,
    async close() {
      await box[Symbol.asyncDispose]();
      await llm.close();
    },
  };
}

/** Runs `lines` under each colour variant, two at a time (the machine is shared). */
async function runAll(
  box: Sandbox,
  lines: readonly string[][],
  variants: readonly Record<string, string | undefined>[] = COLOUR_VARIANTS,
): Promise<{ label: string; result: CliResult }[]> {
  const jobs = lines.flatMap((args) =>
    variants.map((env) => ({
      label: `patchbay ${args.join(" ")} (${JSON.stringify(env)})`,
      args,
      env,
    }))
  );
  const results: { label: string; result: CliResult }[] = [];
  const worker = async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      results.push({
        label: job.label,
        result: await runPatchbay(box, job.args, { env: job.env }),
      });
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

Deno.test("every command's --help works under the launcher's flags, whatever the colour variables", async () => {
  const paths = await commandPaths();
  assert.ok(paths.length > 10, `the command tree has ${paths.length} commands`);
  const setup = await setUp();
  try {
    for (const { label, result } of await runAll(setup.box, paths.map((p) => [...p, "--help"]))) {
      assertClean(label, result.stdout + result.stderr);
      assert.equal(result.code, 0, `${label} exits 0:\n${result.stderr}`);
      assert.match(result.stdout, /^Usage: patchbay/m, `${label} prints its usage`);
    }
  } finally {
    await setup.close();
  }
});

Deno.test("patchbay help <command> prints what <command> --help prints, for every command", async () => {
  const paths = await commandPaths();
  const setup = await setUp();
  try {
    // Colours are the --help test's: here, one variant, and the two forms side by side.
    const plain = [COLOUR_VARIANTS[0]];
    const lines = paths.flatMap((path) => [["help", ...path], [...path, "--help"]]);
    const results = new Map(
      (await runAll(setup.box, lines, plain)).map(({ label, result }) => [label, result]),
    );
    const variant = JSON.stringify(plain[0]);
    for (const path of paths) {
      const label = `patchbay help ${path.join(" ")}`.trimEnd();
      const help = results.get(`${label} (${variant})`)!;
      const flag = results.get(`patchbay ${[...path, "--help"].join(" ")} (${variant})`)!;
      assertClean(label, help.stdout + help.stderr);
      assert.equal(help.code, 0, `${label} exits 0:\n${help.stderr}`);
      assert.equal(help.stdout, flag.stdout, `${label} prints what --help prints`);
      // Every help that lists commands offers help itself.
      if (/^Commands:/m.test(help.stdout)) {
        assert.match(help.stdout, /^ {2}help \[command\]/m, `${label} lists help [command]`);
      }
    }
  } finally {
    await setup.close();
  }
});

Deno.test("every command, run for real, ends in output or a clear error, never a trace", async () => {
  const paths = await commandPaths();
  const lines = paths.flatMap((path) => INVOCATIONS[path.join(" ")] ?? [path]);
  const setup = await setUp();
  try {
    for (const { label, result } of await runAll(setup.box, lines)) {
      assertClean(label, result.stdout + result.stderr);
    }
  } finally {
    await setup.close();
  }
});

Deno.test("every command line works in a terminal with colours on", async () => {
  const paths = await commandPaths();
  const lines = [
    ...paths.map((path) => [...path, "--help"]),
    ...paths.flatMap((path) => INVOCATIONS[path.join(" ")] ?? [path]),
  ];
  const setup = await setUp();
  try {
    for (const args of lines) {
      await using tmux = await TmuxSession.start({
        command: [...PATCHBAY, ...args],
        env: terminalEnv(setup.box, { NO_COLOR: undefined }),
        cwd: setup.box.cwd,
        width: 200,
        height: 100,
      });
      await tmux.exitCode(60_000);
      assertClean(`patchbay ${args.join(" ")} in a terminal`, await tmux.screen());
    }
  } finally {
    await setup.close();
  }
});
