/**
 * The early start (`lib/early_start.ts`): under the launcher's plan, `tools`, `prompts` and
 * `resources` start their stdio servers' processes before the command's code loads, and the
 * transports take those very processes (no second start); the configuration's servers are
 * read for it as the full validation reads them; and no process started early outlives
 * patchbay, whether the command takes it, a signal arrives before it does, or the process
 * exits without ending it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { earlyStartFlags } from "../../lib/early_start.ts";
import { readStdioEntries } from "../../lib/config/stdio_entries.ts";
import { loadConfig } from "../../lib/config/load.ts";
import { loadEnvironment } from "../../lib/env.ts";
import { childEnvironment } from "../../lib/transports/process.ts";
import { endUnclaimed, prespawnAll, stdioSpawnSpecs } from "../../lib/transports/spawn.ts";
import {
  configWith,
  runInSandbox,
  runPatchbay,
  sandbox,
  startTaskArgs,
  writeConfig,
} from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { eventually, FIXTURE_SERVER, processAlive, processesWith } from "../support/servers.ts";

/** The start task's grant the launcher hands servers over with (lib/transports/handoff.ts). */
const HANDOFF_GRANT = "--allow-net=127.0.0.1:0";
const DRIVER = new URL("../fixtures/early_start_driver.ts", import.meta.url).pathname;
const newTag = () => `patchbay-early-${crypto.randomUUID()}`;
/** The fixture server; `--ignore-eof`: only a signal ends it. */
const fixtureArgs = (tag: string) => [
  "run",
  "--quiet",
  "--no-config",
  FIXTURE_SERVER,
  "--ignore-eof",
  `--tag=${tag}`,
];

Deno.test("only the plain forms of tools, prompts and resources start early", () => {
  const c = ["--config", "c.json"];
  assert.deepEqual(earlyStartFlags([...c, "tools", "--json"]), { config: "c.json" });
  assert.deepEqual(earlyStartFlags(["--debug", "prompts", "srv"]), { debug: true });
  assert.deepEqual(earlyStartFlags(["resources"]), {});
  for (
    const args of [
      ["call", "srv", "echo"],
      ["tools", "a", "b"],
      ["tools", "--help"],
      ["tools", "--", "x"],
      ["tools", "--json", "--debug"],
      ["--config", "tools"],
      ["--version"],
      [],
    ]
  ) {
    assert.equal(earlyStartFlags(args), undefined, args.join(" "));
  }
});

Deno.test("the early reading of a configuration's servers is the full validation's", async () => {
  await using box = await sandbox();
  await Deno.writeTextFile(join(box.cwd, ".env"), "TOKEN=t0k\n");
  const cases: [string, unknown, boolean][] = [
    ["stdio, url and disabled entries", {
      ...configWith({
        one: { command: "node", args: ["a.js", "${TOKEN}"], env: { K: "${TOKEN}" }, cwd: "." },
        web: { url: "http://127.0.0.1:9/mcp" },
        off: { command: "node", disabled: true },
        two: { type: "stdio", command: "node", args: ["b.js"] },
      }),
    }, true],
    ["an unset variable", configWith({ one: { command: "node", args: ["${NOPE}"] } }), false],
    [
      "a stdio entry with a url field",
      configWith({ one: { command: "x", url: "http://h/" } }),
      false,
    ],
  ];
  for (const [what, config, sure] of cases) {
    const path = await writeConfig(box, config, "case.json");
    const early = await readStdioEntries({ config: path }, box.cwd);
    const env = await loadEnvironment({ path: join(box.cwd, ".env"), required: false });
    const full = await loadConfig(path, env).catch(() => undefined);
    if (!sure) {
      assert.equal(early, undefined, `${what}: the early reader guessed`);
      continue;
    }
    assert.ok(early && full, what);
    const lookup = (name: string) => env.get(name);
    assert.deepEqual(
      stdioSpawnSpecs(early.servers, (name) => early.env.get(name)),
      stdioSpawnSpecs(full.servers, lookup),
      what,
    );
  }
});

Deno.test("a process started early is not started again by the command", async () => {
  const tag = newTag();
  const spec = {
    command: DENO,
    args: fixtureArgs(tag),
    env: childEnvironment({}, (name) => Deno.env.get(name)),
  };
  try {
    assert.equal(prespawnAll([spec], "early"), 1);
    assert.equal(prespawnAll([spec], "command"), 0, "the command started it again");
    // Two entries alike get a process each.
    assert.equal(prespawnAll([spec, spec], "command"), 1);
    await eventually(() => processesWith(tag).length === 2, "both processes to run");
  } finally {
    await endUnclaimed();
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("tools takes the processes started before its code loaded, and leaves none", async () => {
  await using box = await sandbox();
  const tag = newTag();
  const config = await writeConfig(
    box,
    configWith({ fixture: { command: DENO, args: fixtureArgs(tag) } }),
  );
  const signal = AbortSignal.timeout(120_000);
  // A launcher that may not hand servers over (no loopback grant): the client starts them.
  const early = await runInSandbox(box, DENO, [
    ...startTaskArgs(box.home).filter((word) => word !== HANDOFF_GRANT),
    "--config",
    config,
    "--debug",
    "tools",
    "--json",
  ]);
  assert.equal(early.code, 0, early.stderr);
  assert.ok(JSON.parse(early.stdout).tools.some((t: { tool: string }) => t.tool === "echo"));
  const starts = early.stderr.match(/started pid \d+[^:\n]*:/g) ?? [];
  assert.deepEqual(starts.length, 1, early.stderr);
  assert.match(starts[0], /ahead \(at start-up, before the command loaded\)/);
  assert.deepEqual(processesWith(tag), [], "a server outlived patchbay");
  // A flag after the command is commander's to read: the servers start once it has.
  const late = await runPatchbay(box, ["--config", config, "tools", "--json", "--debug"], {
    signal,
  });
  // Through `deno task start`, plain forms' servers are the launcher's to start: not this.
  assert.equal(late.code, 0, late.stderr);
  assert.match(late.stderr, /started pid \d+ ahead \(once the configuration was read\)/);
  assert.doesNotMatch(late.stderr, /before the command loaded/);
  assert.deepEqual(processesWith(tag), [], "a server outlived patchbay");
});

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`${signal} before the command takes its servers ends them, then patchbay`, async () => {
    const tag = newTag();
    const driver = new Deno.Command(DENO, {
      args: ["run", "-A", "--quiet", DRIVER, "wait", DENO, ...fixtureArgs(tag)],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = driver.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value?.trim(), "started 1");
    // The driver's own command line names the tag too.
    const server = () => processesWith(tag).filter((pid) => pid !== driver.pid);
    await eventually(() => server().length === 1, "the server to run");
    const [pid] = server();
    driver.kill(signal);
    assert.equal((await driver.status).code, code);
    await reader.cancel();
    // Ended and waited for before patchbay exited.
    assert.equal(processAlive(pid), false, "the server outlived patchbay");
  });
}

Deno.test("a process that exits without ending the servers started early still ends them", async () => {
  const tag = newTag();
  const { code, stdout } = await new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", DRIVER, "exit", DENO, ...fixtureArgs(tag)],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(code, 3);
  assert.equal(new TextDecoder().decode(stdout).trim(), "started 1");
  // Signalled at exit; the server takes its own time to go.
  await eventually(() => processesWith(tag).length === 0, "the server to end");
});
