/**
 * The interactive session's command line read without commander (`commands/_chat_flags.ts`,
 * read at start-up) must mean exactly what commander makes of it: every line the quick reader
 * accepts is compared with commander's parse of the same line, and lines it must leave to
 * commander are checked to be left.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Command } from "commander";
import { buildProgram } from "../../commands/_program.ts";
import { type CommandDeclaration, ROOT } from "../../commands/_declarations.ts";
import { optionSpelling } from "../../lib/cli/root_options.ts";
import { plainChatFlags, plainCommand } from "../../commands/_chat_flags.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

/** Commander's reading of `args` as root flags (what the default command receives). */
async function commanderFlags(args: string[]): Promise<Record<string, unknown>> {
  const program = await buildProgram(() => {});
  const { operands, unknown } = program.parseOptions(args);
  assert.deepEqual([...operands, ...unknown], [], `commander left words: ${args.join(" ")}`);
  return { ...program.opts() };
}

const PLAIN: string[][] = [
  [],
  ["-c", "servers.json"],
  ["--config", "other.json", "--env-file", "x.env", "--log-file", "/tmp/p.log"],
  ["-d", "-y", "--accept-form-defaults"],
  ["--debug", "--yes"],
  ["-r"],
  ["-r", "3f2a"],
  ["--resume", "3f2a", "-d"],
  ["--resume", "-d"],
  ["-r", "-"],
  ["-c", "a.json", "-c", "b.json"],
  ["-d", "--config", "-"],
  ["--trace", "trace.jsonl", "--trace-model"],
];

Deno.test("plain root flags are read as commander reads them", async () => {
  for (const args of PLAIN) {
    const quick = plainChatFlags(args);
    assert.ok(quick, `not read without commander: ${JSON.stringify(args)}`);
    assert.deepEqual({ ...quick }, await commanderFlags(args), JSON.stringify(args));
  }
});

Deno.test("anything but plain root flags is left to commander", () => {
  for (
    const args of [
      ["tools"],
      ["--help"],
      ["-h"],
      ["--version", "-d"],
      ["--config=servers.json"],
      ["-cservers.json"],
      ["-dy"],
      ["-c"],
      ["-c", "-d"],
      ["--config", ""],
      ["--resume", ""],
      ["-r", "-5"],
      ["--unknown"],
      ["-d", "--", "-y"],
      ["-d", "run", "hello"],
    ]
  ) {
    assert.equal(plainChatFlags(args), undefined, JSON.stringify(args));
  }
});

Deno.test("the commands that touch no server are read without commander in their plain forms only", () => {
  const read = (args: string[]) => {
    const quick = plainCommand(args);
    return quick && { command: quick.command, options: { ...quick.options } };
  };
  assert.deepEqual(read(["config", "check"]), { command: "config check", options: {} });
  assert.deepEqual(read(["-c", "a.json", "-d", "config", "check", "--json"]), {
    command: "config check",
    options: { config: "a.json", debug: true, json: true },
  });
  assert.deepEqual(read(["sessions"]), { command: "sessions list", options: {} });
  assert.deepEqual(read(["sessions", "list", "-a", "--json"]), {
    command: "sessions list",
    options: { all: true, json: true },
  });
  assert.deepEqual(read(["--env-file", "x.env", "permissions", "--json", "--discover"]), {
    command: "permissions",
    options: { envFile: "x.env", json: true, discover: true },
  });
  for (
    const args of [
      [],
      ["config"],
      ["config", "check", "--help"],
      ["config", "check", "-c", "a.json"],
      ["sessions", "show", "3f2a"],
      ["sessions", "-n", "5"],
      ["sessions", "--limit=5"],
      ["permissions", "--rediscover", "docs"],
      ["permissions", "--json", "extra"],
      ["--config=a.json", "config", "check"],
      ["tools"],
      ["run", "config", "check"],
    ]
  ) {
    assert.equal(plainCommand(args), undefined, JSON.stringify(args));
  }
});

Deno.test("a command read without commander answers exactly as through commander", async () => {
  await using box = await sandbox();
  const path = await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { everything: { command: "node", args: ["server.js"] } },
  });
  for (
    const words of [["config", "check"], ["config", "check", "--json"], ["sessions", "--json"], [
      "permissions",
      "--json",
    ]]
  ) {
    // `--config=<path>` is a form the quick reader leaves to commander.
    const quick = await runPatchbay(box, ["--config", path, ...words]);
    const parsed = await runPatchbay(box, [`--config=${path}`, ...words]);
    assert.equal(quick.code, parsed.code, words.join(" "));
    assert.equal(quick.stdout, parsed.stdout, words.join(" "));
    assert.equal(quick.stderr, parsed.stderr, words.join(" "));
    assert.ok(quick.stdout.length > 0, `${words.join(" ")} printed nothing`);
  }
});

Deno.test("sessions --limit that is not a whole number is still a usage error from commander", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["sessions", "--limit", "0"]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /argument '0' is invalid\. expected a whole number of at least 1 \(or --all\)/,
  );
});

Deno.test("the quick readers' reading of each declared option is commander's own", async () => {
  // The quick reader and the launcher read option spellings from the declarations without
  // commander; for every option of the tree built from them, both must mean the same.
  const program = await buildProgram(() => {});
  const walk = (command: Command, path: string) => {
    for (const option of command.options) {
      if (option.long === "--version" || option.long === "--help") continue;
      const spelling = optionSpelling(option.flags);
      assert.deepEqual(
        spelling,
        {
          ...(option.short ? { short: option.short } : {}),
          long: option.long,
          key: option.attributeName(),
          value: option.required ? "required" : option.optional ? "optional" : "none",
        },
        `${path} ${option.flags}`,
      );
    }
    for (const sub of command.commands) walk(sub, `${path} ${sub.name()}`);
  };
  walk(program, "patchbay");
});

Deno.test("a command read without commander takes no arguments, and is read under its words", () => {
  const quick: string[] = [];
  const walk = (declaration: CommandDeclaration, path: string[]) => {
    for (const sub of declaration.commands ?? []) {
      const words = [...path, sub.name];
      if (sub.quick) {
        quick.push(words.join(" "));
        assert.equal(sub.arguments, undefined, `${words.join(" ")} declares arguments`);
        assert.ok(sub.run, `${words.join(" ")} runs nothing`);
        assert.equal(plainCommand(words)?.command, words.join(" "));
      } else if (sub.run) {
        assert.equal(plainCommand(words), undefined, words.join(" "));
      }
      walk(sub, words);
    }
  };
  walk(ROOT, []);
  assert.deepEqual(quick, ["config check", "permissions", "sessions list"]);
});
