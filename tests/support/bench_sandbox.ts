/**
 * What the benchmarks in `bench/` share with each other and with the tests: the real
 * program run in a sandbox (`sandbox()` of `cli.ts`: a temporary HOME, no inherited
 * secrets), on a configuration of stdio servers (server-everything).
 *
 * @module
 */

import { join } from "node:path";
import { sandbox } from "./cli.ts";
import { everythingEntry, NODE } from "./deps.ts";

/** A benchmark's sandbox and its one-server configuration. */
export interface BenchSandbox {
  /** The temporary HOME, also the working directory the benchmarks use. */
  home: string;
  /** The environment of a patchbay process run in it. */
  env: Record<string, string>;
  /** `servers_config.json` in `home`: one stdio server, `everything`. */
  config: string;
}

/**
 * Makes the sandbox a benchmark runs patchbay in, with a configuration of one stdio server.
 * It is not removed on its own: a benchmark module removes `home` when it unloads.
 */
export async function benchSandbox(): Promise<BenchSandbox> {
  const { home, env } = await sandbox();
  const config = await writeEverythingConfig(home, "servers_config.json", 1);
  return { home, env, config };
}

/**
 * Writes a configuration of `count` stdio servers (server-everything) to `name` in `dir`
 * and returns its path. One server is named `everything`; more are `everything0`,
 * `everything1`, …. The model is the OpenAI-compatible endpoint `baseUrl`, by default a
 * closed loopback port for a benchmark that never calls it.
 */
export async function writeEverythingConfig(
  dir: string,
  name: string,
  count: number,
  baseUrl = "http://127.0.0.1:9/v1",
): Promise<string> {
  const server = { command: NODE, args: [everythingEntry(), "stdio"] };
  const path = join(dir, name);
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      LLM: { provider: "openai-compatible", model: "m", base_url: baseUrl },
      mcpServers: count === 1
        ? { everything: server }
        : Object.fromEntries(Array.from({ length: count }, (_, i) => [`everything${i}`, server])),
    }),
  );
  return path;
}
