/**
 * `patchbay completions bash|zsh|fish`, through the real entry point: the scripts hold the
 * whole command tree, and bash completes commands, subcommands, flags and, asking
 * `patchbay completions --servers` at Tab time, the server names of the configuration in
 * effect (a server added after the script was made included).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

const DENO_JSON = fileURLToPath(new URL("../../deno.json", import.meta.url));

function config(servers: string[]) {
  return {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: Object.fromEntries(servers.map((name) => [name, { command: "true" }])),
  };
}

/** What bash offers for `line` (the last word being completed), with the script loaded. */
async function bashComplete(box: Sandbox, script: string, line: string[]): Promise<string[]> {
  const bin = join(box.home, "bin");
  await Deno.mkdir(bin, { recursive: true });
  // `patchbay` on PATH is the launcher, as an installed one is.
  await Deno.writeTextFile(
    join(bin, "patchbay"),
    `#!/bin/sh\nexec '${DENO}' task --quiet --config '${DENO_JSON}' start "$@"\n`,
    { mode: 0o755 },
  );
  const scriptFile = join(box.home, "patchbay.bash");
  await Deno.writeTextFile(scriptFile, script);
  const words = line.map((w) => `'${w}'`).join(" ");
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: [
      "-c",
      `source '${scriptFile}'; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; ` +
      `_patchbay; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    cwd: box.cwd,
    env: { ...box.env, PATH: `${bin}:${box.env.PATH}` },
    clearEnv: true,
  }).output();
  const decoder = new TextDecoder();
  assert.equal(code, 0, decoder.decode(stderr));
  return decoder.decode(stdout).split("\n").filter(Boolean).sort();
}

Deno.test("completions bash: commands, subcommands, flags and the servers in effect", async () => {
  await using box = await sandbox();
  await writeConfig(box, config(["everything", "filesystem"]));
  const made = await runPatchbay(box, ["completions", "bash"]);
  assert.equal(made.code, 0, made.stderr);
  const script = made.stdout;
  const syntax = await new Deno.Command("bash", { args: ["-n"], stdin: "piped" }).spawn();
  const writer = syntax.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  assert.equal((await syntax.status).code, 0);

  assert.deepEqual(await bashComplete(box, script, ["patchbay", "a"]), ["approvals", "auth"]);
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "sessions", ""]), [
    "delete",
    "list",
    "rm",
    "show",
  ]);
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "run", "--re"]), [
    "--require-servers",
  ]);
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "completions", ""]), [
    "bash",
    "fish",
    "zsh",
  ]);
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "tools", ""]), [
    "everything",
    "filesystem",
  ]);
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "read", "--server", "f"]), [
    "filesystem",
  ]);
  // Read when Tab is pressed: a server added since, and the file --config names.
  await writeConfig(box, config(["everything", "filesystem", "fresh"]));
  assert.deepEqual(await bashComplete(box, script, ["patchbay", "auth", "login", "f"]), [
    "filesystem",
    "fresh",
  ]);
  const other = await writeConfig(box, config(["elsewhere"]), "other.json");
  assert.deepEqual(
    await bashComplete(box, script, ["patchbay", "-c", other, "tools", ""]),
    ["elsewhere"],
  );
});

Deno.test("completions zsh and fish hold the whole tree; a wrong shell is a usage error", async () => {
  await using box = await sandbox();
  await writeConfig(box, "{ broken");
  const zsh = await runPatchbay(box, ["completions", "zsh"]);
  assert.equal(zsh.code, 0, zsh.stderr);
  assert.match(zsh.stdout, /^#compdef patchbay\n/);
  assert.match(zsh.stdout, /"approvals revoke"\) subs=""/);
  const fish = await runPatchbay(box, ["completions", "fish"]);
  assert.equal(fish.code, 0, fish.stderr);
  assert.match(fish.stdout, /complete -c patchbay -n '__patchbay_at' -a 'completions'/);
  assert.match(fish.stdout, /-n '__patchbay_at sessions list' -l all -s a/);
  assert.match(fish.stdout, /-n '__patchbay_at tools' -a '\(__patchbay_servers\)'/);
  // A configuration that cannot be read offers no names, and no error at Tab time.
  const servers = await runPatchbay(box, ["completions", "--servers"]);
  assert.equal(servers.code, 0, servers.stderr);
  assert.equal(servers.stdout, "");
  // Usage mistakes read as every other error does: message, cause, remedy; exit code 2.
  const wrong = await runPatchbay(box, ["completions", "tcsh"]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /^error: invalid shell 'tcsh': the choices are bash, zsh, fish$/m);
  assert.match(wrong.stderr, /^ {2}cause: {2}the command line could not be understood$/m);
  assert.match(wrong.stderr, /^ {2}remedy: run `patchbay completions --help` for usage$/m);
  const none = await runPatchbay(box, ["completions"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^error: which shell\? completions are made for bash, zsh, fish$/m);
  assert.match(none.stderr, /remedy: e\.g\. patchbay completions bash > /);
});
