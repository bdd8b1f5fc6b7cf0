/**
 * Start-up and footprint of the real program (`deno task bench`), run the way a user
 * runs it: `deno run` with the start task's permission flags on main.ts.
 *
 * - `--version`: the floor of every invocation (Deno start, module graph, command tree);
 * - `config check`: plus reading .env and validating the configuration;
 * - `tools --json` with one stdio server (server-everything): connect, list, close;
 * - resident memory of an interactive session with two servers connected and the prompt
 *   shown (VmRSS and VmHWM from /proc, printed once; Deno.bench only times).
 *
 * @module
 */

import { join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { certificateEnv, proxyEnv } from "../tests/support/cli.ts";
import { DENO, everythingEntry, filesystemEntry, NODE } from "../tests/support/deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
// The client itself, under the broad flags (the compile task's); the launcher's own cost is
// in launcher_bench.ts.
const FLAGS = manifest.tasks.compile.split(/\s+/).filter((w) =>
  w.startsWith("--") && w !== "--output"
);

const home = await Deno.makeTempDir({ prefix: "patchbay-bench-" });
const config = join(home, "servers_config.json");
await Deno.writeTextFile(
  config,
  JSON.stringify({
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  }),
);
const twoServers = join(home, "two.json");
await Deno.writeTextFile(
  twoServers,
  JSON.stringify({
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      filesystem: { command: NODE, args: [filesystemEntry(), home] },
    },
  }),
);

const env = {
  HOME: home,
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME")!, ".cache", "deno"),
  // Deno reaches the npm registry (if it must) the way this process does; loopback never
  // goes through a proxy.
  ...certificateEnv(),
  ...proxyEnv(),
  NO_COLOR: "1",
};

function command(args: string[], stdin: "null" | "piped" = "null") {
  return new Deno.Command(DENO, {
    args: ["run", ...FLAGS.map((f) => f.replaceAll("$HOME", home)), join(ROOT, "main.ts"), ...args],
    env,
    clearEnv: true,
    cwd: home,
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

async function run(args: string[]): Promise<void> {
  const { code, stderr } = await command(args).output();
  if (code !== 0) {
    throw new Error(`patchbay ${args.join(" ")} failed: ${new TextDecoder().decode(stderr)}`);
  }
}

Deno.bench("patchbay --version", { group: "start-up", baseline: true }, async () => {
  await run(["--version"]);
});

Deno.bench("patchbay config check", { group: "start-up" }, async () => {
  await run(["--config", config, "config", "check"]);
});

Deno.bench(
  "patchbay tools --json (connect one stdio server, list, close)",
  { group: "start-up" },
  async () => {
    await run(["--config", config, "tools", "--json"]);
  },
);

/** Starts an interactive session, waits for its prompt, and reads its memory from /proc. */
async function sessionMemory(): Promise<{ rssMiB: number; peakMiB: number }> {
  const child = command(["--config", twoServers], "piped").spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("Type a message")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the session ended early: ${seen}`);
    seen += value;
  }
  const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  await child.stdin.close();
  reader.releaseLock();
  await child.stderr.cancel().catch(() => {});
  await child.stdout.cancel();
  await child.status;
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

const memory = await sessionMemory();
console.log(
  `interactive session, two stdio servers connected, at the prompt: ` +
    `RSS ${memory.rssMiB.toFixed(1)} MiB (peak ${
      memory.peakMiB.toFixed(1)
    } MiB) for patchbay itself`,
);

globalThis.addEventListener("unload", () => Deno.removeSync(home, { recursive: true }));
