/**
 * patchbay: an interactive client for the Model Context Protocol.
 *
 * The entry point and command tree. Each command's work lives in `commands/`; this file
 * only wires flags to actions and hands every action to the command boundary.
 *
 * @module
 */

import { Command, CommanderError } from "commander";
import { runCommand } from "./commands/_boundary.ts";
import {
  authList,
  type AuthListOptions,
  authLogin,
  type AuthLoginOptions,
  authLogout,
  type AuthLogoutOptions,
} from "./commands/auth.ts";
import { chat, type ChatOptions } from "./commands/chat.ts";
import { call } from "./commands/call.ts";
import type { ScriptOptions } from "./commands/_connect.ts";
import { configCheck } from "./commands/config_check.ts";
import { doctor, type DoctorCommandOptions } from "./commands/doctor.ts";
import { permissions, type PermissionsOptions } from "./commands/permissions.ts";
import { prompt } from "./commands/prompt.ts";
import { prompts } from "./commands/prompts.ts";
import { read, type ReadOptions } from "./commands/read.ts";
import { resources } from "./commands/resources.ts";
import { run, type RunOptions } from "./commands/run.ts";
import { tools } from "./commands/tools.ts";
import {
  DEFAULT_SESSION_LIMIT,
  parseLimit,
  sessionsDelete,
  sessionsList,
  type SessionsOptions,
  sessionsShow,
} from "./commands/sessions.ts";
import { EXIT, UsageError } from "./lib/errors.ts";
import { type GlobalOptions, sessionLogger } from "./lib/startup.ts";
import { stderrStyle } from "./lib/style.ts";
import { didYouMean } from "./lib/text.ts";
import { NAME, VERSION } from "./lib/version.ts";

