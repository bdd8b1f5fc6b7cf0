/**
 * The interactive session's command line read without commander (`commands/_chat_flags.ts`,
 * issue 16) must mean exactly what commander makes of it: every line the quick reader
 * accepts is compared with commander's parse of the same line, and lines it must leave to
 * commander are checked to be left.
 *
 * @module
 */

import assert from "node:assert/strict";
import { buildProgram } from "../main.ts";
import { plainChatFlags } from "../commands/_chat_flags.ts";

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
