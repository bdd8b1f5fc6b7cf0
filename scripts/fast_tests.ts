/**
 * Which test files are fast: those that start no subprocess and no terminal. A file is left
 * out when it, or any helper or script it imports (followed everywhere but into `lib/` and
 * `commands/`), spawns a process (`Deno.Command`), names a fixture server to run
 * (`fixtures/`) or the launcher and entry point (`main.ts`, `launch.ts`), writes a script to
 * run (`#!/bin/sh`), or reaches the helpers that start servers, Redis, tmux or the CLI.
 * `deno task test:fast` runs the rest without `--allow-run`, so a file this reads wrongly
 * fails loudly instead of slowing the run.
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";

/** Text in a test file or helper that means it starts a process. */
const SPAWNS = [
  /\bDeno\.Command\b/,
  /\bDeno\.run\b/,
  /["'`][^"'`]*fixtures\//,
  /["'`][^"'`]*\.\.\/(?:\.\.\/)*(?:main|launch)\.ts["'`]/,
  // A script written with a shebang is written to be run (by lib/, e.g. a secret helper).
  /#!\/(?:usr\/)?bin\//,
];

/** Relative module specifiers in static and dynamic imports and re-exports. */
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(?\s*)"(\.{1,2}\/[^"]+)"/g;

/**
 * Lists the test files under `root` that start no subprocess and no terminal.
 *
 * @param root the tests folder
 * @default {"tests"}
 * @returns paths relative to the working directory, sorted
 */
export async function fastTestFiles(root = "tests"): Promise<string[]> {
  const testsRoot = resolve(root);
  const underTest = [resolve(testsRoot, "../lib"), resolve(testsRoot, "../commands")];
  const verdicts = new Map<string, Promise<boolean>>();
  const spawns = (file: string, seen: Set<string>): Promise<boolean> => {
    // A cycle among helpers adds nothing: the file is already being read.
    if (seen.has(file)) return Promise.resolve(false);
    const known = verdicts.get(file);
    if (known) return known;
    const verdict = (async () => {
      const text = await Deno.readTextFile(file);
      if (SPAWNS.some((pattern) => pattern.test(text))) return true;
      const inner = new Set([...seen, file]);
      for (const [, specifier] of text.matchAll(SPECIFIER)) {
        const target = resolve(dirname(file), specifier);
        // lib/ and commands/ are what the tests are about: what they may spawn is the test's
        // call, seen in the test's own text; helpers and scripts are followed.
        if (underTest.some((folder) => !relative(folder, target).startsWith(".."))) continue;
        if (await spawns(target, inner)) return true;
      }
      return false;
    })();
    verdicts.set(file, verdict);
    return verdict;
  };
  const fast: string[] = [];
  for await (const file of walkTests(testsRoot)) {
    if (!await spawns(file, new Set())) fast.push(relative(Deno.cwd(), file));
  }
  return fast.sort();
}

async function* walkTests(folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(folder)) {
    const path = join(folder, entry.name);
    if (entry.isDirectory) yield* walkTests(path);
    else if (entry.isFile && entry.name.endsWith("_test.ts")) yield path;
  }
}
