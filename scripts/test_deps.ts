/**
 * Installs what the tests need beyond Deno: patchbay's own npm packages in Deno's cache,
 * the npm MCP servers (into a cache folder outside the project) and, when missing,
 * Debian's redis-server and tmux (and zsh and fish, whose completion tests are skipped
 * without them). Idempotent and quick when everything is present; the
 * `test` task runs it before `deno test`.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  NPX_TEST_PACKAGE,
  npxTarballsDir,
  TEST_SERVER_PACKAGES,
  testDepsDir,
} from "../tests/support/deps.ts";
import { SUITE, SUITE_LOCK } from "./conformance.ts";
import { TEST_LOCK } from "./run_tests.ts";

const DEBIAN_PACKAGES: Record<string, string> = {
  "redis-server": "redis-server",
  tmux: "tmux",
  // @playwright/mcp drives it (never a browser download of its own).
  chromium: "chromium",
};
/** The shells the completion tests run in: without one, its tests are skipped, not failed. */
const SHELL_PACKAGES: Record<string, string> = { zsh: "zsh", fish: "fish" };
/**
 * A real keychain for the `${keychain:…}` tests (a private D-Bus session with GNOME
 * Keyring, read by secret-tool): without it they use a fake secret-tool, and say so.
 */
const KEYCHAIN_PACKAGES: Record<string, string> = {
  "secret-tool": "libsecret-tools",
  "gnome-keyring-daemon": "gnome-keyring",
  "dbus-daemon": "dbus",
};

async function run(command: string, args: string[]): Promise<boolean> {
  const status = await new Deno.Command(command, { args, stdout: "inherit", stderr: "inherit" })
    .spawn().status;
  return status.success;
}

async function installedVersion(dir: string, name: string): Promise<string | undefined> {
  try {
    const text = await Deno.readTextFile(join(dir, "node_modules", name, "package.json"));
    return JSON.parse(text).version;
  } catch {
    return undefined;
  }
}

async function ensureNpmServers(): Promise<void> {
  const dir = testDepsDir();
  const wanted = Object.entries(TEST_SERVER_PACKAGES);
  const missing = [];
  for (const [name, version] of wanted) {
    if (await installedVersion(dir, name) !== version) missing.push(`${name}@${version}`);
  }
  if (missing.length === 0) return;
  await Deno.mkdir(dir, { recursive: true });
  // A package.json of its own keeps npm from walking up into an unrelated project.
  await Deno.writeTextFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "patchbay-test-deps", private: true }, null, 2),
  );
  console.error(`installing test servers into ${dir}: ${missing.join(" ")}`);
  const ok = await run("npm", [
    "install",
    "--prefix",
    dir,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    ...wanted.map(([name, version]) => `${name}@${version}`),
  ]);
  if (!ok) throw new Error(`npm install of the test servers into ${dir} failed`);
}

/**
 * Packs {@linkcode NPX_TEST_PACKAGE} and every package it depends on, from the installed
 * tree (no network), into `npxTarballsDir()` with an `index.json` of their manifests: a
 * registry on loopback serves them to a real `npx` in the tests of a first install.
 */
