/**
 * The real programs the tests talk to, and where they are installed.
 *
 * `scripts/test_deps.ts` installs them (the `test` task runs it first); the tests only
 * read these locations, so a missing install fails loudly instead of silently skipping.
 *
 * @module
 */

import { join } from "node:path";

/** npm MCP servers the tests run, at exact versions. */
export const TEST_SERVER_PACKAGES = {
  "@modelcontextprotocol/server-everything": "2026.8.31",
  "@modelcontextprotocol/server-filesystem": "2026.8.31",
} as const;

/** Folder the npm servers are installed into (outside the project: see DEVELOPERS.md). */
export function testDepsDir(): string {
  const explicit = Deno.env.get("PATCHBAY_TEST_DEPS");
  if (explicit) return explicit;
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(cache, "patchbay-test-deps");
}

function packageEntry(name: keyof typeof TEST_SERVER_PACKAGES): string {
  return join(testDepsDir(), "node_modules", name, "dist", "index.js");
}

/** `node <path>` entry of server-everything; modes: stdio, streamableHttp, sse. */
export const everythingEntry = (): string =>
  packageEntry("@modelcontextprotocol/server-everything");

/** `node <path> <dir...>` entry of server-filesystem. */
export const filesystemEntry = (): string =>
  packageEntry("@modelcontextprotocol/server-filesystem");

/** The node binary the servers run on. */
export const NODE = "node";

/** The Deno binary running the tests, for spawning patchbay and fixture servers. */
export const DENO = Deno.execPath();
