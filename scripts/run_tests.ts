/**
 * Runs the tests (`deno test --allow-all tests/`, or the files given) with the
 * machine's proxy variables set aside: the test process talks only to servers it starts on
 * loopback, and a proxy of the machine (HTTP_PROXY, ALL_PROXY) would carry that traffic
 * away, while a NO_PROXY of the machine covering loopback would make Deno bypass the proxies
 * the proxy tests start (Deno applies the process's NO_PROXY even to an explicit proxy
 * client). The variables are kept under `PATCHBAY_MACHINE_<name>`: the sandboxes the tests
 * build give them back to the patchbay processes they run (with loopback added to
 * NO_PROXY), so Deno there still reaches the npm registry the way this machine does.
 *
 * The tests resolve packages the client never imports (the MCP server SDK of the fixtures),
 * so they run with a lock file of their own, {@linkcode TEST_LOCK}: deno.lock holds only what
 * a first `deno task start` fetches (`tests/permissions/first_run_fetch_test.ts`).
 *
 * `--fast` runs only the test files that start no subprocess and no terminal
 * (`scripts/fast_tests.ts` says which), without `--allow-run`: `deno task test:fast`, for quick
 * local runs. The whole suite (no arguments) is what CI runs.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** Proxy variables, both spellings. */
export const PROXY_VARIABLES = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
] as const;

/** The tests' lock file (deno.lock keeps only the client's packages). */
export const TEST_LOCK: string = fileURLToPath(new URL("../tests/test.lock", import.meta.url));

/** Where a set-aside variable is kept. */
export const MACHINE_PREFIX = "PATCHBAY_MACHINE_";

/** Everything but `--allow-run`: a fast file that started a process would fail, not pass slowly. */
const FAST_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net",
  "--allow-sys",
];

if (import.meta.main) {
  const env = Deno.env.toObject();
  for (const name of PROXY_VARIABLES) {
    if (env[name] === undefined) continue;
    env[`${MACHINE_PREFIX}${name}`] = env[name];
    delete env[name];
  }
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: Deno.args[0] === "--fast"
      // Loaded only here: the test harness imports this module for its constants.
      ? [
        "test",
        `--lock=${TEST_LOCK}`,
        ...FAST_PERMISSIONS,
        ...await (await import("./fast_tests.ts")).fastTestFiles(),
      ]
      : [
        "test",
        `--lock=${TEST_LOCK}`,
        "--allow-all",
        ...(Deno.args.length > 0 ? Deno.args : ["tests/"]),
      ],
    env,
    clearEnv: true,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  Deno.exit(code);
}
