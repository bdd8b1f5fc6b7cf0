/**
 * The launcher (`launch.ts`) in front of the client, run the way a user runs patchbay:
 * `deno task start`, and the command `deno task install` writes. It starts the client under
 * the plan of `patchbay permissions` for the configuration and .env in effect; what the
 * plan does not grant is refused to the client with the grant named; the terminal, signals
 * and exit codes pass through unchanged.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import manifest from "../../deno.json" with { type: "json" };
import {
  type CliResult,
  runCommand,
  runPatchbay,
  type Sandbox,
  sandbox,
  startTaskArgs,
  writeConfig,
} from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { RedisServer } from "../support/redis.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startEverythingHttp } from "../support/servers.ts";
import { parseLaunchArgs } from "../../lib/permissions/launch_args.ts";
import { ROOT } from "../../commands/_declarations.ts";
import { CLIENT_MAIN, flagsFor, MAX_RESTARTS } from "../../lib/permissions/launcher.ts";
import { type StandIn, standInClient } from "../support/stand_in_client.ts";
import { CLIENT_V8_FLAGS } from "../../lib/cli/v8_flags.ts";

const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

interface DoctorLine {
  name: string;
  status: string;
  finding: string;
}

function doctorLines(result: CliResult): DoctorLine[] {
  return result.stdout.trim().split("\n").map((line) => JSON.parse(line) as DoctorLine);
}

Deno.test("deno task start: stdio, streamable HTTP, SSE and Redis all work under the plan, and no more is granted", async () => {
  await using http = await startEverythingHttp("streamableHttp");
  await using sse = await startEverythingHttp("sse");
  await using redis = await RedisServer.start();
  await using box = await sandbox({ ...redis.env, LLM_API_KEY: "sk-launcher-test" });
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      local: { command: NODE, args: [everythingEntry(), "stdio"] },
      remote: { url: `${http.origin}/mcp` },
      events: { url: `${sse.origin}/sse`, transport_type: "sse" },
    },
    Memory: { backend: "redis" },
  });
  const tools = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(tools.code, 0, tools.stderr + tools.stdout);
  const listed = (JSON.parse(tools.stdout) as { tools: { server: string }[] }).tools;
  for (const server of ["local", "remote", "events"]) {
    assert.ok(listed.some((tool) => tool.server === server), `${server} in ${tools.stdout}`);
  }
  const sessions = await runPatchbay(box, ["sessions", "list", "--json"]);
  assert.equal(sessions.code, 0, sessions.stderr);
  const store = JSON.parse(sessions.stdout) as { sessions: unknown[]; store: { kind: string } };
  assert.deepEqual(store.sessions, []);
  assert.equal(store.store.kind, "redis");
  // The doctor, itself started by the launcher, compares the grants in effect with the plan.
  const doctor = doctorLines(await runPatchbay(box, ["doctor", "--offline", "--json"]));
  const permissions = doctor.find((line) => line.name === "permissions")!;
  assert.equal(permissions.status, "pass", permissions.finding);
  assert.match(permissions.finding, /granted, and no more/);
  assert.equal(doctor.find((line) => line.name === "memory")!.status, "pass");
  // The plan was remembered for the next start.
  const plans = [...Deno.readDirSync(join(box.home, ".local/state/patchbay/launch"))];
  assert.equal(plans.length, 1);
});

Deno.test("deno task start --unrestricted: the broad flags, which the doctor calls broader than the plan", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-launcher-test" });
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { local: { command: NODE, args: [everythingEntry(), "stdio"] } },
  });
  const doctor = doctorLines(
    await runPatchbay(box, ["--unrestricted", "doctor", "--offline", "--json"]),
  );
  const permissions = doctor.find((line) => line.name === "permissions")!;
  assert.equal(permissions.status, "warn", permissions.finding);
  assert.match(permissions.finding, /broader than needed: .*--allow-net.*--allow-run/);
  const version = await runPatchbay(box, ["--unrestricted", "--version"]);
  assert.equal(version.code, 0, version.stderr);
});

Deno.test("exit codes pass through the launcher: 0, 1, 2, and 130 / 143 for SIGINT / SIGTERM", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {},
  });
  const version = await runPatchbay(box, ["--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`);
  const usage = await runPatchbay(box, ["frobnicate"]);
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /unknown command 'frobnicate'/);
  await writeConfig(box, "{ not json", "broken.json");
  const invalid = await runPatchbay(box, ["--config", "broken.json", "config", "check"]);
  assert.equal(invalid.code, 1, invalid.stderr);
  assert.match(invalid.stderr, /broken\.json/);
  assert.doesNotMatch(invalid.stderr, /NotCapable|Requires .* access/);

  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    // The signal arrives while the client waits for the model's answer.
    await using waiting = await startWaitingClient(box);
    const child = waiting.launcher;
    child.kill(signal);
    const status = await child.output();
    assert.equal(status.code, code, new TextDecoder().decode(status.stderr));
  }
});

/**
 * `run "say something"` started by the launcher (`startTaskArgs`), returned once the
 * client asked a scripted model whose answer never comes in time.
 */
