/**
 * A first run on an empty Deno cache: what `deno task start` downloads (npm packages and
 * bytes) and how long it takes until the interactive client's prompt is usable.
 *
 * Each run gets a fresh DENO_DIR and HOME and starts `deno task --config <checkout>/deno.json
 * start` in tmux, from a folder with a configuration naming the scripted model and no
 * server, and waits for the prompt. It needs the npm registry (with the machine's
 * certificate and proxy variables). Set `FIRST_RUN_BASELINE` to another checkout (a clone of
 * an older commit) to measure it beside this one. A first run happens once per cache, so
 * only the first call of each benchmark measures (its timing table means nothing); the
 * figures are the lines printed when the run ends. docs/first-run.md records them.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/first_run_bench.ts`).
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sandbox, writeConfig } from "../tests/support/cli.ts";
import { DENO } from "../tests/support/deps.ts";
import { terminalEnv } from "../tests/support/repl.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { TmuxSession } from "../tests/support/tmux.ts";

const CHECKOUTS: Record<string, string> = {
  "this checkout": fileURLToPath(new URL("../", import.meta.url)),
  ...(Deno.env.get("FIRST_RUN_BASELINE")
    ? { "baseline": Deno.env.get("FIRST_RUN_BASELINE")! }
    : {}),
};

interface FirstRun {
  packages: number;
  bytes: number;
  promptMs: number;
}

const results = new Map<string, FirstRun[]>();

/** Files and bytes under `dir`; package folders are the `name@version` levels. */
async function npmCache(dir: string): Promise<{ packages: number; bytes: number }> {
  let packages = 0;
  let bytes = 0;
  const walk = async (path: string, depth: number) => {
    for await (const entry of Deno.readDir(path)) {
      const child = join(path, entry.name);
      if (entry.isDirectory) {
        // registry/<name>/<version> or registry/@scope/<name>/<version>
        if (/^\d/.test(entry.name) && depth >= 1) packages++;
        await walk(child, depth + 1);
      } else if (entry.isFile) {
        bytes += (await Deno.stat(child)).size;
      }
    }
  };
  await walk(join(dir, "npm", "registry.npmjs.org"), 0).catch(() => {});
  return { packages, bytes };
}

async function firstRun(label: string): Promise<void> {
  // Deno.bench may call again after the measured run: a first run happens once per cache.
  if (results.has(label)) return;
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  const denoDir = join(box.home, "deno-cache");
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const started = performance.now();
  await using tmux = await TmuxSession.start({
    command: [DENO, "task", "--quiet", "--config", join(CHECKOUTS[label], "deno.json"), "start"],
    env: terminalEnv(box, { DENO_DIR: denoDir, NO_COLOR: undefined }),
    cwd: box.cwd,
    width: 160,
    height: 50,
  });
  // The banner's server line: drawn just before the prompt (an old checkout's download bar
  // could cover the prompt line itself).
  await tmux.waitFor(/^Servers {2}/m, { timeoutMs: 300_000 });
  const promptMs = performance.now() - started;
  const cache = await npmCache(denoDir);
  results.set(label, [...(results.get(label) ?? []), { ...cache, promptMs }]);
}

for (const label of Object.keys(CHECKOUTS)) {
  Deno.bench({
    name: `first run, empty cache: ${label} (${CHECKOUTS[label]})`,
    n: 1,
    warmup: 0,
    fn: async () => await firstRun(label),
  });
}

globalThis.addEventListener("unload", () => {
  for (const [label, runs] of results) {
    for (const run of runs) {
      console.log(
        `${label}: ${run.packages} npm packages, ${(run.bytes / 1e6).toFixed(1)} MB, ` +
          `prompt after ${(run.promptMs / 1000).toFixed(1)} s`,
      );
    }
  }
});