async function packForNpx(): Promise<void> {
  const out = npxTarballsDir();
  const modules = join(testDepsDir(), "node_modules");
  const version = TEST_SERVER_PACKAGES[NPX_TEST_PACKAGE];
  try {
    const index = JSON.parse(await Deno.readTextFile(join(out, "index.json")));
    if (index.find((m: { name: string }) => m.name === NPX_TEST_PACKAGE)?.version === version) {
      return;
    }
  } catch {
    // Not packed yet.
  }
  const names = new Set<string>();
  const visit = async (name: string) => {
    if (names.has(name)) return;
    names.add(name);
    const manifest = JSON.parse(
      await Deno.readTextFile(join(modules, name, "package.json")),
    );
    for (const dep of Object.keys(manifest.dependencies ?? {})) await visit(dep);
  };
  await visit(NPX_TEST_PACKAGE);
  await Deno.remove(out, { recursive: true }).catch(() => {});
  await Deno.mkdir(out, { recursive: true });
  const packed = await new Deno.Command("npm", {
    args: [
      "pack",
      "--json",
      "--ignore-scripts",
      "--loglevel=error",
      "--pack-destination",
      out,
      ...[...names].map((name) => join(modules, name)),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!packed.success) throw new Error(`npm pack of ${NPX_TEST_PACKAGE} into ${out} failed`);
  const index = [];
  for (const item of JSON.parse(new TextDecoder().decode(packed.stdout))) {
    const manifest = JSON.parse(
      await Deno.readTextFile(join(modules, item.name, "package.json")),
    );
    index.push({
      name: item.name,
      version: item.version,
      filename: item.filename,
      integrity: item.integrity,
      shasum: item.shasum,
      dependencies: manifest.dependencies ?? {},
      bin: manifest.bin,
      engines: manifest.engines,
    });
  }
  await Deno.writeTextFile(join(out, "index.json"), JSON.stringify(index, null, 2));
}

/**
 * Fills Deno's cache with every npm package of deno.json, package metadata
 * (`registry.json`) included, with this process's whole environment (certificate and
 * proxy variables). The tests run patchbay in sandboxes with a minimal environment: a
 * cache filled from the lockfile alone lacked that metadata, and Deno then fetched it at
 * run time from inside the sandbox (printing `Download …` into the output under test, or
 * failing behind a TLS-inspecting proxy).
 */
async function warmDenoCache(): Promise<void> {
  const project = fileURLToPath(new URL("../", import.meta.url));
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["install", "--quiet"],
    cwd: project,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) throw new Error("deno install (filling Deno's cache for the tests) failed");
  // The packages only the tests use (the fixtures' MCP server SDK) are in the tests' own
  // lock file, not in deno.json: caching the module that pins them fetches them.
  const fixtures = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", `--lock=${TEST_LOCK}`, "tests/support/mcp_server_sdk.ts"],
    cwd: project,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!fixtures.success) throw new Error("deno cache of the tests' own packages failed");
  // The conformance suite is kept out of deno.json (a first run of patchbay would fetch it):
  // listing its scenarios fills the cache with it.
  const suite = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", `--lock=${SUITE_LOCK}`, SUITE, "list", "--client"],
    cwd: project,
    stdout: "null",
    stderr: "inherit",
  }).spawn().status;
  if (!suite.success) throw new Error(`fetching ${SUITE} (for the conformance task) failed`);
}

async function onPath(command: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("sh", {
      args: ["-c", `command -v ${command}`],
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

async function ensureDebianPackages(): Promise<void> {
  const missing = [];
  for (const [command, pkg] of Object.entries(DEBIAN_PACKAGES)) {
    if (!(await onPath(command))) missing.push(pkg);
  }
  const shells = [];
  for (const [command, pkg] of Object.entries(SHELL_PACKAGES)) {
    if (!(await onPath(command))) shells.push(pkg);
  }
  const keychain = [];
  for (const [command, pkg] of Object.entries(KEYCHAIN_PACKAGES)) {
    if (!(await onPath(command))) keychain.push(pkg);
  }
  if (missing.length === 0 && shells.length === 0 && keychain.length === 0) return;
  const root = Deno.uid() === 0;
  if (!root || !(await onPath("apt-get"))) {
    if (keychain.length > 0) {
      console.error(
        `${keychain.join(", ")}: not installed, so the keychain tests use a fake secret-tool ` +
          `(install with e.g. sudo apt-get install -y ${keychain.join(" ")})`,
      );
    }
    if (shells.length > 0) {
      console.error(
        `${shells.join(" and ")} ${shells.length === 1 ? "is" : "are"} not installed: the ` +
          `completion tests for ${shells.length === 1 ? "it" : "them"} are skipped (install ` +
          `with e.g. sudo apt-get install -y ${shells.join(" ")})`,
      );
    }
    if (missing.length === 0) return;
    throw new Error(
      `the tests need ${missing.join(" and ")}; install them (e.g. sudo apt-get install -y ${
        missing.join(" ")
      }) and run the tests again`,
    );
  }
  missing.push(...shells, ...keychain);
  console.error(`installing ${missing.join(" ")} from Debian`);
  const env = ["-o", "DPkg::Lock::Timeout=120"];
  if (!(await run("apt-get", ["install", "-y", "--no-install-recommends", ...env, ...missing]))) {
    if (
      !(await run("apt-get", ["update", ...env])) ||
      !(await run("apt-get", ["install", "-y", "--no-install-recommends", ...env, ...missing]))
    ) {
      throw new Error(`apt-get install ${missing.join(" ")} failed`);
    }
  }
}

if (import.meta.main) {
  try {
    await warmDenoCache();
    await ensureNpmServers();
    await packForNpx();
    await ensureDebianPackages();
  } catch (error) {
    console.error(`test setup: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
