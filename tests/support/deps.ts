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
  // Popular servers nobody here wrote, run offline by tests/e2e/third_party_servers_test.ts
  // so that interop is tested on every change (issue 38 found each of these misread once).
  "mcp-fetch-server": "1.1.2",
  "@modelcontextprotocol/server-memory": "2026.8.31",
  "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
  // Drives Debian's Chromium (CHROMIUM), which scripts/test_deps.ts installs; never a
  // browser download of its own.
  "@playwright/mcp": "0.0.83",
} as const;

/**
 * The package `npx` installs from a registry on loopback in the tests of a first install
 * (tests/connections/package_install_test.ts); scripts/test_deps.ts packs it and the
 * packages it depends on, from the installed tree, into {@linkcode npxTarballsDir}.
 */
export const NPX_TEST_PACKAGE = "@playwright/mcp";

/** Folder the npm servers are installed into (outside the project: see docs/design.md). */
export function testDepsDir(): string {
  const explicit = Deno.env.get("PATCHBAY_TEST_DEPS");
  if (explicit) return explicit;
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/tmp", ".cache");
  return join(cache, "patchbay-test-deps");
}

function packageEntry(name: keyof typeof TEST_SERVER_PACKAGES, file = "dist/index.js"): string {
  return join(testDepsDir(), "node_modules", name, file);
}

/** The tarballs of {@linkcode NPX_TEST_PACKAGE} and its dependencies, with `index.json`. */
export const npxTarballsDir = (): string => join(testDepsDir(), "npx-tarballs");

/** `node <path>` entry of mcp-fetch-server (stdio). */
export const fetchEntry = (): string => packageEntry("mcp-fetch-server");

/** `node <path>` entry of server-memory (stdio; `MEMORY_FILE_PATH` says where it writes). */
export const memoryEntry = (): string => packageEntry("@modelcontextprotocol/server-memory");

/** `node <path>` entry of server-sequential-thinking (stdio). */
export const thinkingEntry = (): string =>
  packageEntry("@modelcontextprotocol/server-sequential-thinking");

/** `node <path> [options]` entry of @playwright/mcp (stdio). */
export const playwrightEntry = (): string => packageEntry("@playwright/mcp", "cli.js");

/** Debian's Chromium, which @playwright/mcp drives headless. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * @playwright/mcp's arguments for a headless Chromium writing into `outputDir`: Debian's
 * browser (`--no-sandbox`: the tests may run as root), a profile in memory.
 */
export function playwrightArgs(outputDir: string): string[] {
  return [
    playwrightEntry(),
    "--headless",
    "--browser",
    "chromium",
    "--executable-path",
    CHROMIUM,
    "--isolated",
    "--no-sandbox",
    "--output-dir",
    outputDir,
  ];
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
