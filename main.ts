/**
 * patchbay: an interactive client for the Model Context Protocol.
 *
 * The entry point and command tree. Each command's work lives in `commands/`; this file
 * only wires flags to actions and hands every action to the command boundary.
 *
 * @module
 */

import type { Command } from "commander";
import { runCommand } from "./commands/_boundary.ts";
import type { ApprovalsOptions } from "./commands/approvals.ts";
import type { CompletionsOptions } from "./commands/completions.ts";
import { installLastResort, reportEscaped } from "./commands/_last_resort.ts";
import type { AuthListOptions, AuthLoginOptions, AuthLogoutOptions } from "./commands/auth.ts";
import type { ChatOptions } from "./commands/chat.ts";
import type { ScriptOptions } from "./commands/_connect.ts";
import type { DoctorCommandOptions } from "./commands/doctor.ts";
import type { PermissionsOptions } from "./commands/permissions.ts";
import type { ReadOptions } from "./commands/read.ts";
import type { RunOptions } from "./commands/run.ts";
import type { SessionsOptions } from "./commands/sessions.ts";
import type { McpAddOptions, McpEditOptions } from "./commands/mcp.ts";
import type { McpImportOptions } from "./commands/mcp_import.ts";
import type { McpListOptions } from "./commands/mcp_list.ts";
import type { TraceShowOptions, TraceStatsOptions } from "./commands/trace.ts";
import { plainChatFlags, plainCommand, type QuickCommand } from "./commands/_chat_flags.ts";
import { EXIT, UsageError } from "./lib/errors.ts";
import { sessionLogger } from "./lib/session_log.ts";
import type { GlobalOptions } from "./lib/startup.ts";
import { stderrStyle, stdoutStyle } from "./lib/style.ts";
import { didYouMean } from "./lib/text.ts";
import { NAME, VERSION } from "./lib/version.ts";
import { taskWorkingDirectory } from "./lib/task_folder.ts";
import { fileURLToPath } from "node:url";

/** `run --help`'s last section: what a script can tell from the exit code. */
const RUN_EXIT_CODES = `
Exit codes:
  ${EXIT.ok}    answered
  ${EXIT.failure}    failed: the model, the configuration, a limit
  ${EXIT.usage}    usage: the command line was wrong
  ${EXIT.serversFailed}    servers failed: every enabled server (the answer came without tools),
       or any one with --require-servers (the model was not asked)
  ${EXIT.interrupted}  interrupted (Ctrl+C)`;

// Start-up order (docs/performance.md): this file loads only what every invocation needs. commander
// comes when there is a command line to parse, and each command's module (with the
// servers' SDK, the model client, Redis, OAuth, the REPL behind it) only when that command
// runs, so `--version`, `config check` or `sessions` never load what they do not use.

/** The command-line parser, loaded by {@linkcode buildProgram}. */
let cli: typeof import("commander");

/**
 * An action that hands its work to the command boundary: `work` gets the root flags merged
 * with the command's own options, then the command's arguments; its exit code (or its
 * error's, printed as JSON with `--json`) goes to `setExit`.
 */
function act<O extends object, A extends unknown[]>(
  setExit: (code: number) => void,
  work: (options: O, ...args: A) => Promise<number | void>,
): (...params: [...A, O, Command]) => Promise<void> {
  return async (...params) => {
    const command = params.at(-1) as Command;
    const options = params.at(-2) as O;
    const args = params.slice(0, -2) as A;
    const all = { ...command.optsWithGlobals<O>(), ...options };
    const { json } = options as { json?: boolean };
    setExit(await runCommand(() => work(all, ...args), { json }));
  };
}

