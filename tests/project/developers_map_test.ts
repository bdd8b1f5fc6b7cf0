/**
 * DEVELOPERS.md, the maintainers' map: every path it names is in the repository (a map that
 * names a moved or deleted file sends the next engineer looking for nothing), it stays short
 * enough to read in fifteen minutes, and every line fits a terminal.
 *
 * A name counts as a path when it starts with one of the project's folders (`lib/…`,
 * `commands/…`, `tests/…`, `scripts/…`, `bench/…`, `docs/…`), with or without an extension,
 * or when it ends in `.ts`, `.md` or `.json`. The first kind resolves from the repository's
 * root only; the second from the root, from `lib/` (the map's table names paths under `lib/`
 * without the prefix), or as the end of a path in the repository (`scripted_messages.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { displayWidth } from "../../lib/terminal/terminal.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const map = await Deno.readTextFile(join(ROOT, "DEVELOPERS.md"));

/** The map's size limit, in bytes: what a newcomer reads in fifteen minutes. */
const MAX_MAP_BYTES = 16 * 1024;
/** Columns every line of the map fits in, the layer picture and the table included. */
const MAX_MAP_COLUMNS = 100;

/** A name starting with one of these folders is a path from the repository's root. */
const PROJECT_FOLDER = /^(?:lib|commands|tests|scripts|bench|docs)\//;

/** Folders skipped when listing the repository: not the project's own files. */
const SKIPPED = new Set([".git", "node_modules", "dist"]);

/**
 * The names in `text` that look like paths: a project folder followed by anything, or a
 * name ending in `.ts`, `.md` or `.json`. Sentence-ending dots are not part of a name.
 */
export function namedPaths(text: string): string[] {
  const pattern =
    /(?<![\w./-])(?:(?:lib|commands|tests|scripts|bench|docs)\/[\w./-]*|[\w./-]*\w\.(?:ts|md|json)(?![\w-]))/g;
  const names = new Set<string>();
  for (const [name] of text.matchAll(pattern)) names.add(name.replace(/\.+$/, ""));
  return [...names].sort();
}

/** Every file and folder of the repository, relative to its root; folders end with `/`. */
async function repositoryPaths(): Promise<string[]> {
  const paths: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (SKIPPED.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory) {
        paths.push(`${relative(ROOT, path)}/`);
        await walk(path);
      } else {
        paths.push(relative(ROOT, path));
      }
    }
  };
  await walk(ROOT);
  return paths;
}

/** The names among `names` that no path of `paths` answers to (see the module's rule). */
export function missingPaths(names: readonly string[], paths: readonly string[]): string[] {
  const known = new Set(paths);
  const has = (path: string) => known.has(path) || known.has(`${path}/`);
  return names.filter((name) => {
    if (has(name)) return false;
    if (PROJECT_FOLDER.test(name)) return true;
    return !has(`lib/${name}`) &&
      !paths.some((path) => path.endsWith(`/${name}`) || path.endsWith(`/${name}/`));
  });
}

Deno.test("the path finder finds every kind of name, and a name nowhere is missing", () => {
  const sample = "Walk `lib/session/client_session.ts`, then lib/oauth/. See `commands/` and " +
    "`config/schema.ts`, `scripted_messages.ts`, `deno.json`, docs/design.md; not `lib/*.ts` " +
    "nor LineEditor.read, but `lib/nowhere.ts` and `tests/project/gone_test.ts`.";
  const names = namedPaths(sample);
  assert.deepEqual(names, [
    "commands/",
    "config/schema.ts",
    "deno.json",
    "docs/design.md",
    "lib/",
    "lib/nowhere.ts",
    "lib/oauth/",
    "lib/session/client_session.ts",
    "scripted_messages.ts",
    "tests/project/gone_test.ts",
  ]);
  const paths = [
    "commands/",
    "deno.json",
    "docs/",
    "docs/design.md",
    "lib/",
    "lib/config/",
    "lib/config/schema.ts",
    "lib/oauth/",
    "lib/session/",
    "lib/session/client_session.ts",
    "tests/",
    "tests/support/",
    "tests/support/scripted_messages.ts",
  ];
  assert.deepEqual(missingPaths(names, paths), ["lib/nowhere.ts", "tests/project/gone_test.ts"]);
});

Deno.test("every path DEVELOPERS.md names is in the repository", async () => {
  const names = namedPaths(map);
  // The map names the owner of every concern: a handful of names would mean the finder broke.
  assert.ok(names.length > 100, `only ${names.length} paths found: ${names.join(", ")}`);
  assert.deepEqual(missingPaths(names, await repositoryPaths()), []);
});

Deno.test(`DEVELOPERS.md is at most ${MAX_MAP_BYTES} bytes and fits ${MAX_MAP_COLUMNS} columns`, () => {
  const bytes = new TextEncoder().encode(map).length;
  assert.ok(bytes <= MAX_MAP_BYTES, `DEVELOPERS.md is ${bytes} bytes, over ${MAX_MAP_BYTES}`);
  const wide = map.split("\n").flatMap((text, i) =>
    displayWidth(text) > MAX_MAP_COLUMNS ? [`line ${i + 1} (${displayWidth(text)})`] : []
  );
  assert.deepEqual(wide, [], `DEVELOPERS.md lines wider than ${MAX_MAP_COLUMNS} columns`);
});
