/**
 * Every command of patchbay, declared once: its words, arguments, options, help text, the
 * module loaded alongside the parser (`prefetch`), whether it is read without commander in its
 * plain form (`quick`), and what it runs. `main.ts` builds commander's tree from this list,
 * `commands/_chat_flags.ts` reads the quick commands' lines from it, and `patchbay
 * completions` walks the tree built from it. Adding a command is one entry here plus its
 * module (the `mcp` group's entries are in `_declarations_mcp.ts`, for this file's length;
 * the shape of an entry is `lib/cli/command_declaration.ts`). Each command that runs states
 * the permission plan it needs (`needs`, `lib/cli/launch_needs.ts`): the launcher
 * (`launch.ts`) reads it here, as it reads the options that name files.
 *
 * Plain data and dynamic imports only: this module loads with every invocation, before
 * commander (which it never imports) and before any command's module.
 *
 * @module
 */

import type { ApprovalsOptions } from "./approvals.ts";
import type { AuthListOptions, AuthLoginOptions, AuthLogoutOptions } from "./auth.ts";
import type { ChatOptions } from "./chat.ts";
import type { CompletionsOptions } from "./completions.ts";
import type { ScriptOptions } from "./_connect.ts";
import type { DoctorCommandOptions } from "./doctor.ts";
import type { PermissionsOptions } from "./permissions.ts";
import type { ReadOptions } from "./read.ts";
import type { RunOptions } from "./run.ts";
import type { SessionsOptions } from "./sessions.ts";
import type { TraceShowOptions, TraceStatsOptions } from "./trace.ts";
import { DEFAULT_SESSION_LIMIT, parseLimit } from "./_limit.ts";
import { EXIT } from "../lib/errors.ts";
import type { GlobalOptions } from "../lib/cli/startup.ts";
import { NAME } from "../lib/version.ts";
import { ROOT_OPTIONS } from "../lib/cli/root_options.ts";
import {
  action,
  type CommandDeclaration,
  type CommandRun,
  type OptionDeclaration,
} from "../lib/cli/command_declaration.ts";
import { MCP } from "./_declarations_mcp.ts";
import { SKILLS } from "./_declarations_skills.ts";
import { TASKS } from "./_declarations_tasks.ts";

export type { CommandDeclaration, CommandRun, OptionDeclaration };

/** `run --help`'s last section: what a script can tell from the exit code. */
const RUN_EXIT_CODES = `
Exit codes:
  ${EXIT.ok}    answered
  ${EXIT.failure}    failed: the model, the configuration, a limit
  ${EXIT.usage}    usage: the command line was wrong
  ${EXIT.serversFailed}    servers failed: every enabled server (the answer came without tools),
       or any one with --require-servers (the model was not asked)
  ${EXIT.interrupted}  interrupted (Ctrl+C)`;

/** Every occurrence of the option, in order. */
const collect = (value: string, previous: unknown) => [...(previous as string[] ?? []), value];

const json = "print JSON instead of text";
const jsonShort = { flags: "--json", description: "print JSON" };
const jsonResult = { flags: "--json", description: "print the whole result as JSON" };
const jsonText = { flags: "--json", description: json };
const loadConnect = () => import("./_connect.ts");

