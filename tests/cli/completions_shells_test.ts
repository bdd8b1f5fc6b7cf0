/**
 * `patchbay completions` installed into real interactive shells (in tmux), as a person
 * installs it: bash sources the script (`complete -p` shows it), zsh finds it on `$fpath`
 * through compinit, fish from its completions folder (zsh and fish only where installed: `apt-get
 * install zsh fish`). Tab completes the configured server names (asked of `patchbay
 * completions --servers` at Tab time, which must neither wait on the terminal nor lose
 * `$PATH`) from the very first Tab, and a file name with a space stays one word.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { TmuxSession } from "../support/tmux.ts";

const DENO_JSON = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** Whether `program` is installed (zsh is not on every machine the tests run on). */
function installed(program: string): boolean {
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${program}`] }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** A project with two servers and a configuration file whose name has a space. */
async function project(box: Sandbox): Promise<Record<string, string>> {
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { alpha: { command: "true" }, beta: { command: "true" } },
  });
  await Deno.writeTextFile(join(box.cwd, "my config.json"), "{}");
  const bin = join(box.home, "bin");
  await Deno.mkdir(bin, { recursive: true });
  // `patchbay` on PATH is the launcher, as an installed one is.
  await Deno.writeTextFile(
    join(bin, "patchbay"),
    `#!/bin/sh\nexec '${DENO}' task --quiet --config '${DENO_JSON}' start "$@"\n`,
    { mode: 0o755 },
  );
  return { ...box.env, PATH: `${bin}:${box.env.PATH}`, TERM: "xterm-256color" };
}

/** Types `line`, presses Tab, and waits until the prompt line reads `expected`. */
async function tab(shell: TmuxSession, prompt: string, line: string, expected: string) {
  await shell.press("C-u");
  await shell.type(line);
  await shell.press("Tab");
  // Completing a server name runs patchbay: bounded well above its start-up time.
  await shell.waitFor(new RegExp(`\\n${prompt} ${escape(expected)}\\s*$`), { timeoutMs: 60_000 });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("completions bash in an interactive bash: complete -p, servers, a file name with a space", async () => {
  await using box = await sandbox();
  const env = await project(box);
  const made = await runPatchbay(box, ["completions", "bash"]);
  assert.equal(made.code, 0, made.stderr);
  const script = join(box.home, "patchbay.bash");
  await Deno.writeTextFile(script, made.stdout);
  await Deno.writeTextFile(join(box.home, ".bashrc"), `PS1='bash$ '\nsource '${script}'\n`);
  await using shell = await TmuxSession.start({
    command: ["bash", "--rcfile", join(box.home, ".bashrc"), "-i"],
    env,
    cwd: box.cwd,
  });
  await shell.waitFor(/bash\$\s*$/);
  await shell.submit("complete -p patchbay");
  await shell.waitFor(/complete -F _patchbay patchbay\nbash\$\s*$/);
  await tab(shell, "bash\\$", "patchbay tools al", "patchbay tools alpha");
  await tab(shell, "bash\\$", "patchbay auth login b", "patchbay auth login beta");
  await tab(shell, "bash\\$", "patchbay -c my", "patchbay -c my\\ config.json");
});

Deno.test({
  name: "completions zsh from $fpath in an interactive zsh: the first Tab completes servers",
  ignore: !installed("zsh"),
  fn: async () => {
    await using box = await sandbox();
    const env = await project(box);
    const made = await runPatchbay(box, ["completions", "zsh"]);
    assert.equal(made.code, 0, made.stderr);
    const functions = join(box.home, ".zfunc");
    await Deno.mkdir(functions);
    await Deno.writeTextFile(join(functions, "_patchbay"), made.stdout);
    await Deno.writeTextFile(
      join(box.home, ".zshrc"),
      `fpath=('${functions}' $fpath)\nautoload -U compinit && compinit -u\nPS1='zsh%% '\n`,
    );
    await using shell = await TmuxSession.start({
      command: ["zsh", "-i"],
      env: { ...env, ZDOTDIR: box.home },
      cwd: box.cwd,
    });
    await shell.waitFor(/zsh%\s*$/);
    // The first Tab of the shell: compinit loads the script and completes at once.
    await tab(shell, "zsh%", "patchbay tools al", "patchbay tools alpha");
    await tab(shell, "zsh%", "patchbay auth logout b", "patchbay auth logout beta");
    await tab(shell, "zsh%", "patchbay -c my", "patchbay -c my\\ config.json");
    await tab(shell, "zsh%", "patchbay appr", "patchbay approvals");
  },
});

Deno.test({
  name: "completions fish from its completions folder: servers, commands, a file name with a space",
  ignore: !installed("fish"),
  fn: async () => {
    await using box = await sandbox();
    const env = await project(box);
    const made = await runPatchbay(box, ["completions", "fish"]);
    assert.equal(made.code, 0, made.stderr);
    const folder = join(box.home, ".config", "fish", "completions");
    await Deno.mkdir(folder, { recursive: true });
    await Deno.writeTextFile(join(folder, "patchbay.fish"), made.stdout);
    // fish's own completion engine, as Tab runs it, on each line.
    const complete = async (line: string) => {
      const { code, stdout, stderr } = await new Deno.Command("fish", {
        args: ["--no-config", "-c", `set -g fish_complete_path '${folder}'; complete -C'${line}'`],
        cwd: box.cwd,
        env,
        clearEnv: true,
      }).output();
      assert.equal(code, 0, new TextDecoder().decode(stderr));
      return new TextDecoder().decode(stdout).split("\n").map((l) => l.split("\t")[0]);
    };
    assert.deepEqual((await complete("patchbay tools ")).filter(Boolean), ["alpha", "beta"]);
    assert.ok((await complete("patchbay auth logout ")).includes("beta"));
    assert.ok((await complete("patchbay -c my")).includes("my config.json"));
    assert.ok((await complete("patchbay appr")).includes("approvals"));
  },
});
