/**
 * The first screen a newcomer sees is clean: when Deno's cache lacks what the client loads,
 * the launcher fetches it before anything is drawn, so Deno's download bar never lands on
 * the banner or the prompt.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { directPackages, missingPackages } from "../../lib/permissions/module_cache.ts";
import { sandbox, writeConfig } from "../support/cli.ts";
import { PATCHBAY, terminalEnv } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";
import { tempDir } from "../support/temp_dir.ts";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));
const manifestText = await Deno.readTextFile(join(PROJECT, "deno.json"));
const lockText = await Deno.readTextFile(join(PROJECT, "deno.lock"));

/** Where the tests' Deno keeps npm packages (filled by scripts/test_deps.ts). */
function realRegistry(): string {
  const dir = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME")!, ".cache", "deno");
  return join(dir, "npm", "registry.npmjs.org");
}

/**
 * A DENO_DIR holding copies of deno.lock's packages from the real cache, without the
 * metadata of the packages deno.json names: what `deno task` leaves on an empty cache.
 */
async function cacheWithoutMetadata(root: string): Promise<string> {
  const direct = directPackages(manifestText);
  const registry = join(root, "npm", "registry.npmjs.org");
  for (const key of Object.keys(JSON.parse(lockText).npm)) {
    const [, pkg, version] = /^(@?[^@]+)@([^_]+)/.exec(key)!;
    await copy(join(realRegistry(), pkg, version), join(registry, pkg, version));
    const metadata = join(realRegistry(), pkg, "registry.json");
    if (!direct.has(pkg) && await exists(metadata)) {
      await Deno.copyFile(metadata, join(registry, pkg, "registry.json"));
    }
  }
  return root;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

async function copy(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copy(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}

Deno.test("the module check finds a package's missing files or the metadata of a direct one", async () => {
  const direct = directPackages(manifestText);
  assert.ok(direct.has("commander") && direct.has("zod"), [...direct].join(", "));
  await using dir = await tempDir();
  const everything = missingPackages(lockText, dir.path, direct);
  assert.equal(everything.length, Object.keys(JSON.parse(lockText).npm).length);
  const cache = await cacheWithoutMetadata(join(dir.path, "deno"));
  assert.deepEqual(
    // `name@version`, or `name@version_peer@version` when peers decide the copy.
    missingPackages(lockText, cache, direct).map((key) => key.replace(/(.)@[^@_]+(_.*)?$/, "$1"))
      .sort(),
    [...direct].sort(),
  );
  assert.deepEqual(
    missingPackages(lockText, realRegistry().replace(/\/npm\/registry\.npmjs\.org$/, ""), direct),
    [],
  );
});

Deno.test("with modules to fetch, the prompt and banner are drawn on a clean screen", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const cache = await cacheWithoutMetadata(join(box.home, "deno"));
  await using tmux = await TmuxSession.start({
    command: [...PATCHBAY],
    env: terminalEnv(box, { DENO_DIR: cache, NO_COLOR: undefined }),
    cwd: box.cwd,
  });
  const record = join(box.home, "terminal.raw");
  await tmux.record(record);
  await tmux.waitFor("Type a message", { timeoutMs: 120_000 });
  await tmux.submit("/status");
  const screen = await tmux.waitFor(/Memory/, { timeoutMs: 30_000 });
  assert.doesNotMatch(screen, /Download|▰|▱/, `the download bar stays on screen:\n${screen}`);
  assert.match(screen, /^patchbay \d/m, screen);
  assert.match(screen, /Type a message, or \/help/, screen);
  assert.ok(
    (await Deno.stat(join(cache, "npm", "registry.npmjs.org", "commander", "registry.json")))
      .isFile,
    "the metadata was fetched and kept",
  );
});
