/**
 * The launcher reads what a command needs from the commands' one declaration
 * (`commands/_declarations*.ts`): every command that runs states its plan, a command
 * declared as editing the configuration runs under the editor's flags, and an option
 * declared `writes` is the one file the client may write where the person says.
 */

import assert from "node:assert/strict";
import { ROOT } from "../../commands/_declarations.ts";
import { type CommandGrammar, LAUNCH_NEEDS } from "../../lib/cli/launch_needs.ts";
import { parseLaunchArgs } from "../../lib/permissions/launch_args.ts";
import { editorFlags } from "../../lib/permissions/editor_flags.ts";
import { flagsFor } from "../../lib/permissions/launcher.ts";
import { DENO } from "../support/deps.ts";

/** Every declaration under `root` with the words that name it. */
function walk(root: CommandGrammar, words: string[] = []): [string[], CommandGrammar][] {
  return [
    [words, root],
    ...(root.commands ?? []).flatMap((c) => walk(c, [...words, c.name])),
  ];
}

Deno.test("every declared command that runs states the plan it runs under; groups state none", () => {
  const all = walk(ROOT);
  assert.ok(all.length > 30, `only ${all.length} declarations found`);
  const unstated = all.filter(([, c]) => c.run && !c.needs).map(([w]) => w.join(" ") || "root");
  assert.deepEqual(unstated, [], "declare `needs` on these (lib/cli/launch_needs.ts)");
  const groupsWithNeeds = all.filter(([, c]) => !c.run && c.needs).map(([w]) => w.join(" "));
  assert.deepEqual(groupsWithNeeds, [], "a group's subcommands state its needs");
  for (const [words, command] of all) {
    if (command.needs) assert.ok(LAUNCH_NEEDS.includes(command.needs), words.join(" "));
  }
});

Deno.test("each declared command, named on the command line, gets the plan its declaration states", () => {
  for (const [words, command] of walk(ROOT)) {
    if (!command.run || words.length === 0) continue;
    const parsed = parseLaunchArgs(["-c", "x.json", ...words], ROOT);
    assert.equal(parsed.needs, command.needs, words.join(" "));
    assert.equal(parsed.editing, command.needs === "config-edit", words.join(" "));
    assert.equal(parsed.planning, command.needs === "broad", words.join(" "));
    assert.equal(parsed.informational, false, words.join(" "));
  }
  // Aliases name the same declaration; a group alone runs its default or prints its help.
  assert.equal(parseLaunchArgs(["mcp", "rm", "a"], ROOT).editing, true);
  assert.equal(parseLaunchArgs(["sessions"], ROOT).needs, "servers");
  assert.equal(parseLaunchArgs(["mcp"], ROOT).informational, true);
  // A word that names no command runs under the servers' plan (the client reports it).
  assert.equal(parseLaunchArgs(["mcp", "lsit"], ROOT).needs, "servers");
  assert.equal(parseLaunchArgs(["run", "mcp", "add"], ROOT).editing, false);
});

Deno.test("a subcommand declared as editing the configuration gets the editor's flags, not the servers' plan", async () => {
  // A new command, declared once: the launcher knows it edits from its declaration alone.
  const grammar: CommandGrammar = {
    ...ROOT,
    commands: [...ROOT.commands ?? [], {
      name: "profile",
      commands: [
        { name: "rename", needs: "config-edit", run: () => {} },
        { name: "show", needs: "servers", run: () => {} },
      ],
    }],
  };
  const parsed = parseLaunchArgs(["--config", "c.json", "profile", "rename", "x"], grammar);
  assert.equal(parsed.editing, true);
  const cwd = Deno.cwd();
  const chosen = await flagsFor(parsed, DENO, cwd);
  assert.deepEqual(chosen, { flags: editorFlags(parsed, cwd), mode: "narrow" });
  assert.equal(parseLaunchArgs(["profile", "show"], grammar).editing, false);
  // Every declared editing `mcp` subcommand, the same way.
  const editing = walk(ROOT).filter(([, c]) => c.needs === "config-edit");
  assert.deepEqual(
    editing.map(([w]) => w.join(" ")).sort(),
    ["mcp add", "mcp add-json", "mcp disable", "mcp enable", "mcp import", "mcp remove"],
  );
  for (const [words] of editing) {
    const edit = parseLaunchArgs(words, ROOT);
    assert.deepEqual(await flagsFor(edit, DENO, cwd), {
      flags: editorFlags(edit, cwd),
      mode: "narrow",
    });
  }
});

Deno.test("only an option declared `writes` is granted: read --output in every spelling", () => {
  assert.equal(parseLaunchArgs(["read", "x://y", "--output", "o.bin"], ROOT).output, "o.bin");
  assert.equal(parseLaunchArgs(["read", "--output=o.bin", "x://y"], ROOT).output, "o.bin");
  assert.equal(parseLaunchArgs(["tools", "--output", "o.bin"], ROOT).output, undefined);
  assert.equal(parseLaunchArgs(["run", "--", "--output", "o.bin"], ROOT).output, undefined);
  // The option's value is not a command word: `read --server mcp add` reads from `mcp`.
  assert.equal(parseLaunchArgs(["read", "--server", "mcp", "u"], ROOT).needs, "servers");
});