/** Builds the command tree; `setExit` receives each action's exit code. */
export async function buildProgram(setExit: (code: number) => void): Promise<Command> {
  cli ??= await import("commander");
  const { DEFAULT_SESSION_LIMIT, parseLimit } = await import("./commands/_limit.ts");
  const style = stderrStyle();
  const program = new cli.Command(NAME)
    .description("Interactive client for Model Context Protocol servers and a language model")
    .version(`${NAME} ${VERSION}`, "-v, --version", "print the version and exit")
    .helpOption("-h, --help", "show this help")
    .option(
      "-c, --config <path>",
      "configuration file (default: ./servers_config.json, else the example configuration)",
    )
    .option("--env-file <path>", "environment file (default: ./.env)")
    .option("--log-file <path>", "log file (default: ~/.local/state/patchbay/patchbay.log)")
    .option("-d, --debug", "verbose logging, mirrored to stderr")
    .option("-y, --yes", "run tool calls and sampling requests without asking")
    .option(
      "--accept-form-defaults",
      "answer servers' forms with their defaults when every required field has one " +
        "(decline otherwise) instead of asking",
    )
    .option(
      "-r, --resume [id]",
      "continue the most recent conversation, or the one with this id (a prefix is enough)",
    )
    .option(
      "--trace <file>",
      "record every JSON-RPC message to and from every server in this file (docs/trace.md)",
    )
    .option("--trace-model", "include model requests in the trace (method, model, tokens)")
    .allowExcessArguments(true)
    .showHelpAfterError(style.dim("(run patchbay --help for usage)"))
    .configureOutput({
      outputError: (text, write) => write(style.red(text)),
      // patchbay's own colour decision: commander's would read variables (FORCE_COLOR,
      // CLICOLOR_FORCE) the permission plan does not grant, and die on the refusal.
      getOutHasColors: () => stdoutStyle().enabled,
      getErrHasColors: () => style.enabled,
    })
    .exitOverride();
  // A word too many is a mistake (typically JSON arguments the shell split in two), never
  // something to ignore; the commands that read words themselves say what is wrong.
  const ownsWords = new Set<Command>([program]);
  program.hook("preAction", async (_root, action) => {
    if (ownsWords.has(action)) return;
    const excess = excessArguments(action);
    if (excess.length === 0) return;
    setExit(await runCommand(() => Promise.reject(tooManyArguments(action, excess))));
    throw new cli.CommanderError(EXIT.usage, "patchbay.excessArguments", "");
  });

  program.action(async (_options, command: Command) => {
    const words = command.args;
    setExit(
      await runCommand(async () => {
        if (words.length > 0) throw unknownCommand(words[0], program);
        const { chat } = await import("./commands/chat.ts");
        return chat(program.opts<ChatOptions>());
      }),
    );
  });

  const config = program.command("config").description("work with servers_config.json");
  config.command("check")
    .description("validate the configuration and print a summary (exit code 0 valid, 1 not)")
    .option("--json", "print the normalized configuration as JSON (secrets redacted)")
    .action(act(setExit, QUICK_ACTIONS["config check"]));

  program.command("doctor")
    .description("check the configuration, key, provider, servers, memory and permissions")
    .option("--json", "one JSON object per check (name, status, finding, remedy, details)")
    .option("--offline", "skip the checks that need the internet (provider request, DNS)")
    .action(act(setExit, async (all: DoctorCommandOptions) => {
      const { doctor } = await import("./commands/doctor.ts");
      return doctor(all);
    }));

  program.command("permissions")
    .description("print the narrowest Deno permission flags for the configuration")
    .option("--json", "print the flags, each grant and its reason as JSON")
    .option(
      "--discover",
      "first find the authorization server of OAuth servers without a login (no browser)",
    )
    .option(
      "--rediscover <server>",
      "with --discover: find this server's authorization server even if a login names one",
      (server: string, before: string[] = []) => [...before, server],
    )
    .action(act(setExit, QUICK_ACTIONS.permissions));

  program.command("run")
    .description("ask once and exit: the answer on stdout, status on stderr (prompt or stdin)")
    .argument("[prompt...]", "what to ask; text piped on stdin is added to it")
    .option("--json", "newline-delimited JSON events on stdout")
    .option(
      "--require-servers",
      "exit 3 before asking the model when a configured server fails to connect",
    )
    .addHelpText("after", RUN_EXIT_CODES)
    .action(act(setExit, async (all: RunOptions, words: string[]) => {
      const { run } = await import("./commands/run.ts");
      return run(words, all);
    }));

  const json = "print JSON instead of text";
  program.command("tools")
    .description("list the tools of the configured servers (exit 1 if a server failed)")
    .argument("[server]", "only this server")
    .option("--json", json)
    .action(act(setExit, async (all: ScriptOptions, server: string | undefined) => {
      const { tools } = await import("./commands/tools.ts");
      return tools(server, all);
    }));
  program.command("prompts")
    .description("list the prompts of the configured servers")
    .option("--json", json)
    .action(act(setExit, async (all: ScriptOptions) => {
      const { prompts } = await import("./commands/prompts.ts");
      return prompts(all);
    }));
  program.command("resources")
    .description("list the resources and resource templates of the configured servers")
    .option("--json", json)
    .action(act(setExit, async (all: ScriptOptions) => {
      const { resources } = await import("./commands/resources.ts");
      return resources(all);
    }));
  program.command("call")
    .description("call a tool without the model and print its result")
    .argument("<tool>", "server.tool (or a tool name that only one server has)")
    .argument("[json-args]", "arguments as a JSON object; - reads them from stdin")
    .option("--json", "print the whole result as JSON")
    .action(act(setExit, async (all: ScriptOptions, spec: string, args: string | undefined) => {
      const { call } = await import("./commands/call.ts");
      return call(spec, args, all);
    }));
  program.command("read")
    .description("print a resource exactly as the server sends it")
    .argument("<uri>", "resource URI")
    .option("--server <name>", "the server to read from (default: the one that lists it)")
    .option("--json", "print the whole result as JSON")
    .option("--output <file>", "write the contents to a file, binary ones included")
    .action(act(setExit, async (all: ReadOptions, uri: string) => {
      const { read } = await import("./commands/read.ts");
      return read(uri, all);
    }));
  program.command("prompt")
    .description("fill in a server's prompt and print its messages")
    .argument("<name>", "prompt name (server.name when several servers have it)")
    .argument("[args...]", "arguments as name=value")
    .option("--json", "print the whole result as JSON")
    .action(act(setExit, async (all: ScriptOptions, name: string, words: string[]) => {
      const { prompt } = await import("./commands/prompt.ts");
      return prompt(name, words, all);
    }));

  const auth = program.command("auth").description("OAuth logins to MCP servers");
  auth.command("list")
    .description("show OAuth servers and stored logins: issuer, expiry, scopes (never tokens)")
    .option("--json", "print JSON")
    .action(act(setExit, async (all: AuthListOptions) => {
      const { authList } = await import("./commands/auth.ts");
      return authList(all);
    }));
  auth.command("login")
    .description("log in to an OAuth server now, in the browser")
    .argument("<server>", "server name in servers_config.json")
    .option("--force", "log in again even if a valid login is stored")
    .action(act(setExit, async (all: AuthLoginOptions, server: string) => {
      const { authLogin } = await import("./commands/auth.ts");
      return authLogin(server, all);
    }));
  auth.command("logout")
    .description("revoke (where the server offers it) and delete a stored login")
    .argument("[server]", "server name")
    .option("--all", "log out of every stored login")
    .action(act(setExit, async (all: AuthLogoutOptions, server: string | undefined) => {
      const { authLogout } = await import("./commands/auth.ts");
      return authLogout(server, all);
    }));

  const sessions = program.command("sessions")
    .description("list stored conversations, most recent first (show or delete one)");
  const jsonOption = "print JSON instead of text";
  const listSessions = sessions.command("list", { isDefault: true })
    .description("list stored conversations, most recent first")
    .allowExcessArguments(true)
    .option("--json", jsonOption)
    .option(
      "-n, --limit <n>",
      `how many to list (default ${DEFAULT_SESSION_LIMIT})`,
      (value: string) => parseLimit(value, (message) => new cli.InvalidArgumentError(message)),
    )
    .option("-a, --all", "list every stored conversation, of every folder")
    .action(async (options: SessionsOptions, command: Command) => {
      const words = command.args;
      // `sessions` runs `list` by default, which would otherwise swallow a typo.
      await act(setExit, async (all: SessionsOptions) => {
        if (words.length > 0) throw unknownCommand(words[0], sessions, "patchbay sessions");
        return await QUICK_ACTIONS["sessions list"](all);
      })(options, command);
    });
  sessions.command("show <id>")
    .description("print a stored conversation (an id prefix is enough)")
    .option("--json", jsonOption)
    .action(act(setExit, async (all: SessionsOptions, id: string) => {
      const { sessionsShow } = await import("./commands/sessions.ts");
      return sessionsShow(id, all);
    }));
  sessions.command("delete <id>")
    .alias("rm")
    .description("delete a stored conversation (an id prefix is enough)")
    .option("--json", jsonOption)
    .action(act(setExit, async (all: SessionsOptions, id: string) => {
      const { sessionsDelete } = await import("./commands/sessions.ts");
      return sessionsDelete(id, all);
    }));

  ownsWords.add(listSessions);

  const mcp = program.command("mcp")
    .description("add, list, import and remove servers in servers_config.json");
  const scope = "project: ./servers_config.json (default); user: ~/.config/patchbay's";
  const secretFlags = (command: Command) =>
    command
      .option("--move-secrets", "move secrets (env, headers, arguments) to .env without asking")
      .option("--keep-secrets-inline", "write secrets into the entry (file must be mode 600)");
  const collect = (value: string, before: string[] = []) => [...before, value];
  secretFlags(
    mcp.command("add")
      .description("add a server: a command (stdio) or a URL (http, sse); -- before its flags")
      .argument("<name>", "server name")
      .argument("<command-or-url>", "the command that starts it, or its URL")
      .argument("[args...]", "the command's arguments")
      .option("-t, --transport <transport>", "stdio, http or sse (default: http for a URL)")
      .option("-e, --env <KEY=VALUE>", "environment variable of a stdio server", collect)
      .option("-H, --header <Name: value>", "request header of a server at a URL", collect)
      .option("-s, --scope <scope>", scope)
      .showHelpAfterError(style.dim(
        "(a command's own flags go after --: patchbay mcp add <name> -- <command> [args...])",
      )),
  ).action(act(setExit, async (all: McpAddOptions, name: string, at: string, args: string[]) => {
    const { mcpAdd } = await import("./commands/mcp.ts");
    const rootFlags = new Set(program.options.flatMap((o) => [o.short, o.long]))
      .difference(new Set([undefined])) as Set<string>;
    // commander keeps the words it parsed as `rawArgs` (not in its types).
    const words = (program as unknown as { rawArgs?: string[] }).rawArgs ?? [];
    return mcpAdd(name, at, args, { ...all, typed: { words, rootFlags } });
  }));
  secretFlags(
    mcp.command("add-json")
      .description("add a server from its JSON entry (any client's form)")
      .argument("<name>", "server name")
      .argument("<json>", "the entry, one quoted word")
      .option("-s, --scope <scope>", scope),
  ).action(act(setExit, async (all: McpEditOptions, name: string, json: string) => {
    const { mcpAddJson } = await import("./commands/mcp.ts");
    return mcpAddJson(name, json, all);
  }));
  secretFlags(
    mcp.command("import")
      .description("import the servers of claude-desktop, claude-code, cursor, vscode, gemini")
      .argument("[source]", "a client's name, or the path of its JSON file")
      .option("--dry-run", "show what would be added; write nothing")
      .option("-s, --scope <scope>", scope),
  ).action(act(setExit, async (all: McpImportOptions, source: string | undefined) => {
    const { mcpImport } = await import("./commands/mcp_import.ts");
    return mcpImport(source, all);
  }));
  mcp.command("list")
    .description("list the configured servers (--check: connect them and say how each went)")
    .option("--json", "print JSON")
    .option("--check", "connect each server and show its state and diagnosis")
    .action(act(setExit, async (all: McpListOptions) => {
      const { mcpList } = await import("./commands/mcp_list.ts");
      return mcpList(all);
    }));
  mcp.command("get")
    .description("show one server's entry (--check: connect it)")
    .argument("<server>", "server name")
    .option("--json", "print JSON")
    .option("--check", "connect the server and show its state and diagnosis")
    .action(act(setExit, async (all: McpListOptions, name: string) => {
      const { mcpGet } = await import("./commands/mcp_list.ts");
      return mcpGet(name, all);
    }));
  mcp.command("remove")
    .alias("rm")
    .description("remove a server's entry")
    .argument("<server>", "server name")
    .option("-s, --scope <scope>", scope)
    .action(act(setExit, async (all: McpEditOptions, name: string) => {
      const { mcpRemove } = await import("./commands/mcp.ts");
      return mcpRemove(name, all);
    }));
  for (const enabled of [true, false]) {
    mcp.command(enabled ? "enable" : "disable")
      .description(
        enabled ? "start a disabled server again" : "keep a server's entry but do not start it",
      )
      .argument("<server>", "server name")
      .option("-s, --scope <scope>", scope)
      .action(act(setExit, async (all: McpEditOptions, name: string) => {
        const { mcpSetEnabled } = await import("./commands/mcp.ts");
        return mcpSetEnabled(name, enabled, all);
      }));
  }
  program.command("completions")
    .description("print a shell completion script for bash, zsh or fish")
    .addArgument(new cli.Argument("[shell]", "bash, zsh or fish").choices(["bash", "zsh", "fish"]))
    .option("--servers", "print the configured server names instead (what the scripts ask)")
    .action(act(setExit, async (all: CompletionsOptions, shell: string | undefined) => {
      const { completions } = await import("./commands/completions.ts");
      return completions(shell, program, all);
    }));

  const approvals = program.command("approvals")
    .description("tool approvals remembered for this folder ([p]roject at the question)");
  approvals.command("list", { isDefault: true })
    .description("list the approvals remembered for this folder")
    .option("--json", jsonOption)
    .option("-a, --all", "list those of every folder")
    .action(act(setExit, async (all: ApprovalsOptions) => {
      const { approvalsList } = await import("./commands/approvals.ts");
      return approvalsList(all);
    }));
  approvals.command("revoke")
    .description("forget remembered approvals: an id, a server, or server/tool")
    .argument("[what]", "id, server or server/tool")
    .option("--json", jsonOption)
    .option("-a, --all", "forget every approval remembered for this folder")
    .action(act(setExit, async (all: ApprovalsOptions, what: string | undefined) => {
      const { approvalsRevoke } = await import("./commands/approvals.ts");
      return approvalsRevoke(what, all);
    }));

  const trace = program.command("trace").description("read a wire trace (docs/trace.md)");
  trace.command("show")
    .description("the trace as a readable timeline: time, server, direction, method, latency")
    .argument("<file>", "the trace file (--trace, PATCHBAY_TRACE or Trace.file)")
    .option("--server <name>", "only this server")
    .option("--method <method>", "only this method (tools/call, initialize, …)")
    .option("--errors", "only error responses, failed exchanges and failures")
    .option("-n, --last <n>", "only the last n lines shown")
    .action(act(setExit, async (all: TraceShowOptions, file: string) => {
      const { traceShow } = await import("./commands/trace.ts");
      return traceShow(file, all);
    }));
  trace.command("stats")
    .description("per server and method: count, p50/p95 latency, errors, bytes")
    .argument("<file>", "the trace file")
    .option("--json", "print JSON")
    .action(act(setExit, async (all: TraceStatsOptions, file: string) => {
      const { traceStats } = await import("./commands/trace.ts");
      return traceStats(file, all);
    }));

  return program;
}