async function startWaitingClient(box: Sandbox) {
  const llm = await startScriptedLlm();
  llm.enqueue({ text: "late", delayMs: 60_000 });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const launcher = new Deno.Command(DENO, {
    args: [...startTaskArgs(box.home), "run", "say something"],
    cwd: box.cwd,
    env: { ...box.env, LLM_API_KEY: "k" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const deadline = Date.now() + 60_000;
  while (llm.requests.length === 0) {
    if (Date.now() > deadline) {
      launcher.kill("SIGKILL");
      await launcher.output();
      await llm[Symbol.asyncDispose]();
      throw new Error("the client never asked the model");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { launcher, [Symbol.asyncDispose]: () => llm[Symbol.asyncDispose]() };
}

Deno.test("/status shows the grants in effect: the plan, or broader with --unrestricted", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: replConfig(box, llm).mcpServers.everything },
  });
  {
    await using repl = await startRepl(box);
    const status = await repl.send("/status", /Uptime/);
    assert.match(status, /Grants +narrow: the plan for this configuration/);
    // The client runs with the memory settings of a long-running process.
    const client = (await repl.leftoverProcesses()).filter((p) => p.includes(CLIENT_MAIN));
    assert.equal(client.length, 1, client.join("\n"));
    assert.ok(client[0].split(" ").includes(CLIENT_V8_FLAGS), client[0]);
    await repl.tmux.submit("/quit");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  await using broad = await startRepl(box, { args: ["--unrestricted"] });
  const status = await broad.send("/status", /Uptime/);
  assert.match(
    status,
    /Grants +broader than the plan: --allow-env --allow-read --allow-net --allow-run --allow-sys \(started with --unrestricted\)/,
  );
});

Deno.test("what the plan does not grant is refused to the client with the grant named; the next start grants it", async () => {
  await using box = await sandbox();
  await using http = await startEverythingHttp("streamableHttp");
  // A model over http: the plan then reads http_proxy, and the host is what is refused.
  const llm = {
    provider: "openai-compatible",
    model: "scripted-model",
    base_url: "http://127.0.0.1:9/v1",
  };
  const everything = { command: NODE, args: [everythingEntry(), "stdio"] };
  const configFile = await writeConfig(box, { LLM: llm, mcpServers: { everything } });
  // The launcher plans for the configuration in effect when patchbay starts; the client
  // then reads the configuration. Changed in between (an edit while starting), the client
  // meets a stdio command, a host:port and a variable the plan does not grant.
  const parsed = parseLaunchArgs(["tools"], ROOT);
  const { flags, mode } = await withEnv(box.env, () => flagsFor(parsed, DENO, box.cwd));
  assert.equal(mode, "narrow");
  const cat = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v cat"] }).output()).stdout,
  ).trim();
  const client = (args: string[]) =>
    runCommand(DENO, [
      "run",
      ...flags,
      "--config",
      join(PROJECT, "deno.json"),
      CLIENT_MAIN,
      ...args,
    ], {
      cwd: box.cwd,
      env: { ...box.env, PATCHBAY_LAUNCHER: "narrow", PATCHBAY_TEST_UNREAD: "secret" },
    });

  await Deno.writeTextFile(
    configFile,
    JSON.stringify({
      LLM: llm,
      mcpServers: { everything, other: { command: cat }, remote: { url: `${http.origin}/mcp` } },
    }),
  );
  const servers = await client(["tools"]);
  assert.equal(servers.code, 1, servers.stderr);
  assert.match(servers.stdout, /^everything \(\d+ tools\)/m);
  const stderr = servers.stderr;
  assert.match(stderr, new RegExp(`--allow-run=${escape(cat)} was not granted`));
  assert.match(stderr, new RegExp(`--allow-net=127\\.0\\.0\\.1:${http.port} was not granted`));
  assert.match(stderr, /restart patchbay/);
  assert.doesNotMatch(stderr, /NotCapable|Requires \w+ access|run again with/);

  await Deno.writeTextFile(
    configFile,
    JSON.stringify({
      LLM: llm,
      mcpServers: { everything: { ...everything, env: { TOKEN: "${PATCHBAY_TEST_UNREAD}" } } },
    }),
  );
  const variable = await client(["tools"]);
  assert.equal(variable.code, 1, variable.stderr);
  assert.match(variable.stderr, /Deno did not grant --allow-env=PATCHBAY_TEST_UNREAD/);
  assert.match(variable.stderr, /restart patchbay/);
  assert.doesNotMatch(variable.stderr, /secret|NotCapable|Requires \w+ access/);

  // Started again, the launcher plans for the configuration now in effect.
  await Deno.writeTextFile(
    configFile,
    JSON.stringify({
      LLM: llm,
      mcpServers: {
        everything: { ...everything, env: { TOKEN: "${PATCHBAY_TEST_UNREAD}" } },
        remote: { url: `${http.origin}/mcp` },
      },
    }),
  );
  const again = await runPatchbay(box, ["tools"], { env: { PATCHBAY_TEST_UNREAD: "secret" } });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^remote \(\d+ tools\)/m);
});

