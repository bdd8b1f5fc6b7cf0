import assert from "node:assert/strict";
import { join } from "node:path";
import {
  cacheState,
  FIRST_INSTALL_ALLOWANCE_SECONDS,
  firstInstall,
  npxCacheDir,
  packageRunOf,
} from "../../lib/connections/package_runner.ts";
import { installingOf, progressOf } from "../../lib/connections/progress.ts";
import type { StdioServerConfig } from "../../lib/config/types.ts";
import type { ServerStatus } from "../../lib/connections/types.ts";
import { tempDir } from "../support/temp_dir.ts";
import { renderServerStatus } from "../../commands/_status.ts";

Deno.test("the package of each runner's command line, options and their values skipped", () => {
  const cases: [string, string[], unknown][] = [
    ["npx", ["-y", "@playwright/mcp@0.0.83", "--headless"], {
      runner: "npx",
      name: "@playwright/mcp",
      version: "0.0.83",
    }],
    ["/usr/bin/npx", ["--yes", "mcp-fetch-server"], { runner: "npx", name: "mcp-fetch-server" }],
    ["npx", ["-p", "@scope/pkg@^2", "serve", "--port", "1"], {
      runner: "npx",
      name: "@scope/pkg",
      version: "^2",
    }],
    ["npx", ["--package=tool@1.0.0", "--", "tool-bin"], {
      runner: "npx",
      name: "tool",
      version: "1.0.0",
    }],
    ["npm", ["exec", "-y", "--", "server-x@3.1.0"], {
      runner: "npm exec",
      name: "server-x",
      version: "3.1.0",
    }],
    ["uvx", ["mcp-server-git", "--repository", "."], { runner: "uvx", name: "mcp-server-git" }],
    ["uvx", ["--python", "3.12", "--from", "mcp-server-git==2025.1.14", "mcp-server-git"], {
      runner: "uvx",
      name: "mcp-server-git",
      version: "2025.1.14",
    }],
    ["uv", ["tool", "run", "mcp-server-time"], { runner: "uv tool run", name: "mcp-server-time" }],
    ["bunx", ["some-server@1.2.3"], { runner: "bunx", name: "some-server", version: "1.2.3" }],
    ["pnpm", ["dlx", "@org/srv"], { runner: "pnpm dlx", name: "@org/srv" }],
    ["yarn", ["dlx", "srv"], { runner: "yarn dlx", name: "srv" }],
    ["node", ["server.js"], undefined],
    ["npm", ["run", "serve"], undefined],
    ["npx", ["-y"], undefined],
  ];
  for (const [command, args, expected] of cases) {
    assert.deepEqual(packageRunOf(command, args), expected, `${command} ${args.join(" ")}`);
  }
});

Deno.test("npx's cache says whether the package (and a pinned version) is installed", async () => {
  await using dir = await tempDir();
  const env = (name: string) => ({ npm_config_cache: dir.path } as Record<string, string>)[name];
  const run = packageRunOf("npx", ["-y", "@playwright/mcp@0.0.83"])!;
  // No `_npx` folder at all: npx has installed nothing yet.
  assert.equal(cacheState(run, env), "missing");
  const installed = join(dir.path, "_npx", "0123abcd", "node_modules", "@playwright", "mcp");
  await Deno.mkdir(installed, { recursive: true });
  await Deno.writeTextFile(join(installed, "package.json"), '{"version":"0.0.82"}');
  assert.equal(cacheState(run, env), "missing", "another version is not this one");
  assert.equal(
    cacheState(packageRunOf("npx", ["-y", "@playwright/mcp@latest"])!, env),
    "installed",
  );
  await Deno.writeTextFile(join(installed, "package.json"), '{"version":"0.0.83"}');
  assert.equal(cacheState(run, env), "installed");
  assert.equal(cacheState(packageRunOf("uvx", ["mcp-server-git"])!, env), "unknown");
});

Deno.test("npm's cache folder: the server's npm_config_cache, else npm's default", () => {
  assert.equal(npxCacheDir((n) => n === "npm_config_cache" ? "/c" : undefined), join("/c", "_npx"));
  assert.equal(
    npxCacheDir((n) => n === "HOME" ? "/home/a" : undefined, "linux"),
    "/home/a/.npm/_npx",
  );
  assert.equal(
    npxCacheDir((n) => n === "LOCALAPPDATA" ? "C:\\L" : undefined, "windows"),
    join("C:\\L", "npm-cache", "_npx"),
  );
});

Deno.test("a first install's bound and status: the server's timeout plus the allowance, in words", async () => {
  await using dir = await tempDir();
  const config: StdioServerConfig = {
    name: "pw",
    transport: "stdio",
    command: "npx",
    args: ["-y", "@playwright/mcp@0.0.83"],
    env: { npm_config_cache: dir.path },
    timeoutSeconds: 30,
    trusted: false,
    sampling: "ask",
    disabled: false,
    transportInferred: true,
  };
  const install = firstInstall(config, () => undefined);
  assert.deepEqual(install, {
    runner: "npx",
    package: "@playwright/mcp@0.0.83",
    cache: "missing",
    boundSeconds: 30 + FIRST_INSTALL_ALLOWANCE_SECONDS,
  });
  assert.equal(
    firstInstall({ ...config, command: "node", args: ["s.js"] }, () => undefined),
    undefined,
  );
  const since = new Date(0);
  const status = { state: "connecting", since, installing: install } as ServerStatus;
  assert.equal(
    progressOf(status, new Date(3200)),
    "installing @playwright/mcp@0.0.83 through npx for 3.2 s; first connect allowed 150 s",
  );
  assert.equal(
    installingOf({ ...status, installing: { ...install!, runner: "uvx", cache: "unknown" } }),
    "starting through uvx, which may be installing @playwright/mcp@0.0.83 first; first connect " +
      "allowed 150 s",
  );
});

Deno.test("the banner's line while servers connect says which one is installing, and its bound", () => {
  const since = new Date(0);
  const installing = {
    runner: "npx",
    package: "@playwright/mcp@0.0.83",
    cache: "missing" as const,
    boundSeconds: 150,
  };
  const line = renderServerStatus([
    { name: "pw", state: "disconnected", since, installing } as ServerStatus,
    { name: "fs", state: "connecting", since } as ServerStatus,
  ], { compact: true });
  assert.equal(
    line,
    "Servers  connecting to pw (installing @playwright/mcp@0.0.83 through npx; first connect " +
      "allowed 150 s), fs…",
  );
});
