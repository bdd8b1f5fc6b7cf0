/**
 * The skills fixture server (`tests/fixtures/skills_server.ts`) as a server entry, and what
 * it was asked to fetch: every test of Skills over MCP starts it this way.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sandbox } from "./cli.ts";
import { DENO } from "./deps.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/skills_server.ts", import.meta.url));
const DENO_JSON = fileURLToPath(new URL("../../deno.json", import.meta.url));
/** The tests' own lock: the fixture's server SDK must not enter deno.lock. */
const TEST_LOCK = fileURLToPath(new URL("../test.lock", import.meta.url));

/** The secret the fixture's `pdf-processing` skill quotes (given from `.env`, masked). */
export const SKILL_SECRET = "sk-skill-secret-4f3e2d1c0b9a";

/**
 * The fixture as a stdio entry: it notes every file fetched in the sandbox's
 * `skill-reads.txt` ({@linkcode fetched}), and gets {@linkcode SKILL_SECRET} from `.env`.
 */
export async function skillsEntry(box: Sandbox): Promise<Record<string, unknown>> {
  await Deno.writeTextFile(join(box.cwd, ".env"), `SK_SECRET=${SKILL_SECRET}\n`, {
    append: true,
  });
  const reads = join(box.home, "skill-reads.txt");
  return {
    command: DENO,
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--config",
      DENO_JSON,
      `--lock=${TEST_LOCK}`,
      `--allow-write=${reads}`,
      FIXTURE,
      `--reads=${reads}`,
      "--secret=${SK_SECRET}",
    ],
    // Its npm packages come from the cache the sandbox shares.
    env: { DENO_DIR: box.env.DENO_DIR },
  };
}

/** The skill files the fixture served so far, in order. */
export async function fetched(box: Sandbox): Promise<string[]> {
  try {
    return (await Deno.readTextFile(join(box.home, "skill-reads.txt"))).split("\n")
      .filter(Boolean);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
