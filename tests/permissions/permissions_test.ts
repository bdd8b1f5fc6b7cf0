/**
 * `patchbay permissions`: the plan for each kind of configuration (pure), the command
 * lookup Deno's --allow-run needs, and the client running under exactly the printed
 * flags, with each removed flag named by the denial it causes.
 */

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { parseConfig } from "../../lib/config/load.ts";
import { checkPermissions } from "../../lib/doctor/permission_check.ts";
import { createEnvironment } from "../../lib/env.ts";
import { permissionFlags, shellQuote } from "../../lib/permissions/flags.ts";
import { resolveCommandPath } from "../../lib/permissions/command_path.ts";
import { compareGrants } from "../../lib/permissions/grants.ts";
import { type PermissionInputs, planPermissions } from "../../lib/permissions/plan.ts";
import { runInSandbox, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import {
  DENO,
  everythingEntry,
  filesystemEntry,
  NODE,
  TEST_SERVER_PACKAGES,
  testDepsDir,
} from "../support/deps.ts";
import { parseDoctor } from "../support/doctor.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { processesWith, startEverythingHttp } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

const DIRS = {
  state: "/home/ada/.local/state/patchbay",
  data: "/home/ada/.local/share/patchbay",
  config: "/home/ada/.config/patchbay",
};

/** Inputs for a configuration text, with a command lookup that finds everything in /opt/bin. */
function inputsFor(
  config: Record<string, unknown>,
  variables: Record<string, string> = {},
  extra: Partial<PermissionInputs> = {},
): PermissionInputs {
  const env = createEnvironment({ PATH: "/opt/bin:/usr/bin", ...variables });
  const text = JSON.stringify(config);
  return {
    config: parseConfig(text, "/work/servers_config.json", env),
    configFile: "/work/servers_config.json",
    envFile: "/work/.env",
    logFile: `${DIRS.state}/patchbay.log`,
    dirs: DIRS,
    env,
    os: "linux",
    configVariables: [...text.matchAll(/\$\{(\w+)/g)].map((m) => m[1]),
    resolveCommand: (command) => command.startsWith("missing") ? undefined : `/opt/bin/${command}`,
    cwd: "/work",
    ...extra,
  };
}

function values(flags: string[], kind: string): string[] {
  const flag = flags.find((f) => f.startsWith(`--allow-${kind}=`));
  return flag ? flag.slice(`--allow-${kind}=`.length).split(",") : [];
}

Deno.test("plan: adding the first stdio server asks only for its command, never for the variables every server gets", () => {
  const http = { remote: { url: "https://mcp.example.com/mcp" } };
  const llm = { provider: "openai", model: "gpt-4o-mini" };
  const before = permissionFlags(planPermissions(inputsFor({ LLM: llm, mcpServers: http })));
  const after = permissionFlags(planPermissions(inputsFor({
    LLM: llm,
    mcpServers: { ...http, local: { command: "node", args: ["server.js"] } },
  })));
  for (const name of ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]) {
    assert.ok(values(before, "env").includes(name), `${name} is granted from the start`);
  }
  for (const kind of ["env", "read", "write", "net"]) {
    assert.deepEqual(values(after, kind), values(before, kind), `no new ${kind} grant`);
  }
  assert.deepEqual(values(after, "run"), ["/opt/bin/kill", "/opt/bin/node"]);
});

Deno.test("plan: stdio and HTTP servers, the provider, patchbay's folders, config variables", () => {
  const plan = planPermissions(inputsFor({
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      fs: { command: "npx", args: ["-y", "server-filesystem", "${PROJECT_DIR:-.}"] },
      remote: {
        url: "https://mcp.example.com:8443/mcp",
        headers: { Authorization: "Bearer ${TOKEN}" },
      },
      old: { command: "python3", disabled: true },
    },
  }, { TOKEN: "t" }));
  const flags = permissionFlags(plan);
  assert.equal(flags[0], "--no-prompt");
  assert.deepEqual(flags.map((f) => f.split("=")[0]), [
    "--no-prompt",
    "--allow-env",
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-run",
    "--allow-sys",
  ]);
  assert.deepEqual(values(flags, "read"), [
    "/work/servers_config.json",
    "/work/.env",
    DIRS.state,
    DIRS.data,
    DIRS.config,
  ]);
  assert.deepEqual(values(flags, "write"), [DIRS.state, DIRS.data, DIRS.config]);
  assert.deepEqual(values(flags, "net"), ["api.openai.com:443", "mcp.example.com:8443"]);
  assert.deepEqual(
    values(flags, "run"),
    ["/opt/bin/kill", "/opt/bin/npx"],
    "disabled servers need nothing; kill ends what a stdio server started",
  );
  const env = values(flags, "env");
  for (
    const name of [
      "LLM_API_KEY",
      "HTTPS_PROXY",
      "https_proxy",
      "NO_PROXY",
      "HOME",
      "PATH",
      "XDG_STATE_HOME",
      "REDIS_URL",
      "REDIS_HOST",
      "PROJECT_DIR",
      "TOKEN",
    ]
  ) assert.ok(env.includes(name), `${name} in ${env}`);
  assert.ok(!env.includes("HTTP_PROXY"), "an https provider never reads http_proxy");
  assert.equal(plan.allEnv, undefined);
  assert.deepEqual(plan.notes, []);
  // The machine's name, and kill -0, tell whether a conversation's holder here still runs.
  assert.deepEqual(values(flags, "sys"), ["hostname"]);
});

