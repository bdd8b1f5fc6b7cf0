/**
 * patchbay's command tree and its run: commander's tree built from the declarations
 * (`commands/_declarations.ts`), every action handed to the command boundary. The entry
 * point (`main.ts`) loads this module once it has started what must start first.
 *
 * @module
 */

import type { Command } from "commander";
import { runCommand } from "./_boundary.ts";
import { installLastResort, reportEscaped } from "./_last_resort.ts";
import { plainChatFlags, plainCommand } from "./_chat_flags.ts";
import { type CommandDeclaration, declarationAt, ROOT } from "./_declarations.ts";
import { EXIT, UsageError } from "../lib/errors.ts";
import { sessionLogger } from "../lib/log/session_log.ts";
import { stderrStyle, stdoutStyle } from "../lib/terminal/style.ts";
import { didYouMean } from "../lib/text/text.ts";
import { HELP_DESCRIPTION, HELP_USAGE, helpRequest } from "./_help_words.ts";
import { commandLineError, failedAt } from "./_usage_errors.ts";
import { NAME, VERSION } from "../lib/version.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

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

/** Builds the command tree from the declarations; `setExit` receives each action's exit code. */
export async function buildProgram(setExit: (code: number) => void): Promise<Command> {
  cli ??= await import("commander");
  const program = new cli.Command(NAME)
    .description(ROOT.description)
    .version(`${NAME} ${VERSION}`, "-v, --version", "print the version and exit")
    .helpOption("-h, --help", "show this help");
  declareOptions(program, ROOT);
  program
    .allowExcessArguments(true)
    .helpCommand(HELP_USAGE, HELP_DESCRIPTION)
    .configureOutput({
      // commander's usage errors are not printed by commander: they reach the boundary as
      // UsageErrors (main), in the form of every other error.
      outputError: () => {},
      // patchbay's own colour decision: commander's would read variables (FORCE_COLOR,
      // CLICOLOR_FORCE) the permission plan does not grant, and die on the refusal.
      getOutHasColors: () => stdoutStyle().enabled,
      getErrHasColors: () => stderrStyle().enabled,
    })
    .exitOverride(failedAt(ROOT));
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
        return await ROOT.run!(program.opts(), [], program);
      }),
    );
  });

  const add = (parent: Command, declaration: CommandDeclaration, path: readonly string[]) => {
    const command = parent.command(
      declaration.name,
      declaration.default ? { isDefault: true } : undefined,
    );
    for (const alias of declaration.aliases ?? []) command.alias(alias);
    command.description(declaration.description);
    for (const { name, description, choices } of declaration.arguments ?? []) {
      const argument = new cli.Argument(name, description);
      command.addArgument(choices ? argument.choices(choices) : argument);
    }
    if (declaration.wordsAreCommands) command.allowExcessArguments(true);
    declareOptions(command, declaration);
    if (declaration.helpAfter) command.addHelpText("after", declaration.helpAfter);
    command.exitOverride(failedAt(declaration, path));
    if (declaration.commands) command.helpCommand(HELP_USAGE, HELP_DESCRIPTION);
    const run = declaration.run;
    if (run) {
      command.action(act(setExit, async (all: object, ...args: unknown[]) => {
        // A default command would otherwise swallow a mistyped subcommand of its group.
        if (declaration.wordsAreCommands && command.args.length > 0) {
          throw unknownCommand(command.args[0], parent, [NAME, ...path.slice(0, -1)].join(" "));
        }
        return await run(all, args, program);
      }));
      if (declaration.wordsAreCommands) ownsWords.add(command);
    }
    for (const sub of declaration.commands ?? []) add(command, sub, [...path, sub.name]);
  };
  for (const declaration of ROOT.commands ?? []) add(program, declaration, [declaration.name]);
  return program;
}

/** Adds `declaration`'s options to `command`, each with its parser. */
function declareOptions(command: Command, declaration: CommandDeclaration): void {
  for (const { flags, description, parse } of declaration.options ?? []) {
    if (!parse) command.option(flags, description);
    else {
      command.option(
        flags,
        description,
        (value: string, previous: unknown) =>
          parse(value, previous, (message) => new cli.InvalidArgumentError(message)),
      );
    }
  }
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
  const jsonArgs = command.registeredArguments.some((a) => a.name() === "json-args");
  return new UsageError(
    `unexpected argument${excess.length > 1 ? "s" : ""} ${words} for '${names.join(" ")}'`,
    USAGE_STEPS.usage(usage, jsonArgs),
  );
}

