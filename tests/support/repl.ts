/**
 * The real patchbay in a pseudo-terminal (tmux), wired to real MCP servers and the
 * scripted model: what the end-to-end REPL tests drive.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sandbox } from "./cli.ts";
import { DENO, everythingEntry, filesystemEntry, NODE } from "./deps.ts";
import type { ScriptedLlm } from "./scripted_llm.ts";
import { TmuxSession } from "./tmux.ts";

const DENO_JSON = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** A configuration with server-everything and server-filesystem, and the scripted model. */
export function replConfig(box: Sandbox, llm: ScriptedLlm, extra: Record<string, unknown> = {}) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      filesystem: { command: NODE, args: [filesystemEntry(), box.cwd] },
    },
    ...extra,
  };
}

/** Options of {@linkcode startRepl}. */
export interface StartReplOptions {
  args?: string[];
  env?: Record<string, string>;
}

/** Starts `deno task start` in tmux, in the sandbox, and waits for the prompt. */
export async function startRepl(box: Sandbox, options: StartReplOptions = {}): Promise<Repl> {
  const tmux = await TmuxSession.start({
    command: [DENO, "task", "--quiet", "--config", DENO_JSON, "start", ...(options.args ?? [])],
    env: {
      ...box.env,
      TERM: "xterm-256color",
      LLM_API_KEY: "test-key",
      ...options.env,
    },
    cwd: box.cwd,
    width: 160,
    height: 50,
  });
  const repl = new Repl(tmux, box);
  await repl.tmux.waitFor("Type a message, or /help", { timeoutMs: 30_000 });
  return repl;
}

/** A running REPL: type, then wait for what should appear after it. */
export class Repl implements AsyncDisposable {
  constructor(readonly tmux: TmuxSession, readonly box: Sandbox) {}

  /** Submits a line and waits until `expect` appears in the output that follows. */
  async send(line: string, expect: RegExp | string, timeoutMs?: number): Promise<string> {
    const before = (await this.tmux.screen()).length;
    await this.tmux.submit(line);
    const screen = await this.tmux.waitFor(expect, { after: before, timeoutMs });
    return screen.slice(before);
  }

  /** Waits for `expect` in output that appears after the current screen. */
  async expectNext(action: () => Promise<void>, expect: RegExp | string): Promise<string> {
    const before = (await this.tmux.screen()).length;
    await action();
    return (await this.tmux.waitFor(expect, { after: before })).slice(before);
  }

  /** Processes still running with the sandbox's path in their command line (orphans). */
  async leftoverProcesses(): Promise<string[]> {
    const { stdout } = await new Deno.Command("pgrep", {
      args: ["-af", this.box.home],
      stdout: "piped",
    })
      .output();
    return new TextDecoder().decode(stdout).split("\n").filter((line) =>
      line.trim() && !line.includes("pgrep") && !line.includes("tmux")
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.tmux[Symbol.asyncDispose]();
  }
}

/** The history file patchbay keeps in the sandbox. */
export function historyFile(box: Sandbox): string {
  return join(box.home, ".local/state/patchbay/history");
}