Deno.test("plan: Redis needs the whole environment (ioredis) and its address", () => {
  const plan = planPermissions(inputsFor(
    { LLM: { provider: "ollama", model: "llama3" }, mcpServers: {} },
    { REDIS_HOST: "cache.internal", REDIS_PORT: "6380" },
  ));
  const flags = permissionFlags(plan);
  assert.ok(flags.includes("--allow-env"), flags.join(" "));
  assert.match(plan.allEnv!.why, /ioredis/);
  assert.deepEqual(values(flags, "net"), ["localhost:11434", "cache.internal:6380"]);
  assert.deepEqual(
    values(flags, "run"),
    ["/opt/bin/kill"],
    "no stdio server: kill alone, which asks whether a conversation's holder still runs",
  );

  const sentinel = planPermissions(inputsFor({
    LLM: { provider: "ollama", model: "llama3" },
    mcpServers: {},
    Memory: { sentinels: ["10.0.0.5:26379", "10.0.0.6"], sentinel_name: "mymaster" },
  }));
  assert.deepEqual(values(permissionFlags(sentinel), "net").slice(1), [
    "10.0.0.5:26379",
    "10.0.0.6:26379",
  ]);
  assert.match(sentinel.notes.join(" "), /master's address comes from the sentinels/);

  const file = planPermissions(inputsFor(
    { LLM: { provider: "ollama", model: "llama3" }, mcpServers: {}, Memory: { backend: "file" } },
    { REDIS_HOST: "cache.internal" },
  ));
  assert.equal(file.allEnv, undefined, "backend file never loads ioredis");
});

Deno.test("plan: OAuth needs the callback, the browser, the config folder, and its authorization server", () => {
  const config = {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { notion: { url: "https://mcp.notion.com/mcp", auth: { method: "oauth" } } },
  };
  const unknown = planPermissions(inputsFor(config));
  const flags = permissionFlags(unknown);
  assert.deepEqual(values(flags, "net"), [
    "api.openai.com:443",
    "mcp.notion.com:443",
    "127.0.0.1:3000",
    "[::1]:3000",
    "localhost:3000",
  ]);
  // `ss` names the process holding port 3000 when it is taken (lib/oauth/port_holder.ts).
  assert.deepEqual(values(flags, "run"), ["/opt/bin/xdg-open", "/opt/bin/ss", "/opt/bin/kill"]);
  assert.ok(values(flags, "env").includes("BROWSER"));
  assert.ok(values(flags, "read").includes(DIRS.config));
  assert.ok(values(flags, "write").includes(DIRS.config));
  assert.match(unknown.notes.join(" "), /authorization server of 'notion' is known only after/);

  const known = planPermissions(inputsFor(config, { BROWSER: "firefox:chromium %s" }, {
    oauthHosts: new Map([["notion", ["auth.notion.com:443"]]]),
  }));
  assert.ok(values(permissionFlags(known), "net").includes("auth.notion.com:443"));
  assert.deepEqual(values(permissionFlags(known), "run"), [
    "/opt/bin/firefox",
    "/opt/bin/chromium",
    "/opt/bin/ss",
    "/opt/bin/kill",
  ]);
  assert.deepEqual(known.notes, []);

  // An opener or a port-holder namer that is not on PATH: left out of the flags (Deno
  // cannot grant a name it cannot resolve, and would say so at every start), with a note.
  const missing = planPermissions(inputsFor(config, { BROWSER: "missing-opener" }, {
    oauthHosts: new Map([["notion", ["auth.notion.com:443"]]]),
    resolveCommand: (command) => command === "ss" ? undefined : `/opt/bin/${command}`,
  }));
  assert.deepEqual(values(permissionFlags(missing), "run"), [
    "/opt/bin/missing-opener",
    "/opt/bin/kill",
  ]);
  const noOpener = planPermissions(inputsFor(config, {}, {
    oauthHosts: new Map([["notion", ["auth.notion.com:443"]]]),
    resolveCommand: (command) => command === "xdg-open" ? undefined : `/opt/bin/${command}`,
  }));
  assert.deepEqual(values(permissionFlags(noOpener), "run"), ["/opt/bin/ss", "/opt/bin/kill"]);
  assert.deepEqual(noOpener.notes, [
    "'xdg-open' is not on PATH, so it is not granted (it opens the OAuth authorization page " +
    "in the browser): the authorization URL is printed to open by hand.",
  ]);
  assert.match(missing.notes.join(" "), /'ss' is not on PATH, so it is not granted/);
});

Deno.test("plan: proxy, a log file elsewhere, a command that is not installed", () => {
  const plan = planPermissions(inputsFor(
    {
      LLM: { provider: "openai", model: "gpt-4o-mini" },
      mcpServers: {
        tool: { command: "missing-server" },
        local: { command: "missing/bin/server" },
      },
    },
    { HTTPS_PROXY: "http://user:pw@proxy.corp:3128" },
    { logFile: "/var/log/patchbay.log" },
  ));
  const flags = permissionFlags(plan);
  assert.ok(values(flags, "net").includes("proxy.corp:3128"));
  assert.ok(values(flags, "write").includes("/var/log/patchbay.log"));
  assert.ok(values(flags, "read").includes("/var/log/patchbay.log"));
  // A bare name Deno cannot find is not granted (Deno would print its own notice of the
  // name, raw); a path is granted as written.
  assert.deepEqual(values(flags, "run"), ["/opt/bin/kill", "missing/bin/server"]);
  assert.match(
    plan.notes.join(" "),
    /'missing-server' \(server 'tool'\) is not on the PATH the server gets, so it is not granted/,
  );
});

Deno.test("flags are quoted for the shell where they must be", () => {
  assert.equal(shellQuote("--allow-net=api.openai.com:443"), "--allow-net=api.openai.com:443");
  assert.equal(shellQuote("--allow-net=[::1]:3000"), "'--allow-net=[::1]:3000'");
  assert.equal(shellQuote("--allow-read=/my files/x"), "'--allow-read=/my files/x'");
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
});

Deno.test("grants: missing ones are named with their flags; unrestricted ones are broader", () => {
  const plan = planPermissions(inputsFor({
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { fs: { command: "node" } },
  }));
  const grantedAllBut = (missing: string) => (descriptor: Deno.PermissionDescriptor) => {
    if (descriptor.name === "run" && "command" in descriptor) {
      return descriptor.command === missing ? "prompt" : "granted";
    }
    if (!("path" in descriptor || "host" in descriptor || "variable" in descriptor)) {
      return descriptor.name === "sys" ? "granted" : "prompt";
    }
    return "granted";
  };
  const report = compareGrants(plan, grantedAllBut("/opt/bin/node"));
  assert.deepEqual(report.missing.map((g) => `${g.kind}=${g.value}`), ["run=/opt/bin/node"]);
  assert.deepEqual(report.broader, ["sys"]);
  const check = checkPermissions(plan, grantedAllBut("/opt/bin/node"));
  assert.equal(check.status, "fail");
  assert.match(
    check.finding,
    /^Permission denied: Deno does not grant 1 permission .*--allow-run=\/opt\/bin\/node/,
  );
  assert.deepEqual(check.details, ["--allow-run=/opt/bin/node  starts server 'fs'"]);
  // Run directly (not by the launcher): the flag goes on the command line.
  assert.equal(
    check.remedy,
    "add --allow-run=/opt/bin/node to the deno run / deno install command " +
      "(`patchbay permissions` prints the full set for your configuration)",
  );
  // Everything granted without limits is broader than the plan: a warning, with the remedy.
  const broad = checkPermissions(plan, () => "granted");
  assert.equal(broad.status, "warn");
  assert.match(broad.finding, /broader than needed: --allow-read --allow-write --allow-net/);
  assert.match(broad.remedy ?? "", /without --unrestricted/);
});

Deno.test("command lookup: PATH order, symbolic links kept, execute bit, relative paths", async () => {
  await using tmp = await tempDir("patchbay-which-");
  const dir = tmp.path;
  const [first, second] = [join(dir, "a"), join(dir, "b")];
  await Deno.mkdir(first);
  await Deno.mkdir(second);
  await Deno.writeTextFile(join(first, "tool"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(second, "tool"), "#!/bin/sh\n");
  await Deno.chmod(join(second, "tool"), 0o755);
  await Deno.symlink(join(second, "tool"), join(first, "linked"));
  const path = `${first}:${second}`;
  assert.equal(resolveCommandPath("tool", path, dir), join(second, "tool"), "not executable");
  assert.equal(resolveCommandPath("linked", path, dir), join(first, "linked"));
  assert.equal(resolveCommandPath("./b/tool", undefined, dir), join(second, "tool"));
  assert.equal(resolveCommandPath("nothing", path, dir), undefined);
});

// ------------------------------------------------------------------ the real client

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const KEY = "sk-permissions-test";

/** `deno run <flags> main.ts <args>` in the sandbox, with nothing but the flags given. */
function runUnder(box: Sandbox, flags: string[], args: string[]) {
  return runInSandbox(box, DENO, ["run", ...flags, MAIN, ...args]);
}

/** `flags` with one value taken out of one flag (the flag dropped if nothing is left). */
function without(flags: string[], kind: string, value: string): string[] {
  return flags.flatMap((flag) => {
    if (!flag.startsWith(`--allow-${kind}=`)) return [flag];
    const rest = values([flag], kind).filter((v) => v !== value);
    assert.notEqual(rest.length, values([flag], kind).length, `${value} not in ${flag}`);
    return rest.length > 0 ? [`--allow-${kind}=${rest.join(",")}`] : [];
  });
}

Deno.test("the client runs under exactly the printed flags; each removed flag is named", async () => {
  await using llm = await startScriptedLlm({ apiKey: KEY });
  await using http = await startEverythingHttp("streamableHttp");
  // The key comes from the process environment: with its --allow-env taken away, a copy
  // in .env would still be read.
  await using box = await sandbox({ LLM_API_KEY: KEY });
  const configFile = await writeConfig(box, {
    LLM: { provider: "openai", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      filesystem: { command: NODE, args: [filesystemEntry(), box.cwd] },
      remote: { url: `${http.origin}/mcp` },
    },
  });
  const printed = await runPatchbay(box, ["permissions", "--json"]);
  assert.equal(printed.code, 0, printed.stderr);
  const { flags } = JSON.parse(printed.stdout) as { flags: string[] };
  assert.ok(!flags.includes("--allow-env"), "no Redis: named variables only");
  const nodePath = values(flags, "run").find((path) => !path.endsWith("/kill"))!;
  assert.match(nodePath, /\/node$/);
  assert.equal(values(flags, "run").length, 2, "node, and kill for the servers' process groups");
  const state = join(box.home, ".local", "state", "patchbay");

  // A session works: servers connect and list their tools; a turn calls a tool.
  const tools = await runUnder(box, flags, ["tools"]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^everything \(\d+ tools\)/m);
  assert.match(tools.stdout, /^filesystem \(\d+ tools\)/m);
  assert.match(tools.stdout, /^remote \(\d+ tools\)/m);
  assert.equal(tools.stderr, "", "nothing was refused");
  llm.enqueue(
    { toolCalls: [{ name: "everything__echo", arguments: { message: "under narrow flags" } }] },
    { text: "The server echoed it." },
  );
  const turn = await runUnder(box, flags, ["--yes", "run", "echo something"]);
  assert.equal(turn.code, 0, turn.stderr);
  assert.match(turn.stdout, /The server echoed it\./);
  const toolMessage = llm.requests[1].body.messages.find((m: { role: string }) =>
    m.role === "tool"
  );
  assert.match(toolMessage.content, /Echo: under narrow flags/);

  // The doctor agrees: everything the configuration needs is granted, and no more.
  const doctor = parseDoctor(await runUnder(box, flags, ["doctor", "--json", "--offline"]));
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
  assert.equal(
    doctor.check("permissions").finding,
    "every permission the configuration needs is granted, and no more",
  );

  // One value removed at a time: the denial names the flag that was taken away.
  const noRun = await runUnder(box, without(flags, "run", nodePath), ["tools"]);
  assert.equal(noRun.code, 1);
  assert.match(noRun.stderr, /Permission denied: .*--allow-run=node was not granted/);
  assert.match(noRun.stderr, /remedy: add --allow-run=node to the deno run/);

  const serverHost = new URL(http.origin).host;
  const noServer = await runUnder(box, without(flags, "net", serverHost), ["tools", "remote"]);
  assert.equal(noServer.code, 1);
  assert.match(noServer.stderr, /Failed to connect to server 'remote': Session terminated/);
  assert.ok(noServer.stderr.includes(`--allow-net=${serverHost} was not granted`), noServer.stderr);

  const providerHost = new URL(llm.baseUrl).host;
  const noNet = await runUnder(box, without(flags, "net", providerHost), ["run", "hello"]);
  assert.equal(noNet.code, 1);
  assert.match(noNet.stderr, /error: Permission denied: connecting to OpenAI at /);
  assert.ok(noNet.stderr.includes(`add --allow-net=${providerHost} `), noNet.stderr);

  const noKey = await runUnder(box, without(flags, "env", "LLM_API_KEY"), ["run", "hello"]);
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /error: Permission denied: reading LLM_API_KEY/);
  assert.match(noKey.stderr, /add --allow-env=LLM_API_KEY /);

  const noConfig = await runUnder(box, without(flags, "read", configFile), ["tools"]);
  assert.equal(noConfig.code, 1);
  assert.ok(noConfig.stderr.includes(`add --allow-read=${configFile} `), noConfig.stderr);

  const noLog = await runUnder(box, without(flags, "write", state), ["tools"]);
  assert.equal(noLog.code, 0, "the log is not worth stopping for");
  assert.match(
    noLog.stderr,
    new RegExp(`Add --allow-write=${state}(/patchbay\\.log)? to the deno`),
  );

  const doctorNoRun = parseDoctor(
    await runUnder(box, without(flags, "run", nodePath), ["doctor", "--json", "--offline"]),
  );
  assert.equal(doctorNoRun.code, 1);
  const missing = doctorNoRun.check("permissions");
  assert.equal(missing.status, "fail");
  // Without read access to PATH's folders the doctor names the command as Deno resolves it.
  assert.match(missing.finding, /: --allow-run=node$/);
  assert.match(doctorNoRun.check("server:everything").finding, /--allow-run=node was not granted/);
});

Deno.test("the example configuration, used when there is no servers_config.json: both servers connect under exactly the printed flags; without --allow-run the denial names it", async () => {
  await using box = await sandbox();
  // The example starts its servers with `npx -y <package>@<version>`. On a fresh machine
  // npx downloads them; here the tests may not use the network, so npm runs offline (the
  // sandbox HOME's .npmrc) and npx finds those exact versions in the working folder's
  // node_modules: the test servers' install. A version mismatch fails (ENOTCACHED)
  // instead of downloading.
  await Deno.symlink(join(testDepsDir(), "node_modules"), join(box.cwd, "node_modules"));
  await Deno.writeTextFile(join(box.home, ".npmrc"), "offline=true\nupdate-notifier=false\n");
  const example = new URL("../../servers_config.example.json", import.meta.url).pathname;
  const exampleText = await Deno.readTextFile(example);
  for (
    const name of [
      "@modelcontextprotocol/server-everything",
      "@modelcontextprotocol/server-filesystem",
    ] as const
  ) {
    const version = TEST_SERVER_PACKAGES[name];
    assert.ok(exampleText.includes(`"${name}@${version}"`), `the example runs ${name}@${version}`);
  }
  const fallback = /No servers_config\.json here; using the example configuration /;

  const printed = await runPatchbay(box, ["permissions", "--json"]);
  assert.equal(printed.code, 0, printed.stderr);
  const plan = JSON.parse(printed.stdout) as { config: string; flags: string[] };
  assert.equal(plan.config, example);
  const npxPath = values(plan.flags, "run").find((path) => !path.endsWith("/kill"))!;
  assert.deepEqual(
    values(plan.flags, "run").filter((path) => path !== npxPath).map((path) => basename(path)),
    ["kill"],
    "both servers run npx",
  );
  assert.match(npxPath, /\/npx$/);

  const tools = await runUnder(box, plan.flags, ["tools"]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^everything \(\d+ tools\)/m);
  assert.match(tools.stdout, /^filesystem \(\d+ tools\)/m);
  assert.match(tools.stderr, fallback);
  assert.doesNotMatch(tools.stderr, /denied|not granted|Failed to connect/i);

  const noRun = await runUnder(box, without(plan.flags, "run", npxPath), ["tools"]);
  assert.equal(noRun.code, 1);
  assert.match(noRun.stderr, /Failed to connect to server 'everything'/);
  assert.match(noRun.stderr, /Failed to connect to server 'filesystem'/);
  assert.match(noRun.stderr, /Permission denied: .*--allow-run=npx was not granted/);
  assert.match(noRun.stderr, /remedy: add --allow-run=npx to the deno run/);
});

Deno.test("under --allow-run=<commands> a server that ignores stdin's end is still ended", async () => {
  // Deno.kill (process groups) needs --allow-run for every program; with a list of
  // commands only the child's own handle can signal it, and the transport must use it.
  const connectOne = new URL("../fixtures/connect_one.ts", import.meta.url).pathname;
  const fixture = new URL("../fixtures/stdio_server.ts", import.meta.url).pathname;
  const tag = `--tag=narrow-run-${crypto.randomUUID()}`;
  const output = await new Deno.Command(DENO, {
    args: [
      "run",
      "--no-prompt",
      "--allow-env",
      `--allow-run=${DENO}`,
      connectOne,
      DENO,
      "run",
      "--quiet",
      "--no-config",
      fixture,
      "--ignore-eof",
      "--ignore-sigterm",
      tag,
    ],
    stdout: "piped",
    stderr: "piped",
    // A transport that cannot end its server would wait for it forever.
    signal: AbortSignal.timeout(30_000),
  }).output();
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stderr));
  assert.equal(decoder.decode(output.stdout).trim(), '"connected"');
  assert.deepEqual(processesWith(tag), [], "the server was ended (SIGTERM ignored, then SIGKILL)");
});
