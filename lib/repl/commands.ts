/**
 * The slash commands of the interactive session (docs/interactive.md). Each
 * has a one-line summary for /help; arguments are passed on exactly as typed.
 * The commands live by job: `server_commands.ts`, `conversation_commands.ts`,
 * `status_commands.ts`, and `/mcp`, `/image`, `/trace` in their own files.
 *
 * @module
 */

import { wrapWords } from "../text/text.ts";
import { terminalColumns } from "../terminal/terminal.ts";
import { mcpCommand } from "./mcp_command.ts";
import type { ClientSession } from "../session/client_session.ts";
import { type SlashCommand, SlashRegistry } from "./slash.ts";
import { imageCommand } from "./image_command.ts";
import { traceCommand } from "./trace_command.ts";
import { skillsCommand } from "./skills_command.ts";
import { tasksCommand } from "./tasks_command.ts";
import { out } from "./slash_helpers.ts";
import {
  callCommand,
  connectionsCommand,
  promptCommand,
  promptsCommand,
  refreshCommand,
  resourceCommand,
  resourcesCommand,
  toolsCommand,
} from "./server_commands.ts";
import { apiStatsCommand, debugCommand, statusCommand } from "./status_commands.ts";
import {
  clearCommand,
  exitCommand,
  historyCommand,
  memoryCommand,
} from "./conversation_commands.ts";

type Command = SlashCommand<ClientSession>;

/** Builds the registry; the session's `renderServers` draws `/connections`. */
export function slashCommands(): SlashRegistry<ClientSession> {
  const registry = new SlashRegistry<ClientSession>();
  const commands: Command[] = [
    {
      name: "help",
      summary: "list the commands",
      run(s) {
        out(s, "Commands:");
        const columns = helpColumns();
        out(s, registry.help(columns, HELP_FORMS).join("\n"));
        for (
          const line of [
            'Anything else is sent to the model. End a line with \\ to continue it, or wrap several lines in """.',
            "Ctrl+C cancels a running answer; Ctrl+C twice or Ctrl+D exits.",
          ]
        ) out(s, s.style.dim(wrapWords(line, columns).join("\n")));
        return Promise.resolve();
      },
    },
    debugCommand,
    toolsCommand,
    memoryCommand,
    apiStatsCommand,
    statusCommand,
    connectionsCommand,
    refreshCommand,
    promptsCommand,
    promptCommand,
    resourcesCommand,
    resourceCommand,
    callCommand,
    clearCommand,
    historyCommand,
    exitCommand,
  ];
  for (const command of commands) registry.add(command);
  registry.add(mcpCommand);
  registry.add(imageCommand);
  registry.add(traceCommand);
  registry.add(skillsCommand);
  registry.add(tasksCommand);
  return registry;
}

/**
 * What a line can hold besides the commands, listed by /help with them: a server's prompt
 * run by name (`repl/server_prompts.ts`) and a resource mention (`agent/mentions.ts`).
 */
const HELP_FORMS = [
  ["/<server>:<prompt> [k=v ...]", "run a server's prompt and send it to the model"],
  ["@<server>:<uri>", "in a message: attach that resource to it (Tab completes both)"],
] as const;

/** The terminal's width for /help; unbounded when the output is not a terminal. */
function helpColumns(): number {
  return terminalColumns(Deno.stdout);
}
