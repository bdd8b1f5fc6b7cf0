/**
 * patchbay as a Deno package: `deno publish --dry-run` passes and ships only what runs
 * (no tests, benches, fixtures or scripts), `exports` is the launcher users run, a LICENSE
 * ships with it, and the launcher installed from a URL runs the client from that URL under
 * the narrow plan of the configuration, as it does from a checkout.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import manifest from "../../deno.json" with { type: "json" };
import { configWith, runInSandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";

const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

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

/** The project served over HTTP on loopback, as a web host serves a repository's files. */
function serveProject(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
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
}

Deno.test("deno install -g of the launcher from a URL, with the start task's flags and no import map, works", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test0123456789abcdefghij" });
  await writeConfig(box, configWith({ everything: { command: NODE, args: [everythingEntry()] } }));
  const server = serveProject();
  try {
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const root = join(box.home, "deno-bin");
    const path = { PATH: `${dirname(DENO)}:${box.env.PATH}` };
    // No --import-map: the launcher imports no npm package, and gives the client the
    // deno.json published beside it.
    const install = await runInSandbox(box, DENO, [
      "install",
      "--global",
      "--root",
      root,
      "--name",
      "patchbay",
      // Deno imports code only from hosts it is told to trust (raw.githubusercontent.com,
      // jsr.io, deno.land and a few others are trusted by default).
      `--allow-import=127.0.0.1:${server.addr.port}`,
      // The start task's flags: the launcher reads, runs Deno, and remembers plans.
      "--no-prompt",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `--allow-write=${join(box.home, ".local/state/patchbay")}`,
      `${origin}/launch.ts`,
    ], { env: path });
    assert.equal(install.code, 0, install.stderr);
    const patchbay = join(root, "bin", "patchbay");
    const version = await runInSandbox(box, patchbay, ["--version"], { env: path });
    assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`, version.stderr);
    // The client runs from the same URL, under the narrow plan of this configuration.
    const tools = await runInSandbox(box, patchbay, ["tools"], { cwd: box.cwd, env: path });
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /^everything \(\d+ tools\)\n {2}echo\(message\)/);
    const plan = await runInSandbox(box, patchbay, ["permissions"], { cwd: box.cwd, env: path });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /--allow-run=\S*node/, "a narrow plan names the server's command");
  } finally {
    await server.shutdown();
  }
});

Deno.test("deno install -g of the launcher from a URL with no flags: the run says which and prints the install line, which works", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test0123456789abcdefghij" });
  await writeConfig(box, configWith({ everything: { command: NODE, args: [everythingEntry()] } }));
  const server = serveProject();
  try {
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const path = { PATH: `${join(box.home, ".deno", "bin")}:${dirname(DENO)}:${box.env.PATH}` };
    const host = `127.0.0.1:${server.addr.port}`;
    const bare = await runInSandbox(box, DENO, [
      "install",
      "--global",
      "--name",
      "patchbay",
      `--allow-import=${host}`,
      `${origin}/launch.ts`,
    ], { env: path });
    assert.equal(bare.code, 0, bare.stderr);
    const refused = await runInSandbox(box, "patchbay", ["tools"], { env: path });
    assert.equal(refused.code, 1, refused.stderr);
    assert.doesNotMatch(refused.stderr, /Uncaught|DenoPermissionError|^\s+at /m);
    assert.match(refused.stderr, /^error: patchbay's launcher was started without the Deno/);
    assert.match(refused.stderr, /\n {2}cause: {2}it was started without --allow-env, /);
    const line = /^ {4}install: (deno install .*)$/m.exec(refused.stderr)?.[1];
    assert.equal(
      line,
      `deno install --global --force --name patchbay --allow-import=${host} --no-prompt ` +
        '--allow-read --allow-env --allow-run "--allow-write=$HOME/.local/state/patchbay" ' +
        "--allow-net=127.0.0.1:0 " +
        `${origin}/launch.ts`,
    );
    // Pasted into a shell, it installs a patchbay that works.
    const install = await runInSandbox(box, "sh", ["-c", line!], { env: path });
    assert.equal(install.code, 0, install.stderr);
    const tools = await runInSandbox(box, "patchbay", ["tools"], { env: path });
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /^everything \(\d+ tools\)/);
  } finally {
    await server.shutdown();
  }
});
