/**
 * Every command of patchbay, declared once: its words, arguments, options, help text, the
 * module loaded alongside the parser (`prefetch`), whether it is read without commander in its
 * plain form (`quick`), and what it runs. `main.ts` builds commander's tree from this list,
 * `commands/_chat_flags.ts` reads the quick commands' lines from it, and `patchbay
 * completions` walks the tree built from it. Adding a command is one entry here plus its
 * module.
 *
 * Plain data and dynamic imports only: this module loads with every invocation, before
 * commander (which it never imports) and before any command's module.
 *
 * @module
 */

import type { Command } from "commander";
import type { ApprovalsOptions } from "./approvals.ts";
import type { AuthListOptions, AuthLoginOptions, AuthLogoutOptions } from "./auth.ts";
import type { ChatOptions } from "./chat.ts";
import type { CompletionsOptions } from "./completions.ts";
import type { ScriptOptions } from "./_connect.ts";
import type { DoctorCommandOptions } from "./doctor.ts";
import type { McpAddOptions, McpEditOptions } from "./mcp.ts";
import type { McpImportOptions } from "./mcp_import.ts";
import type { McpListOptions } from "./mcp_list.ts";
import type { PermissionsOptions } from "./permissions.ts";
import type { ReadOptions } from "./read.ts";
import type { RunOptions } from "./run.ts";
import type { SessionsOptions } from "./sessions.ts";
import type { TraceShowOptions, TraceStatsOptions } from "./trace.ts";
import { DEFAULT_SESSION_LIMIT, parseLimit } from "./_limit.ts";
import { EXIT } from "../lib/errors.ts";
import type { GlobalOptions } from "../lib/startup.ts";
import { NAME } from "../lib/version.ts";
import { type OptionDeclaration, ROOT_OPTIONS } from "../lib/cli/root_options.ts";

export type { OptionDeclaration };

/**
 * What a command does: `options` are the root flags merged with its own, `args` its
 * arguments in order, `program` the root of commander's tree (absent when the line was read
 * without commander, which only quick commands are).
 */
export type CommandRun = (
  options: object,
  args: readonly unknown[],
  program?: Command,
) => Promise<number | void>;

/** A command's argument, as commander declares it (`<required>`, `[optional]`, `[many...]`). */
export interface ArgumentDeclaration {
  name: string;
  /** The line of `--help`; without one, commander shows no Arguments section. */
  description?: string;
  /** The only values accepted (commander checks them, completions offer them). */
  choices?: readonly string[];
}

/** One command (or group of subcommands). */
export interface CommandDeclaration {
  name: string;
  aliases?: readonly string[];
  description: string;
  arguments?: readonly ArgumentDeclaration[];
  options?: readonly OptionDeclaration[];
  /** Runs when its group is given no subcommand (`sessions` is `sessions list`). */
  default?: true;
  /**
   * Words after its arguments name a mistyped command of its group (`sessions lsit`) rather
   * than arguments too many.
   */
  wordsAreCommands?: true;
  /**
   * Read without commander when its line is plain (plain root flags, its words, then only
   * its switches). It takes no arguments and touches no server.
   */
  quick?: true;
  /** Shown after `--help`. */
  helpAfter?: string;
  /** Shown (dimmed) after a usage error. */
  helpAfterError?: string;
  /**
   * The module the command word's work needs, loaded alongside commander rather than after
   * the parse (top-level words only). A literal specifier, so that `deno compile` and the
   * permission plan see it.
   */
  prefetch?: () => Promise<unknown>;
  run?: CommandRun;
  commands?: readonly CommandDeclaration[];
}

/** Types a command's work: its options and its arguments as commander gives them. */
function action<O, A extends unknown[] = []>(
  work: (options: O, args: A, program?: Command) => Promise<number | void>,
): CommandRun {
  return (options, args, program) => work(options as O, args as A, program);
}

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
const scope = {
  flags: "-s, --scope <scope>",
  description: "project: ./servers_config.json (default); user: ~/.config/patchbay's",
};
const secretFlags: readonly OptionDeclaration[] = [
  {
    flags: "--move-secrets",
    description: "move secrets (env, headers, arguments) to .env without asking",
  },
  {
    flags: "--keep-secrets-inline",
    description: "write secrets into the entry (file must be mode 600)",
  },
];
const server = { name: "<server>", description: "server name" };
const loadConnect = () => import("./_connect.ts");