function unknownCommand(word: string, program: Command, name = "patchbay"): UsageError {
  const names = program.commands.map((c) => c.name());
  const suggestion = didYouMean(word, names);
  return new UsageError(
    `unknown command '${word}'${suggestion ? ` (did you mean '${suggestion}'?)` : ""}`,
    USAGE_STEPS.commands(names.join(", "), name),
  );
}

/**
 * The module each command word runs (its declaration's `prefetch`), loaded alongside
 * commander's rather than after the parse: the commands that start servers spawn them once
 * it is loaded (`_connect.ts`), and the others answer as soon as it is.
 */
const COMMAND_MODULES: ReadonlyMap<string, () => Promise<unknown>> = new Map(
  (ROOT.commands ?? []).flatMap((command) =>
    command.prefetch ? [[command.name, command.prefetch] as const] : []
  ),
);

/** Runs patchbay with `args` and returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  // The commonest call that needs nothing else answers before the parser is loaded.
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
    console.log(`${NAME} ${VERSION}`);
    return EXIT.ok;
  }
  // `help [command...]` is `<command...> --help`; a word that names no command is refused.
  try {
    args = helpRequest(args) ?? args;
  } catch (error) {
    return await runCommand(() => Promise.reject(error));
  }
  // So does the interactive session with plain flags: it stays running, and the parser
  // would stay in its memory.
  const chatFlags = plainChatFlags(args);
  if (chatFlags) {
    return await runCommand(() => ROOT.run!(chatFlags, []));
  }
  // So do the commands that touch no server, in their plain forms.
  const quick = plainCommand(args);
  if (quick) {
    const { json } = quick.options as { json?: boolean };
    const run = declarationAt(quick.command.split(" "))!.run!;
    return await runCommand(() => run(quick.options, []), { json });
  }
  // The command's module graph (zod, the configuration; the servers' spawn) loads now,
  // alongside commander's, rather than after the parse.
  const word = args.find((word) => COMMAND_MODULES.has(word));
  if (word) {
    COMMAND_MODULES.get(word)!().catch(() => {
      // The command's own import reports the failure, if it is one.
    });
  }
  let exitCode: number = EXIT.ok;
  const program = await buildProgram((code) => exitCode = code);
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (error) {
    if (!(error instanceof cli.CommanderError)) throw error;
    // Help and version are successful exits; everything else commander rejects is usage,
    // shown by the boundary as every error is (JSON with --json).
    const ok = ["commander.helpDisplayed", "commander.version", "commander.help"];
    if (ok.includes(error.code)) return EXIT.ok;
    if (error.code === "patchbay.excessArguments") return EXIT.usage; // already shown
    const end = args.indexOf("--");
    const json = (end < 0 ? args : args.slice(0, end)).includes("--json");
    return await runCommand(() => Promise.reject(commandLineError(error)), { json });
  }
  return exitCode;
}

/** What the entry point did before it loaded this module. */
export interface EntryStart {
  /** Moving to the folder the person ran the task from failed with this. */
  failure?: unknown;
  /** How many server processes the early start started (`lib/early_start.ts`). */
  started?: number;
}

/**
 * Runs patchbay with `args` as the entry point does, and returns the process exit code:
 * errors nothing caught are shown as the boundary shows every error; servers started early
 * that no command took are ended; a failure that a grant the plan lacks explains asks the
 * launcher to run the command again.
 */
export async function run(args: string[], entry: EntryStart = {}): Promise<number> {
  installLastResort();
  let code = entry.failure !== undefined
    ? await reportEscaped(entry.failure)
    : await main(args).catch(reportEscaped);
  sessionLogger()?.close();
  // The command failed before it connected them (an invalid configuration, a usage error).
  if (entry.started) await (await import("../lib/transports/spawn.ts")).endUnclaimed();
  if (code !== EXIT.ok) {
    const { refusedGrants } = await import("./_boundary.ts");
    code = await (await import("../lib/permissions/restart.ts")).restartCode(code, refusedGrants);
  }
  return code;
}