/** The words `command` was given beyond the arguments it declares. */
function excessArguments(command: Command): string[] {
  const declared = command.registeredArguments;
  if (declared.at(-1)?.variadic) return [];
  return command.args.slice(declared.length);
}

function tooManyArguments(command: Command, excess: string[]): UsageError {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  const usage = `${names.join(" ")} ${command.usage()}`;
  const words = excess.map((word) => `'${word}'`).join(", ");
  const json = command.registeredArguments.some((a) => a.name() === "json-args")
    ? `; JSON arguments are one word: quote them, e.g. '{"message": "hi"}'`
    : "";
  return new UsageError(
    `unexpected argument${excess.length > 1 ? "s" : ""} ${words} for '${names.join(" ")}'`,
    `usage: ${usage}${json}`,
  );
}

function unknownCommand(word: string, program: Command, name = "patchbay"): UsageError {
  const names = program.commands.map((c) => c.name());
  const suggestion = didYouMean(word, names);
  return new UsageError(
    `unknown command '${word}'${suggestion ? ` (did you mean '${suggestion}'?)` : ""}`,
    `commands: ${names.join(", ")}; run \`${name} --help\` for usage`,
  );
}

/**
 * The module each command word runs, loaded alongside commander's rather than after the
 * parse: the commands that start servers spawn them once it is loaded (`_connect.ts`), and
 * the others answer as soon as it is. Literal specifiers, so that `deno compile` and the
 * permission plan see every module.
 */
