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
import { chat } from "./commands/chat.ts";
import { configCheck } from "./commands/config_check.ts";
import { EXIT, UsageError } from "./lib/errors.ts";
import type { GlobalOptions } from "./lib/startup.ts";
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
    .allowExcessArguments(true)
    .showHelpAfterError(style.dim("(run patchbay --help for usage)"))
    .configureOutput({
      outputError: (text, write) => write(style.red(text)),
    })
    .exitOverride();

  program.action(async (_options, command: Command) => {
    const words = command.args;
    setExit(
      await runCommand(() => {
        if (words.length > 0) throw unknownCommand(words[0], program);
        return chat(program.opts<GlobalOptions>());
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

  return program;
}

function unknownCommand(word: string, program: Command): UsageError {
  const names = program.commands.map((c) => c.name());
  const suggestion = didYouMean(word, names);
  return new UsageError(
    `unknown command '${word}'${suggestion ? ` (did you mean '${suggestion}'?)` : ""}`,
    `commands: ${names.join(", ")}; run \`patchbay --help\` for usage`,
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
  const invokedFrom = Deno.env.get("INIT_CWD");
  const viaDenoTask = Deno.env.get("npm_config_user_agent")?.startsWith("deno/");
  if (invokedFrom && viaDenoTask && invokedFrom !== Deno.cwd()) Deno.chdir(invokedFrom);
}

if (import.meta.main) {
  adoptTaskWorkingDirectory();
  Deno.exit(await main(Deno.args));
}