/** Runs `action` with this process's environment replaced by `env` for its duration. */
async function withEnv<T>(env: Record<string, string>, action: () => Promise<T>): Promise<T> {
  const saved = Deno.env.toObject();
  for (const name of Object.keys(saved)) Deno.env.delete(name);
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
  try {
    return await action();
  } finally {
    for (const name of Object.keys(Deno.env.toObject())) Deno.env.delete(name);
    for (const [name, value] of Object.entries(saved)) Deno.env.set(name, value);
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("the installed command starts without deno on PATH, under the plan", async () => {
  await using box = await sandbox();
  const root = join(box.home, "deno-bin");
  const install = await runCommand(DENO, ["task", "--quiet", "install"], {
    cwd: PROJECT,
    env: { ...box.env, DENO_INSTALL_ROOT: root },
  });
  assert.equal(install.code, 0, install.stderr);
  assert.match(install.stderr, /Installed .*deno-bin\/bin\/patchbay/);
  const shim = join(root, "bin", "patchbay");
  // PATH without any folder holding a deno: node (the server) stays reachable.
  const path = (box.env.PATH ?? "").split(":").filter((dir) => {
    try {
      Deno.statSync(join(dir, "deno"));
      return false;
    } catch {
      return true;
    }
  });
  const node = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v node"] }).output()).stdout,
  ).trim();
  // node (the server) and kill (which ends it) in a folder of their own: the folder they
  // come from may hold a deno too (/usr/bin).
  const nodeOnly = join(box.home, "node-bin");
  await Deno.mkdir(nodeOnly);
  for (const program of [node, "/bin/kill"]) {
    await Deno.symlink(program, join(nodeOnly, program.slice(program.lastIndexOf("/") + 1)));
  }
  const env = { ...box.env, PATH: [...path, nodeOnly].join(":") };
  const noDeno = await runCommand("/bin/sh", ["-c", "command -v deno || echo none"], {
    cwd: box.cwd,
    env,
  });
  assert.equal(noDeno.stdout.trim(), "none");
  const version = await runCommand(shim, ["--version"], { cwd: box.cwd, env });
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout.trim(), `patchbay ${manifest.version}`);
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { local: { command: "node", args: [everythingEntry(), "stdio"] } },
  });
  const tools = await runCommand(shim, ["tools"], { cwd: box.cwd, env });
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^local \(\d+ tools\)/m);
  const doctor = doctorLines(
    await runCommand(shim, ["doctor", "--offline", "--json"], {
      cwd: box.cwd,
      env: { ...env, LLM_API_KEY: "sk-x" },
    }),
  );
  const permissions = doctor.find((line) => line.name === "permissions")!;
  assert.equal(permissions.status, "pass", JSON.stringify(permissions));
});

const WANTED = { kind: "net", value: "idp.example:443", why: "the new authorization server" };

