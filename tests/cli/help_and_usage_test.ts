/**
 * `patchbay help [command]`, usage mistakes and the colour variables, through
 * `deno task start` as a person types them: help is one word away for every command, a
 * command line that cannot be understood reads like every other error (message, cause,
 * remedy; exit code 2; JSON with --json), and CLICOLOR_FORCE colours as FORCE_COLOR does.
 *
 * @module
 */

import assert from "node:assert/strict";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

/** An error in patchbay's form: the message, then its cause and its remedy. */
function assertErrorForm(label: string, stderr: string, message: RegExp): void {
  const lines = stderr.trimEnd().split("\n");
  assert.match(lines[0], new RegExp(`^error: ${message.source}$`), `${label}:\n${stderr}`);
  assert.equal(lines[1], "  cause:  the command line could not be understood", label);
  assert.match(lines[2], /^ {2}remedy: \S/, `${label}:\n${stderr}`);
  assert.equal(lines.length, 3, `${label} says more than its error:\n${stderr}`);
}

Deno.test("patchbay help [command] prints what --help prints; every help that lists commands lists help", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({}));
  const root = await runPatchbay(box, ["help"]);
  assert.equal(root.code, 0, root.stderr);
  assert.equal(root.stdout, (await runPatchbay(box, ["--help"])).stdout);
  assert.match(root.stdout, /^ {2}help \[command\] +show the help of a command$/m);
  for (
    const [asked, same] of [
      [["help", "tools"], ["tools", "--help"]],
      [["help", "mcp", "add"], ["mcp", "add", "--help"]],
      [["mcp", "help", "add"], ["mcp", "add", "--help"]],
      [["help", "sessions"], ["sessions", "--help"]],
      [["-c", "servers_config.json", "help", "config", "check"], ["config", "check", "--help"]],
    ]
  ) {
    const help = await runPatchbay(box, asked);
    assert.equal(help.code, 0, `${asked.join(" ")}: ${help.stderr}`);
    assert.equal(help.stdout, (await runPatchbay(box, same)).stdout, asked.join(" "));
  }
  for (const group of ["mcp", "auth", "sessions", "config", "approvals", "trace"]) {
    const help = await runPatchbay(box, [group, "--help"]);
    assert.match(help.stdout, /^ {2}help \[command\] +show the help of a command$/m, group);
  }
  // `help` after a command that takes words is that command's word, not a request for help.
  const show = await runPatchbay(box, ["sessions", "show", "help"]);
  assert.doesNotMatch(show.stdout, /^Usage:/m);
  assert.match(show.stderr, /help/);
});

Deno.test("usage mistakes read as every error does, with exit code 2 (JSON with --json)", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({}));
  const cases: [string[], RegExp][] = [
    [["--no-such-flag"], /unknown option '--no-such-flag'/],
    [["mcp", "nosuch"], /unknown command 'nosuch'/],
    [["completions"], /which shell\? completions are made for bash, zsh, fish/],
    [["completions", "tcsh"], /invalid shell 'tcsh': the choices are bash, zsh, fish/],
    [["tools", "--jsn"], /unknown option '--jsn' \(did you mean '--json'\?\)/],
    [["help", "nosuch"], /unknown command 'nosuch'/],
    [["mcp", "help", "lsit"], /unknown command 'lsit' \(did you mean 'list'\?\)/],
    [["sessions", "show"], /missing required argument 'id'/],
  ];
  for (const [args, message] of cases) {
    const result = await runPatchbay(box, args);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.equal(result.stdout, "", args.join(" "));
    assertErrorForm(args.join(" "), result.stderr, message);
  }
  const json = await runPatchbay(box, ["tools", "--bogus", "--json"]);
  assert.equal(json.code, 2, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    type: "error",
    error: {
      code: "usage",
      message: "unknown option '--bogus'",
      cause: "the command line could not be understood",
      remedy: "run `patchbay tools --help` for usage",
    },
  });
});

Deno.test("CLICOLOR_FORCE colours piped output as FORCE_COLOR does; NO_COLOR still wins", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({}));
  // Help is plain text (commander draws no colours); it must still run with the variable set.
  for (const args of [["--help"], ["help", "tools"]]) {
    const help = await runPatchbay(box, args, {
      env: { NO_COLOR: undefined, CLICOLOR_FORCE: "1" },
    });
    assert.equal(help.code, 0, `${args.join(" ")}: ${help.stderr}`);
    assert.match(help.stdout, /^Usage: patchbay/m);
  }
  for (const args of [["config", "check"], ["--no-such-flag"]]) {
    const forced = await runPatchbay(box, args, {
      env: { NO_COLOR: undefined, CLICOLOR_FORCE: "1" },
    });
    const output = forced.stdout + forced.stderr;
    assert.ok(output.includes("\x1b["), `${args.join(" ")} is not coloured:\n${output}`);
    assert.doesNotMatch(output, /NotCapable|Requires env access/, args.join(" "));
    const off = await runPatchbay(box, args, { env: { NO_COLOR: "1", CLICOLOR_FORCE: "1" } });
    assert.ok(!(off.stdout + off.stderr).includes("\x1b["), `${args.join(" ")} with NO_COLOR`);
    const zero = await runPatchbay(box, args, {
      env: { NO_COLOR: undefined, CLICOLOR_FORCE: "0" },
    });
    assert.ok(!(zero.stdout + zero.stderr).includes("\x1b["), `${args.join(" ")} with 0`);
  }
});
