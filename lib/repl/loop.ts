/**
 * The read-eval loop: prompt, read, run a slash command or a model turn, repeat, until
 * /exit, Ctrl+D, or Ctrl+C twice at an empty prompt.
 *
 * @module
 */

import { VERSION } from "../version.ts";
import { slashCommands } from "./commands.ts";
import type { ClientSession } from "../session/client_session.ts";
import { parseSlash } from "./slash.ts";
import { completeMention } from "./mention_completion.ts";
import { typedMessage } from "../agent/mentions.ts";
import {
  completeServerPrompt,
  configuredServers,
  parseServerPrompt,
  runServerPrompt,
} from "./server_prompts.ts";

/** How the session ended. */
export type LoopEnd = "exit" | "eof" | "interrupt";

/** The banner: version, model, servers, memory, and how to get help. */
export function banner(session: ClientSession): string {
  // Printed on stderr.
  const { errStyle: style, runtime } = session;
  const { llm } = runtime.config;
  const model = session.modelError
    ? `${llm.provider}/${llm.model} ${
      style.yellow(`(${session.modelError.message}: ${session.modelError.reason})`)
    }`
    : `${llm.provider}/${llm.model}`;
  const lines = [`${style.bold("patchbay")} ${VERSION} · ${model}`];
  // The remedy right under the error it answers (the model line), not under another line.
  if (session.modelError) lines.push(style.dim(`  remedy: ${session.modelError.remedy}`));
  lines.push(
    // Servers still connecting are named on one line; each is announced as it connects.
    session.renderServers(style, { compact: true }),
    style.dim(session.memory.status().text),
  );
  lines.push(style.dim("Type a message, or /help for commands. Ctrl+D exits."));
  return lines.join("\n");
}

/** Runs the session until the person leaves. */
export async function runLoop(session: ClientSession): Promise<LoopEnd> {
  const registry = slashCommands();
  const { editor, output, errStyle, promptStyle } = session;
  // The editor writes the prompt to the terminal's stream: its colours, not stdout's.
  const prompt = session.editor.interactive ? `${promptStyle.bold(promptStyle.green("›"))} ` : "";
  let interruptedOnce = false;
  for (;;) {
    if (session.exitRequested) return "exit";
    const input = await editor.read(prompt, promptStyle.dim("… "));
    if (input.kind === "eof") {
      if (editor.interactive) output.err("\n");
      return "eof";
    }
    if (input.kind === "interrupt") {
      if (input.hadText) {
        interruptedOnce = false;
        continue;
      }
      if (interruptedOnce) return "interrupt";
      interruptedOnce = true;
      output.err(errStyle.dim("(Ctrl+C again to exit, or Ctrl+D)\n"));
      continue;
    }
    interruptedOnce = false;
    const text = input.text;
    if (text.trim() === "") continue;
    const serverPrompt = parseServerPrompt(text, configuredServers(session));
    if (serverPrompt) {
      try {
        await runServerPrompt(session, serverPrompt);
      } catch (error) {
        output.stopSpinner();
        output.err(`${session.presentError(error)}\n`);
      }
      continue;
    }
    const slash = parseSlash(text);
    if (!slash) {
      await session.runTurn(typedMessage(text));
      continue;
    }
    const command = registry.find(slash.name);
    if (!command) {
      const suggestion = registry.suggest(slash.name);
      output.err(
        `Unknown command /${slash.name}${suggestion ? ` — did you mean /${suggestion}?` : ""}` +
          errStyle.dim(" (/help lists the commands)\n"),
      );
      continue;
    }
    try {
      if (await command.run(session, slash.args) === "exit") return "exit";
    } catch (error) {
      output.stopSpinner();
      output.err(`${session.presentError(error)}\n`);
    }
  }
}

/**
 * Tab completion for the session: slash commands and their arguments, servers' prompts
 * (`/server:prompt`) and their arguments, and `@server:uri` mentions anywhere in a line.
 */
export function completerFor(session: ClientSession) {
  const registry = slashCommands();
  return async (line: string) => {
    const mention = await completeMention(session, line);
    if (mention) return mention;
    const slash = await registry.complete(session, line);
    const prompts = await completeServerPrompt(session, line);
    if (!prompts) return slash;
    if (line.search(/\s/) >= 0) return prompts;
    return { candidates: [...slash.candidates, ...prompts.candidates], replace: line };
  };
}