/** Runs the launcher in front of `standIn` to its end. */
async function launched(standIn: StandIn, args: string[]) {
  const output = await standIn.spawn(args).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("a failed command is not run again when the plan computed anew is the same; its code and what is missing are said", async () => {
  await using standIn = await standInClient({
    adds: [{ ...WANTED, why: "\x1b[2Jthe new authorization server" }],
    rediscover: ["remote"],
    failedWith: 1,
  });
  const result = await launched(standIn, ["call", "remote", "echo"]);
  assert.equal(result.code, 1, result.stderr);
  assert.equal((await standIn.runs()).length, 1, "run once: it may have had side effects");
  assert.match(
    result.stderr,
    /does not include net idp\.example:443 \(the new authorization server\), so the command is not run again/,
  );
  assert.ok(!result.stderr.includes("\x1b"), "no escape sequence of the client's is printed");
});

Deno.test("the interactive client is resumed once under an unchanged plan, and may not ask again", async () => {
  await using standIn = await standInClient({ adds: [WANTED], session: "k3f9x2m7q1ab" });
  const result = await launched(standIn, ["--debug"]);
  const runs = await standIn.runs();
  assert.equal(runs.length, 2, result.stderr);
  assert.match(runs[1], /main\.ts --debug --resume k3f9x2m7q1ab$/);
  assert.match(result.stderr, /so the session continues without it/);
  assert.equal(result.code, 75);
});

Deno.test(`the launcher restarts the client at most MAX_RESTARTS (${MAX_RESTARTS}) times, then stops and says why`, async () => {
  await using standIn = await standInClient({ adds: [WANTED], failedWith: 1 });
  await Deno.writeTextFile(join(standIn.dir, "widen"), "");
  const result = await launched(standIn, ["run", "hello"]);
  assert.equal((await standIn.runs()).length, MAX_RESTARTS + 1, result.stderr);
  assert.match(result.stderr, /asked for a restart 4 times in a row .*so it is not started again/);
  assert.equal(result.code, 1);
});

Deno.test("a malformed restart request is refused: the client is not started again", async () => {
  await using standIn = await standInClient({ adds: [WANTED], session: "--config=/tmp/x.json" });
  const result = await launched(standIn, ["run", "hello"]);
  assert.equal((await standIn.runs()).length, 1, result.stderr);
  assert.match(result.stderr, /request is malformed \(session is not a session id\)/);
  assert.equal(result.code, 75);
});

Deno.test("a client the launcher passed SIGTERM to is not started again, whatever it asked", async () => {
  await using standIn = await standInClient({ adds: [WANTED], session: "k3f9x2m7q1ab" });
  await Deno.writeTextFile(join(standIn.dir, "wait"), "");
  const launcher = standIn.spawn(["--debug"]);
  while (!await Deno.stat(join(standIn.dir, "started")).then(() => true, () => false)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  launcher.kill("SIGTERM");
  const output = await launcher.output();
  assert.equal((await standIn.runs()).length, 1, new TextDecoder().decode(output.stderr));
  assert.equal(output.code, 75);
});

/** The command line of the running process whose arguments include `needle`. */
async function commandLineWith(needle: string): Promise<string[] | undefined> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const raw = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    const words = raw.split("\0").filter(Boolean);
    if (words.some((word) => word.includes(needle))) return words;
  }
  return undefined;
}

Deno.test("deno task start: the client may write patchbay's state folder but not the launcher's remembered plans", async () => {
  await using box = await sandbox();
  // The client is still running (waiting for the model) while it is looked at.
  await using waiting = await startWaitingClient(box);
  const launcher = waiting.launcher;
  const state = join(box.home, ".local/state/patchbay");
  const plans = join(state, "launch");
  const client = await commandLineWith(`--deny-write=${plans}`);
  launcher.kill("SIGTERM");
  const status = await launcher.output();
  assert.equal(status.code, 143, new TextDecoder().decode(status.stderr));
  assert.ok(client, "the client runs with --deny-write of the plans folder");
  assert.ok(client.includes(CLIENT_MAIN), client.join(" "));
  assert.ok(client.some((word) => word.startsWith("--allow-write=") && word.includes(state)));
  // A script under the client's very flags: the state folder is writable, the plans are not.
  const flags = client.slice(client.indexOf("run") + 1, client.indexOf("--config"));
  const probe = join(box.cwd, "probe.ts");
  await Deno.writeTextFile(
    probe,
    `for (const path of Deno.args) {
       try { Deno.writeTextFileSync(path, "{}"); console.log("written"); }
       catch (error) { console.log((error as Error).name); }
     }`,
  );
  const attempt = await runCommand(DENO, [
    "run",
    ...flags,
    probe,
    join(state, "probe.json"),
    join(plans, "forged.json"),
  ], { cwd: box.cwd, env: box.env });
  assert.deepEqual(attempt.stdout.trim().split("\n"), ["written", "NotCapable"], attempt.stderr);
  assert.equal(await Deno.stat(join(plans, "forged.json")).catch(() => undefined), undefined);
});
