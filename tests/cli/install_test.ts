/**
 * Installation the Deno way, as docs/installation.md documents it: `deno task install`, a narrow
 * `deno install` from the checkout with the flags `patchbay permissions` prints, and an
 * install from a URL (the project served on 127.0.0.1, as a web host would serve it).
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import manifest from "../../deno.json" with { type: "json" };
import {
  type CliResult,
  runInSandbox,
  runPatchbay,
  type Sandbox,
  sandbox,
  writeConfig,
} from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";

const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** Runs `command` with the sandbox's environment and `deno` on PATH (the shims call it). */
function run(
  box: Sandbox,
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return runInSandbox(box, command, args, {
    ...options,
    env: { PATH: `${dirname(DENO)}:${box.env.PATH}`, ...options.env },
  });
}

Deno.test("deno task install: an installed patchbay reports deno.json's version", async () => {
  await using box = await sandbox();
  const root = join(box.home, "deno-bin");
  const install = await run(box, DENO, ["task", "--quiet", "install"], {
    cwd: PROJECT,
    env: { DENO_INSTALL_ROOT: root },
  });
  assert.equal(install.code, 0, install.stderr);
  const version = await run(box, join(root, "bin", "patchbay"), ["--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`);
});

Deno.test("a narrow install from the checkout, configuration and .env baked in, works from any folder", async () => {
  await using box = await sandbox();
  const configFile = await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  });
  const envFile = join(box.cwd, ".env");
  await Deno.writeTextFile(envFile, "LLM_API_KEY=sk-install-test\n");
  const files = ["--config", configFile, "--env-file", envFile];
  const printed = await runPatchbay(box, [...files, "permissions", "--json"]);
  assert.equal(printed.code, 0, printed.stderr);
  const { flags } = JSON.parse(printed.stdout) as { flags: string[] };
  const root = join(box.home, "deno-bin");
  const install = await run(box, DENO, [
    "install",
    "--global",
    "--force",
    "--root",
    root,
    "--name",
    "patchbay",
    "--config",
    join(PROJECT, "deno.json"),
    ...flags,
    join(PROJECT, "main.ts"),
    // Without `--`, deno install would take this --config for itself.
    "--",
    ...files,
  ]);
  assert.equal(install.code, 0, install.stderr);
  const elsewhere = join(box.home, "elsewhere");
  await Deno.mkdir(elsewhere);
  const tools = await run(box, join(root, "bin", "patchbay"), ["tools"], { cwd: elsewhere });
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^everything \(\d+ tools\)/m);
  const doctor = await run(box, join(root, "bin", "patchbay"), ["doctor", "--offline"], {
    cwd: elsewhere,
  });
  assert.match(
    doctor.stdout,
    /✓ pass {2}permissions +every permission the configuration needs is granted, and no more/,
  );
});

Deno.test("deno install from a URL, with deno.json as the import map", async () => {
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
    const root = join(box.home, "deno-bin");
    const install = await run(box, DENO, [
      "install",
      "--global",
      "--root",
      root,
      "--name",
      "patchbay",
      "--import-map",
      `${origin}/deno.json`,
      // Deno imports code only from hosts it is told to trust (raw.githubusercontent.com,
      // deno.land, jsr.io and a few others are trusted by default).
      `--allow-import=127.0.0.1:${server.addr.port}`,
      "--no-prompt",
      "--allow-env=HOME,NO_COLOR",
      `${origin}/main.ts`,
    ]);
    assert.equal(install.code, 0, install.stderr);
    const version = await run(box, join(root, "bin", "patchbay"), ["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`);
  } finally {
    await server.shutdown();
  }
});