const loadConnect = () => import("./commands/_connect.ts");
const COMMAND_MODULES: Readonly<Record<string, () => Promise<unknown>>> = {
  tools: loadConnect,
  prompts: loadConnect,
  resources: loadConnect,
  call: loadConnect,
  read: loadConnect,
  prompt: loadConnect,
  run: loadConnect,
  config: () => import("./commands/config_check.ts"),
  sessions: () => import("./commands/sessions.ts"),
  permissions: () => import("./commands/permissions.ts"),
  doctor: () => import("./commands/doctor.ts"),
  auth: () => import("./commands/auth.ts"),
  mcp: () => import("./commands/mcp.ts"),
  approvals: () => import("./commands/approvals.ts"),
  completions: () => import("./commands/completions.ts"),
  trace: () => import("./commands/trace.ts"),
};

/**
 * What each command that touches no server runs, whether its line was read without commander
 * (`plainCommand`) or by commander's action: one call for both.
 */
const QUICK_ACTIONS: Readonly<
  Record<QuickCommand, (options: object) => Promise<number | void>>
> = {
  "config check": async (options) =>
    (await import("./commands/config_check.ts")).configCheck(
      options as GlobalOptions & { json?: boolean },
    ),
  "sessions list": async (options) =>
    (await import("./commands/sessions.ts")).sessionsList(options as SessionsOptions),
  "permissions": async (options) =>
    (await import("./commands/permissions.ts")).permissions(options as PermissionsOptions),
};

