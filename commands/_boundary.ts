/**
 * The one place typed errors become what a person reads, and exit codes.
 *
 * Every command's action runs inside {@linkcode runCommand}; nothing below the command
 * layer prints an error or calls `Deno.exit`.
 *
 * @module
 */

import {
  CancelledError,
  DenoPermissionError,
  EXIT,
  messageOf,
  NetworkError,
  PatchbayError,
  PermissionDeniedError,
  remedyFor,
  STDERR_DETAIL,
  type Surface,
  TimeoutError,
} from "../lib/errors.ts";
import { findDenoDenial } from "../lib/deno_permission/denial.ts";
import { RefusedGrants } from "../lib/deno_permission/refused_grant.ts";
import { classify, netLabel } from "../lib/errors/failure.ts";

export { remedyFor, type Surface };
import type { Logger } from "../lib/log/log.ts";
import { sessionLogger } from "../lib/log/session_log.ts";
import { Redactor } from "../lib/redact/redact.ts";
import { stripTerminalEscapes, terminalColumns } from "../lib/terminal/terminal.ts";
import { fitLines } from "../lib/text/text.ts";
import { createStyle, stderrStyle, type Style } from "../lib/terminal/style.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/**
 * The grants that errors shown by this process carried (an OAuth server's moved
 * authorization server): the person was told a restart adds them, so the launcher is asked
 * for it when the command fails (main.ts) or at the interactive client's next `/refresh`.
 */
export const refusedGrants: RefusedGrants = new RefusedGrants();

/** Anything thrown, as a {@linkcode PatchbayError} (unknown errors become internal ones). */
export function toPatchbayError(error: unknown): PatchbayError {
  // Every error shown, logged or written as JSON passes here: keep the grant it carries.
  refusedGrants.note(error);
  if (error instanceof PatchbayError) return error;
  // Whatever reached the boundary without a typed error is still named by the one
  // classifier, so a network or file failure never reads as a bug.
  const failure = classify(error);
  const message = messageOf(error);
  switch (failure.kind) {
    case "deno_permission":
      return new DenoPermissionError(
        failure.flag,
        findDenoDenial(error)!.message.split(",")[0],
        error,
      );
    case "cancelled":
      return new CancelledError();
    case "network": {
      const label = netLabel(failure.problem);
      return label === "Connection timeout"
        ? new TimeoutError(label, message)
        : new NetworkError(label, message, undefined, error);
    }
    case "file_permission":
      return new PermissionDeniedError("a file could not be accessed", message);
  }
  return new PatchbayError("internal", `Internal error: ${message}`, {
    reason: "patchbay hit a condition it does not handle; this is a bug",
    remedy: USAGE_STEPS.internal,
    cause: error,
  });
}

/** Options of {@linkcode formatError}. */
export interface FormatOptions {
  /** @default no colour */
  style?: Style;
  /** Hides secrets that reached an error message. */
  redactor?: Redactor;
  /** Where it is shown, which decides the commands a remedy names. @default "repl" */
  surface?: Surface;
}

/** The error as the lines a person reads: message, details, cause, remedy. */
export function formatError(error: unknown, options: FormatOptions = {}): string {
  const e = toPatchbayError(error);
  const style = options.style ?? createStyle(false);
  const redactor = options.redactor ?? new Redactor();
  // Messages can quote what a server said: strip escapes before adding our own colours.
  const clean = (text: string) => redactor.redact(stripTerminalEscapes(text));
  const lines = [`${style.red(style.bold("error:"))} ${style.bold(clean(e.message))}`];
  for (const detail of e.details) lines.push(`  ${clean(detail)}`);
  lines.push(`  ${style.yellow("cause:")}  ${clean(e.reason)}`);
  lines.push(
    `  ${style.green("remedy:")} ${clean(remedyFor(e, options.surface ?? "repl"))}`,
  );
  return lines.join("\n");
}

/**
 * The error as one JSON object, for `--json` output (of scripting commands: remedies
 * name their flags and commands). @default surface "script"
 */
export function errorJson(error: unknown, surface: Surface = "script"): Record<string, unknown> {
  const e = toPatchbayError(error);
  // A server's last words (its stderr lines) get a field of their own, as promised by the
  // cause that points at them; the other details stay together.
  const stderr = e.details.filter((line) => line.startsWith(STDERR_DETAIL))
    .map((line) => line.slice(STDERR_DETAIL.length));
  const details = e.details.filter((line) => !line.startsWith(STDERR_DETAIL));
  return {
    code: e.code,
    message: e.message,
    cause: e.reason,
    remedy: remedyFor(e, surface),
    ...(details.length > 0 ? { details } : {}),
    ...(stderr.length > 0 ? { stderr } : {}),
  };
}

/** Where {@linkcode runCommand} reports. */
export interface BoundaryOptions {
  /** The log, once start-up has opened it. @default the process's log (sessionLogger) */
  logger?: () => Logger | undefined;
  /** Print errors as JSON on stdout instead of text on stderr. @default false */
  json?: boolean;
}

/**
 * The formatter the interactive session shows errors with: each error is logged as it is
 * shown (docs/troubleshooting.md: errors go to the log file too).
 */
export function errorPresenter(
  logger: Logger,
  surface: Surface = "repl",
): (error: unknown) => string {
  const style = stderrStyle();
  return (error) => {
    logError(logger, error);
    return formatError(error, { style, redactor: logger.redactor, surface });
  };
}

/** Records an error in the log (internal errors with their stack, to be reported). */
export function logError(logger: Logger | undefined, error: unknown): void {
  const e = toPatchbayError(error);
  logger?.write("error", "cli", e.message, {
    code: e.code,
    reason: e.reason,
    stack: e.code === "internal" && e.cause instanceof Error ? e.cause.stack : undefined,
  });
}

/**
 * Runs a command action: its return value is the exit code; a thrown error is printed
 * (text on stderr, or JSON on stdout with `json`) and logged, and becomes its exit code.
 */
export async function runCommand(
  action: () => Promise<number | void>,
  options: BoundaryOptions = {},
): Promise<number> {
  try {
    return (await action()) ?? EXIT.ok;
  } catch (error) {
    // Whoever read our output stopped (`patchbay run … | head -1`): nothing to tell them.
    if (error instanceof Deno.errors.BrokenPipe) return EXIT.brokenPipe;
    const e = toPatchbayError(error);
    const logger = (options.logger ?? sessionLogger)();
    logError(logger, e);
    try {
      if (options.json) {
        const text = JSON.stringify({ type: "error", error: errorJson(e) });
        console.log(logger ? logger.redactor.redact(text) : text);
      } else {
        // Commands end here, outside the interactive client: remedies name no slash command.
        const text = formatError(e, {
          style: stderrStyle(),
          redactor: logger?.redactor,
          surface: "script",
        });
        console.error(fitLines(text, terminalColumns(Deno.stderr)));
      }
    } catch {
      // Nowhere left to show it (the terminal closed, the reader went away): it is logged,
      // and the exit code still says what happened.
    }
    return e.exitCode ?? EXIT.failure;
  }
}