/** The root command: the interactive session, its flags those of every command. */
export const ROOT: CommandDeclaration = {
  name: NAME,
  description: "Interactive client for Model Context Protocol servers and a language model",
  options: ROOT_OPTIONS,
  wordsAreCommands: true,
  helpAfterError: "(run patchbay --help for usage)",
  needs: "servers",
  run: action(async (options: ChatOptions) => (await import("./chat.ts")).chat(options)),
  commands: [
    {
      name: "config",
      description: "work with servers_config.json",
      prefetch: () => import("./config_check.ts"),
      commands: [{
        name: "check",
        description: "validate the configuration and print a summary (exit code 0 valid, 1 not)",
        options: [{
          flags: "--json",
          description: "print the normalized configuration as JSON (secrets redacted)",
        }],
        quick: true,
        needs: "config-check",
        run: action(async (options: GlobalOptions & { json?: boolean }) =>
          (await import("./config_check.ts")).configCheck(options)
        ),
      }],
    },
    {
      name: "doctor",
      description: "check the configuration, key, provider, servers, memory and permissions",
      options: [
        {
          flags: "--json",
          description: "one JSON object per check (name, status, finding, remedy, details)",
        },
        {
          flags: "--offline",
          description: "skip the checks that need the internet (provider request, DNS)",
        },
      ],
      prefetch: () => import("./doctor.ts"),
      needs: "servers",
      run: action(async (options: DoctorCommandOptions) =>
        (await import("./doctor.ts")).doctor(options)
      ),
    },
    {
      name: "permissions",
      description: "print the narrowest Deno permission flags for the configuration",
      options: [
        { flags: "--json", description: "print the flags, each grant and its reason as JSON" },
        {
          flags: "--discover",
          description:
            "first find the authorization server of OAuth servers without a login (no browser)",
        },
        {
          flags: "--rediscover <server>",
          description:
            "with --discover: find this server's authorization server even if a login names one",
          parse: collect,
        },
      ],
      quick: true,
      prefetch: () => import("./permissions.ts"),
      needs: "broad",
      run: action(async (options: PermissionsOptions) =>
        (await import("./permissions.ts")).permissions(options)
      ),
    },
    {
      name: "run",
      description: "ask once and exit: the answer on stdout, status on stderr (prompt or stdin)",
      arguments: [{
        name: "[prompt...]",
        description: "what to ask; text piped on stdin is added to it",
      }],
      options: [
        { flags: "--json", description: "newline-delimited JSON events on stdout" },
        {
          flags: "--require-servers",
          description: "exit 3 before asking the model when a configured server fails to connect",
        },
      ],
      helpAfter: RUN_EXIT_CODES,
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: RunOptions, [words]: [string[]]) =>
        (await import("./run.ts")).run(words, options)
      ),
    },
    {
      name: "tools",
      description: "list the tools of the configured servers (exit 1 if a server failed)",
      arguments: [{ name: "[server]", description: "only this server" }],
      options: [jsonText],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ScriptOptions, [server]: [string | undefined]) =>
        (await import("./tools.ts")).tools(server, options)
      ),
    },
    {
      name: "prompts",
      description: "list the prompts of the configured servers",
      arguments: [{ name: "[server]", description: "only this server" }],
      options: [jsonText],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ScriptOptions, [server]: [string | undefined]) =>
        (await import("./prompts.ts")).prompts(server, options)
      ),
    },
    {
      name: "resources",
      description: "list the resources and resource templates of the configured servers",
      arguments: [{ name: "[server]", description: "only this server" }],
      options: [jsonText],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ScriptOptions, [server]: [string | undefined]) =>
        (await import("./resources.ts")).resources(server, options)
      ),
    },
    {
      name: "call",
      description: "call a tool without the model and print its result",
      arguments: [
        { name: "<tool>", description: "server.tool (or a tool name that only one server has)" },
        {
          name: "[json-args]",
          description: "arguments as a JSON object; - reads them from stdin",
        },
      ],
      options: [jsonResult],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ScriptOptions, [spec, args]: [string, string | undefined]) =>
        (await import("./call.ts")).call(spec, args, options)
      ),
    },
    {
      name: "read",
      description: "print a resource exactly as the server sends it",
      arguments: [{ name: "<uri>", description: "resource URI" }],
      options: [
        {
          flags: "--server <name>",
          description: "the server to read from (default: the one that lists it)",
        },
        jsonResult,
        {
          flags: "--output <file>",
          description: "write the contents to a file, binary ones included",
          writes: true,
        },
      ],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ReadOptions, [uri]: [string]) =>
        (await import("./read.ts")).read(uri, options)
      ),
    },
    {
      name: "prompt",
      description: "fill in a server's prompt and print its messages",
      arguments: [
        { name: "<name>", description: "prompt name (server.name when several servers have it)" },
        { name: "[args...]", description: "arguments as name=value" },
      ],
      options: [jsonResult],
      prefetch: loadConnect,
      needs: "servers",
      run: action(async (options: ScriptOptions, [name, words]: [string, string[]]) =>
        (await import("./prompt.ts")).prompt(name, words, options)
      ),
    },
    {
      name: "auth",
      description: "OAuth logins to MCP servers",
      prefetch: () => import("./auth.ts"),
      commands: [
        {
          name: "list",
          description:
            "show OAuth servers and stored logins: issuer, expiry, scopes (never tokens)",
          options: [jsonShort],
          needs: "servers",
          run: action(async (options: AuthListOptions) =>
            (await import("./auth.ts")).authList(options)
          ),
        },
        {
          name: "login",
          description: "log in to an OAuth server now, in the browser",
          arguments: [{ name: "<server>", description: "server name in servers_config.json" }],
          options: [{
            flags: "--force",
            description: "log in again even if a valid login is stored",
          }],
          needs: "servers",
          run: action(async (options: AuthLoginOptions, [server]: [string]) =>
            (await import("./auth.ts")).authLogin(server, options)
          ),
        },
        {
          name: "logout",
          description: "revoke (where the server offers it) and delete a stored login",
          arguments: [{ name: "[server]", description: "server name" }],
          options: [{ flags: "--all", description: "log out of every stored login" }],
          needs: "servers",
          run: action(async (options: AuthLogoutOptions, [server]: [string | undefined]) =>
            (await import("./auth.ts")).authLogout(server, options)
          ),
        },
      ],
    },
    {
      name: "sessions",
      description: "list stored conversations, most recent first (show or delete one)",
      prefetch: () => import("./sessions.ts"),
      commands: [
        {
          name: "list",
          default: true,
          // `sessions` runs `list` by default, which would otherwise swallow a typo.
          wordsAreCommands: true,
          description: "list stored conversations, most recent first",
          options: [
            jsonText,
            {
              flags: "-n, --limit <n>",
              description: `how many to list (default ${DEFAULT_SESSION_LIMIT})`,
              parse: (value, _previous, fail) => parseLimit(value, fail),
            },
            { flags: "-a, --all", description: "list every stored conversation, of every folder" },
          ],
          quick: true,
          needs: "servers",
          run: action(async (options: SessionsOptions) =>
            (await import("./sessions.ts")).sessionsList(options)
          ),
        },
        {
          name: "show",
          arguments: [{ name: "<id>" }],
          description: "print a stored conversation (an id prefix is enough)",
          options: [jsonText],
          needs: "servers",
          run: action(async (options: SessionsOptions, [id]: [string]) =>
            (await import("./sessions.ts")).sessionsShow(id, options)
          ),
        },
        {
          name: "delete",
          arguments: [{ name: "<id>" }],
          aliases: ["rm"],
          description: "delete a stored conversation (an id prefix is enough)",
          options: [jsonText],
          needs: "servers",
          run: action(async (options: SessionsOptions, [id]: [string]) =>
            (await import("./sessions.ts")).sessionsDelete(id, options)
          ),
        },
      ],
    },
    MCP,
    SKILLS,
    TASKS,
    {
      name: "completions",
      description: "print a shell completion script for bash, zsh or fish",
      arguments: [{
        name: "[shell]",
        description: "bash, zsh or fish",
        choices: ["bash", "zsh", "fish"],
      }],
      options: [{
        flags: "--servers",
        description: "print the configured server names instead (what the scripts ask)",
      }],
      prefetch: () => import("./completions.ts"),
      needs: "servers",
      run: action(
        async (options: CompletionsOptions, [shell]: [string | undefined], program) =>
          (await import("./completions.ts")).completions(shell, program!, options),
      ),
    },
    {
      name: "approvals",
      description: "tool approvals remembered for this folder ([p]roject at the question)",
      prefetch: () => import("./approvals.ts"),
      commands: [
        {
          name: "list",
          default: true,
          description: "list the approvals remembered for this folder",
          options: [jsonText, { flags: "-a, --all", description: "list those of every folder" }],
          needs: "servers",
          run: action(async (options: ApprovalsOptions) =>
            (await import("./approvals.ts")).approvalsList(options)
          ),
        },
        {
          name: "revoke",
          description: "forget remembered approvals: an id, a server, or server/tool",
          arguments: [{ name: "[what]", description: "id, server or server/tool" }],
          options: [jsonText, {
            flags: "-a, --all",
            description: "forget every approval remembered for this folder",
          }],
          needs: "servers",
          run: action(async (options: ApprovalsOptions, [what]: [string | undefined]) =>
            (await import("./approvals.ts")).approvalsRevoke(what, options)
          ),
        },
      ],
    },
    {
      name: "trace",
      description: "read a wire trace (docs/trace.md)",
      prefetch: () => import("./trace.ts"),
      commands: [
        {
          name: "show",
          description: "the trace as a readable timeline: time, server, direction, method, latency",
          arguments: [{
            name: "<file>",
            description: "the trace file (--trace, PATCHBAY_TRACE or Trace.file)",
          }],
          options: [
            { flags: "--server <name>", description: "only this server" },
            {
              flags: "--method <method>",
              description: "only this method (tools/call, initialize, …)",
            },
            {
              flags: "--errors",
              description: "only error responses, failed exchanges and failures",
            },
            {
              flags: "-n, --last <n>",
              description: "only the last n lines shown",
            },
          ],
          needs: "trace-file",
          run: action(async (options: TraceShowOptions, [file]: [string]) =>
            (await import("./trace.ts")).traceShow(file, options)
          ),
        },
        {
          name: "stats",
          description: "per server and method: count, p50/p95 latency, errors, bytes",
          arguments: [{ name: "<file>", description: "the trace file" }],
          options: [jsonShort],
          needs: "trace-file",
          run: action(async (options: TraceStatsOptions, [file]: [string]) =>
            (await import("./trace.ts")).traceStats(file, options)
          ),
        },
      ],
    },
  ],
};

/** The declaration at `path` (`["sessions", "list"]`), or `undefined`. */
export function declarationAt(path: readonly string[]): CommandDeclaration | undefined {
  let at: CommandDeclaration | undefined = ROOT;
  for (const word of path) at = at?.commands?.find((command) => command.name === word);
  return at;
}