/** Runs patchbay with `args` and returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  // The commonest call that needs nothing else answers before the parser is loaded.
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
    console.log(`${NAME} ${VERSION}`);
    return EXIT.ok;
  }
  // So does the interactive session with plain flags: it stays running, and the parser
  // would stay in its memory.
  const chatFlags = plainChatFlags(args);
  if (chatFlags) {
    return await runCommand(async () => {
      const { chat } = await import("./commands/chat.ts");
      return chat(chatFlags);
    });
  }
  // So do the commands that touch no server, in their plain forms.
  const quick = plainCommand(args);
  if (quick) {
    const { json } = quick.options as { json?: boolean };
    return await runCommand(() => QUICK_ACTIONS[quick.command](quick.options), { json });
  }
  // The command's module graph (zod, the configuration; the servers' spawn) loads now,
  // alongside commander's, rather than after the parse.
  const word = args.find((word) => Object.hasOwn(COMMAND_MODULES, word));
  if (word) {
    COMMAND_MODULES[word]().catch(() => {
      // The command's own import reports the failure, if it is one.
    });
  }
  let exitCode: number = EXIT.ok;
  const program = await buildProgram((code) => exitCode = code);
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (error) {
    if (!(error instanceof cli.CommanderError)) throw error;
    // Help and version are successful exits; everything else commander rejects is usage.
    const ok = ["commander.helpDisplayed", "commander.version", "commander.help"];
    return ok.includes(error.code) ? EXIT.ok : EXIT.usage;
  }
  return exitCode;
}

/**
 * `deno task` runs tasks in the folder of deno.json; INIT_CWD is where the user ran it.
 * Working from there lets `deno task --config <patchbay>/deno.json start` pick up the
 * user's own servers_config.json and .env, as npm scripts do (lib/task_folder.ts).
 */
function adoptTaskWorkingDirectory(): void {
  // Run from a URL (an install from a web server), there is no checkout to start in.
  if (!import.meta.url.startsWith("file:")) return;
  const invokedFrom = taskWorkingDirectory(fileURLToPath(new URL(".", import.meta.url)));
  if (invokedFrom && invokedFrom !== Deno.cwd()) Deno.chdir(invokedFrom);
}

if (import.meta.main) {
  installLastResort();
  adoptTaskWorkingDirectory();
  let code = await main(Deno.args).catch(reportEscaped);
  sessionLogger()?.close();
  // A failure that a grant the plan lacks explains: the launcher may run the command again.
  if (code !== EXIT.ok) {
    const { refusedGrants } = await import("./commands/_boundary.ts");
    code = await (await import("./lib/permissions/restart.ts")).restartCode(code, refusedGrants);
  }
  Deno.exit(code);
}