/** The root command: the interactive session, its flags those of every command. */
export const ROOT: CommandDeclaration = {
  name: NAME,
  description: "Interactive client for Model Context Protocol servers and a language model",
  options: ROOT_OPTIONS,
  wordsAreCommands: true,
  helpAfterError: "(run patchbay --help for usage)",
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
      run: action(async (options: ScriptOptions, [server]: [string | undefined]) =>
        (await import("./tools.ts")).tools(server, options)
      ),
    },
    {
      name: "prompts",
      description: "list the prompts of the configured servers",
      options: [jsonText],
      prefetch: loadConnect,
      run: action(async (options: ScriptOptions) =>
        (await import("./prompts.ts")).prompts(options)
      ),
    },
    {
      name: "resources",
      description: "list the resources and resource templates of the configured servers",
      options: [jsonText],
      prefetch: loadConnect,
      run: action(async (options: ScriptOptions) =>
        (await import("./resources.ts")).resources(options)
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
        },
      ],
      prefetch: loadConnect,
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
          run: action(async (options: AuthLoginOptions, [server]: [string]) =>
            (await import("./auth.ts")).authLogin(server, options)
          ),
        },
        {
          name: "logout",
          description: "revoke (where the server offers it) and delete a stored login",
          arguments: [{ name: "[server]", description: "server name" }],
          options: [{ flags: "--all", description: "log out of every stored login" }],
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
          run: action(async (options: SessionsOptions) =>
            (await import("./sessions.ts")).sessionsList(options)
          ),
        },
        {
          name: "show",
          arguments: [{ name: "<id>" }],
          description: "print a stored conversation (an id prefix is enough)",
          options: [jsonText],
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
          run: action(async (options: SessionsOptions, [id]: [string]) =>
            (await import("./sessions.ts")).sessionsDelete(id, options)
          ),
        },
      ],
    },
    {
      name: "mcp",
      description: "add, list, import and remove servers in servers_config.json",
      prefetch: () => import("./mcp.ts"),
      commands: [
        {
          name: "add",
          description: "add a server: a command (stdio) or a URL (http, sse); -- before its flags",
          arguments: [
            { name: "<name>", description: "server name" },
            { name: "<command-or-url>", description: "the command that starts it, or its URL" },
            { name: "[args...]", description: "the command's arguments" },
          ],
          options: [
            {
              flags: "-t, --transport <transport>",
              description: "stdio, http or sse (default: http for a URL)",
            },
            {
              flags: "-e, --env <KEY=VALUE>",
              description: "environment variable of a stdio server",
              parse: collect,
            },
            {
              flags: "-H, --header <Name: value>",
              description: "request header of a server at a URL",
              parse: collect,
            },
            scope,
            ...secretFlags,
          ],
          helpAfterError:
            "(a command's own flags go after --: patchbay mcp add <name> -- <command> [args...])",
          run: action(
            async (
              options: McpAddOptions,
              [name, at, args]: [string, string, string[]],
              program,
            ) => {
              const { mcpAdd } = await import("./mcp.ts");
              const rootFlags = new Set(program?.options.flatMap((o) => [o.short, o.long]))
                .difference(new Set([undefined])) as Set<string>;
              // commander keeps the words it parsed as `rawArgs` (not in its types).
              const words = (program as { rawArgs?: string[] } | undefined)?.rawArgs ?? [];
              return mcpAdd(name, at, args, { ...options, typed: { words, rootFlags } });
            },
          ),
        },
        {
          name: "add-json",
          description: "add a server from its JSON entry (any client's form)",
          arguments: [
            { name: "<name>", description: "server name" },
            { name: "<json>", description: "the entry, one quoted word" },
          ],
          options: [scope, ...secretFlags],
          run: action(async (options: McpEditOptions, [name, json]: [string, string]) =>
            (await import("./mcp.ts")).mcpAddJson(name, json, options)
          ),
        },
        {
          name: "import",
          description: "import the servers of claude-desktop, claude-code, cursor, vscode, gemini",
          arguments: [{
            name: "[source]",
            description: "a client's name, or the path of its JSON file",
          }],
          options: [
            { flags: "--dry-run", description: "show what would be added; write nothing" },
            scope,
            ...secretFlags,
          ],
          run: action(async (options: McpImportOptions, [source]: [string | undefined]) =>
            (await import("./mcp_import.ts")).mcpImport(source, options)
          ),
        },
        {
          name: "list",
          description: "list the configured servers (--check: connect them and say how each went)",
          options: [jsonShort, {
            flags: "--check",
            description: "connect each server and show its state and diagnosis",
          }],
          run: action(async (options: McpListOptions) =>
            (await import("./mcp_list.ts")).mcpList(options)
          ),
        },
        {
          name: "get",
          description: "show one server's entry (--check: connect it)",
          arguments: [server],
          options: [jsonShort, {
            flags: "--check",
            description: "connect the server and show its state and diagnosis",
          }],
          run: action(async (options: McpListOptions, [name]: [string]) =>
            (await import("./mcp_list.ts")).mcpGet(name, options)
          ),
        },
        {
          name: "remove",
          aliases: ["rm"],
          description: "remove a server's entry",
          arguments: [server],
          options: [scope],
          run: action(async (options: McpEditOptions, [name]: [string]) =>
            (await import("./mcp.ts")).mcpRemove(name, options)
          ),
        },
        {
          name: "enable",
          description: "start a disabled server again",
          arguments: [server],
          options: [scope],
          run: action(async (options: McpEditOptions, [name]: [string]) =>
            (await import("./mcp.ts")).mcpSetEnabled(name, true, options)
          ),
        },
        {
          name: "disable",
          description: "keep a server's entry but do not start it",
          arguments: [server],
          options: [scope],
          run: action(async (options: McpEditOptions, [name]: [string]) =>
            (await import("./mcp.ts")).mcpSetEnabled(name, false, options)
          ),
        },
      ],
    },
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
              parse: (value) => Number(value),
            },
          ],
          run: action(async (options: TraceShowOptions, [file]: [string]) =>
            (await import("./trace.ts")).traceShow(file, options)
          ),
        },
        {
          name: "stats",
          description: "per server and method: count, p50/p95 latency, errors, bytes",
          arguments: [{ name: "<file>", description: "the trace file" }],
          options: [jsonShort],
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
