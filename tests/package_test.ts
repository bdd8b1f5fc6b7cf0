/**
 * patchbay as a Deno package: `deno publish --dry-run` passes and ships only what runs
 * (no tests, benches, fixtures or scripts), `exports` is the launcher users run, a LICENSE
 * ships with it, and the launcher started from a URL says what works instead of crashing.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { runInSandbox, sandbox } from "./support/cli.ts";
import { DENO } from "./support/deps.ts";

const PROJECT = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("deno publish --dry-run passes and ships the launcher, the client and no tests", async () => {
  await using box = await sandbox();
  // --allow-dirty: the tests run on working copies; what ships is the same either way.
  const publish = await runInSandbox(box, DENO, ["publish", "--dry-run", "--allow-dirty"], {
    cwd: PROJECT,
  });
  assert.equal(publish.code, 0, publish.stderr + publish.stdout);
  const output = publish.stdout + publish.stderr;
  assert.match(output, /Dry run complete/);
  // One line per file: `   file:///path/to/patchbay/lib/terminal.ts (4.15KB)`.
  const files = [...output.matchAll(/^\s*file:\/\/(\S+) \(/gm)]
    .map((m) => m[1].slice(PROJECT.length + 1));
  for (const wanted of ["launch.ts", "main.ts", "deno.json", "LICENSE", "README.md"]) {
    assert.ok(files.includes(wanted), `the package lacks ${wanted}: ${files.join(", ")}`);
  }
  assert.ok(files.some((f) => f.startsWith("lib/")), "the package lacks lib/");
  const stray = files.filter((f) => /^(tests|bench|scripts|\.ci|dist)\//.test(f));
  assert.deepEqual(stray, [], "the package ships files that do not run");
  assert.equal(manifest.exports, "./launch.ts");
});

Deno.test("the LICENSE is MIT, 2026, the patchbay authors", async () => {
  const license = await Deno.readTextFile(join(PROJECT, "LICENSE"));
  assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 The patchbay authors\n/);
});

Deno.test("the launcher run from a URL says it needs a checkout, and how to install", async () => {
  await using box = await sandbox();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (path.includes("..")) return new Response("no", { status: 400 });
    try {
      const type = path.endsWith(".json") ? "application/json" : "application/typescript";
      return new Response(await Deno.readFile(join(PROJECT, path)), {
        headers: { "content-type": type },
      });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  try {
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const start = (args: string[]) =>
      runInSandbox(box, DENO, [
        "run",
        "--import-map",
        `${origin}/deno.json`,
        `--allow-import=127.0.0.1:${server.addr.port}`,
        // The start task's flags.
        "--no-prompt",
        "--allow-read",
        "--allow-env",
        "--allow-run",
        `--allow-write=${join(box.home, ".local/state/patchbay")}`,
        `${origin}/launch.ts`,
        ...args,
      ], { env: { PATH: `${dirname(DENO)}:${box.env.PATH}` } });
    const version = await start(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`);
    const tools = await start(["tools"]);
    assert.equal(tools.code, 1, tools.stderr);
    assert.match(tools.stderr, /error: patchbay's launcher runs from a checkout, not from http:/);
    assert.match(tools.stderr, /remedy: clone the repository and run `deno task install`/);
    assert.doesNotMatch(tools.stderr, /TypeError|Uncaught/);
  } finally {
    await server.shutdown();
  }
});