/** Builds the command tree; `setExit` receives each action's exit code. */
export function buildProgram(setExit: (code: number) => void): Command {
  const style = stderrStyle();
  const program = new Command(NAME)
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
    .allowExcessArguments(true)
    .showHelpAfterError(style.dim("(run patchbay --help for usage)"))
    .configureOutput({
      outputError: (text, write) => write(style.red(text)),
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
    throw new CommanderError(EXIT.usage, "patchbay.excessArguments", "");
  });

  program.action(async (_options, command: Command) => {
    const words = command.args;
    setExit(
      await runCommand(() => {
        if (words.length > 0) throw unknownCommand(words[0], program);
        return chat(program.opts<ChatOptions>());
      }),
    );
  });

  const config = program.command("config").description("work with servers_config.json");
  config.command("check")
    .description("validate the configuration and print a summary (exit code 0 valid, 1 not)")
    .option("--json", "print the normalized configuration as JSON (secrets redacted)")
    .action(async (options: { json?: boolean }, command: Command) => {
      const all = { ...command.optsWithGlobals<GlobalOptions>(), ...options };
      setExit(await runCommand(() => configCheck(all), { json: options.json }));
    });

  program.command("doctor")
    .description("check the configuration, key, provider, servers, memory and permissions")
    .option("--json", "one JSON object per check (name, status, finding, remedy, details)")
    .option("--offline", "skip the checks that need the internet (provider request, DNS)")
    .action(async (options: DoctorCommandOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<DoctorCommandOptions>(), ...options };
      setExit(await runCommand(() => doctor(all), { json: options.json }));
    });

  program.command("permissions")
    .description("print the narrowest Deno permission flags for the configuration")
    .option("--json", "print the flags, each grant and its reason as JSON")
    .option(
      "--discover",
      "first find the authorization server of OAuth servers without a login (no browser)",
    )
    .action(async (options: PermissionsOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<PermissionsOptions>(), ...options };
      setExit(await runCommand(() => permissions(all), { json: options.json }));
    });

  program.command("run")
    .description("ask once and exit: the answer on stdout, status on stderr (prompt or stdin)")
    .argument("[prompt...]", "what to ask; text piped on stdin is added to it")
    .option("--json", "newline-delimited JSON events on stdout")
    .action(async (words: string[], options: RunOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<RunOptions>(), ...options };
      setExit(await runCommand(() => run(words, all), { json: options.json }));
    });

  const json = "print JSON instead of text";
  program.command("tools")
    .description("list the tools of the configured servers (exit 1 if a server failed)")
    .argument("[server]", "only this server")
    .option("--json", json)
    .action(async (server: string | undefined, options: ScriptOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<ScriptOptions>(), ...options };
      setExit(await runCommand(() => tools(server, all), { json: options.json }));
    });
  program.command("prompts")
    .description("list the prompts of the configured servers")
    .option("--json", json)
    .action(async (options: ScriptOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<ScriptOptions>(), ...options };
      setExit(await runCommand(() => prompts(all), { json: options.json }));
    });
  program.command("resources")
    .description("list the resources and resource templates of the configured servers")
    .option("--json", json)
    .action(async (options: ScriptOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<ScriptOptions>(), ...options };
      setExit(await runCommand(() => resources(all), { json: options.json }));
    });
  program.command("call")
    .description("call a tool without the model and print its result")
    .argument("<tool>", "server.tool (or a tool name that only one server has)")
    .argument("[json-args]", "arguments as a JSON object; - reads them from stdin")
    .option("--json", "print the whole result as JSON")
    .action(
      async (spec: string, args: string | undefined, options: ScriptOptions, command: Command) => {
        const all = { ...command.optsWithGlobals<ScriptOptions>(), ...options };
        setExit(await runCommand(() => call(spec, args, all), { json: options.json }));
      },
    );
  program.command("read")
    .description("print a resource exactly as the server sends it")
    .argument("<uri>", "resource URI")
    .option("--server <name>", "the server to read from (default: the one that lists it)")
    .option("--json", "print the whole result as JSON")
    .action(async (uri: string, options: ReadOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<ReadOptions>(), ...options };
      setExit(await runCommand(() => read(uri, all), { json: options.json }));
    });
  program.command("prompt")
    .description("fill in a server's prompt and print its messages")
    .argument("<name>", "prompt name (server.name when several servers have it)")
    .argument("[args...]", "arguments as name=value")
    .option("--json", "print the whole result as JSON")
    .action(async (name: string, words: string[], options: ScriptOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<ScriptOptions>(), ...options };
      setExit(await runCommand(() => prompt(name, words, all), { json: options.json }));
    });

  const auth = program.command("auth").description("OAuth logins to MCP servers");
  auth.command("list")
    .description("show OAuth servers and stored logins: issuer, expiry, scopes (never tokens)")
    .option("--json", "print JSON")
    .action(async (options: AuthListOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<GlobalOptions>(), ...options };
      setExit(await runCommand(() => authList(all), { json: options.json }));
    });
  auth.command("login")
    .description("log in to an OAuth server now, in the browser")
    .argument("<server>", "server name in servers_config.json")
    .option("--force", "log in again even if a valid login is stored")
    .action(async (server: string, options: AuthLoginOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<GlobalOptions>(), ...options };
      setExit(await runCommand(() => authLogin(server, all)));
    });
  auth.command("logout")
    .description("revoke (where the server offers it) and delete a stored login")
    .argument("[server]", "server name")
    .option("--all", "log out of every stored login")
    .action(async (server: string | undefined, options: AuthLogoutOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<GlobalOptions>(), ...options };
      setExit(await runCommand(() => authLogout(server, all)));
    });

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
      parseLimit,
    )
    .option("-a, --all", "list every stored conversation")
    .action(async (options: SessionsOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<SessionsOptions>(), ...options };
      const words = command.args;
      setExit(
        await runCommand(() => {
          // `sessions` runs `list` by default, which would otherwise swallow a typo.
          if (words.length > 0) throw unknownCommand(words[0], sessions, "patchbay sessions");
          return sessionsList(all);
        }, { json: options.json }),
      );
    });
  sessions.command("show <id>")
    .description("print a stored conversation (an id prefix is enough)")
    .option("--json", jsonOption)
    .action(async (id: string, options: SessionsOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<SessionsOptions>(), ...options };
      setExit(await runCommand(() => sessionsShow(id, all), { json: options.json }));
    });
  sessions.command("delete <id>")
    .alias("rm")
    .description("delete a stored conversation (an id prefix is enough)")
    .option("--json", jsonOption)
    .action(async (id: string, options: SessionsOptions, command: Command) => {
      const all = { ...command.optsWithGlobals<SessionsOptions>(), ...options };
      setExit(await runCommand(() => sessionsDelete(id, all), { json: options.json }));
    });

  ownsWords.add(listSessions);

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

/** Runs patchbay with `args` and returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram((code) => exitCode = code);
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help and version are successful exits; everything else commander rejects is usage.
    const ok = ["commander.helpDisplayed", "commander.version", "commander.help"];
    return ok.includes(error.code) ? EXIT.ok : EXIT.usage;
  }
  return exitCode;
}

/**
 * `deno task` runs tasks in the folder of deno.json; INIT_CWD is where the user ran it.
 * Working from there lets `deno task --config <patchbay>/deno.json start` pick up the
 * user's own servers_config.json and .env, as npm scripts do.
 */
function adoptTaskWorkingDirectory(): void {
  const invokedFrom = taskVariable("INIT_CWD");
  const viaDenoTask = taskVariable("npm_config_user_agent")?.startsWith("deno/");
  if (invokedFrom && viaDenoTask && invokedFrom !== Deno.cwd()) Deno.chdir(invokedFrom);
}

/** A variable `deno task` sets; unreadable under `--allow-env=<list>` outside a task. */
function taskVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

if (import.meta.main) {
  adoptTaskWorkingDirectory();
  const code = await main(Deno.args);
  sessionLogger()?.close();
  Deno.exit(code);
}
