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

/** The command that starts patchbay the way a user does (`deno task start`). */
export const PATCHBAY = [DENO, "task", "--quiet", "--config", DENO_JSON, "start"] as const;

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
  /** Variables added to the sandbox's environment; `undefined` removes one (`NO_COLOR`). */
  env?: Record<string, string | undefined>;
  /**
   * Wait until every server has connected or failed (the prompt comes first, and the
   * server block is printed once the last one has settled). @default true
   */
  waitForServers?: boolean;
  /**
   * The terminal's width in columns: wide enough that patchbay's lines, which it wraps to the
   * terminal between words, stay whole for the tests that read them (the width itself is
   * tested at 40 and 80 columns, `tests/e2e/terminal_conventions_test.ts`). @default 400
   */
  width?: number;
}

/** The sandbox's environment for a program in the terminal, with `changes` applied. */
export function terminalEnv(
  box: Sandbox,
  changes: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string | undefined> = {
    ...box.env,
    TERM: "xterm-256color",
    LLM_API_KEY: "test-key",
    ...changes,
  };
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** Starts `deno task start` in tmux, in the sandbox, and waits for the prompt. */
export async function startRepl(box: Sandbox, options: StartReplOptions = {}): Promise<Repl> {
  const tmux = await TmuxSession.start({
    command: [...PATCHBAY, ...(options.args ?? [])],
    env: terminalEnv(box, options.env),
    cwd: box.cwd,
    width: options.width ?? 400,
    height: 50,
  });
  const repl = new Repl(tmux, box);
  const banner = await repl.tmux.waitFor("Type a message, or /help", { timeoutMs: 30_000 });
  if (options.waitForServers !== false && /^Servers {2}.*connecting to /m.test(banner)) {
    await repl.tmux.waitFor(/^Servers {2}\d+ of \d+ servers? connected/m, { timeoutMs: 60_000 });
  }
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

  /**
   * Processes of this sandbox still alive, as `pid command line`: patchbay itself and the
   * servers it started (recognised by the sandbox's HOME in their environment, which
   * patchbay passes on, or its path on their command line). The pane's own shell and
   * tmux are not counted.
   */
  async leftoverProcesses(): Promise<string[]> {
    const pane = await this.tmux.panePid();
    const found: string[] = [];
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid) || pid === pane || pid === Deno.pid) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
        const command = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").join(" ")
          .trim();
        const environment = Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0");
        if (/^(\S*\/)?tmux\b/.test(command)) continue;
        if (
          command.includes(this.box.home) || environment.includes(`HOME=${this.box.home}`)
        ) {
          found.push(`${pid} ${command}`);
        }
      } catch {
        // Exited while listing, or not ours to read.
      }
    }
    return found;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.tmux[Symbol.asyncDispose]();
  }
}

/** The history file patchbay keeps in the sandbox. */
export function historyFile(box: Sandbox): string {
  return join(box.home, ".local/state/patchbay/history");
}
