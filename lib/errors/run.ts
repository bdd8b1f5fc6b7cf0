/**
 * The errors of the run itself: file and Deno permissions, timeouts and the network, the
 * command line, cancelling, and ending by a signal.
 *
 * @module
 */

import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { EXIT } from "../exit_codes.ts";
import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { PatchbayError } from "./base.ts";
import { USAGE_STEPS } from "./usage_steps.ts";

/** The operating system refused access to a file. */
export class PermissionDeniedError extends PatchbayError {
  constructor(what: string, reason: string, remedy: RemedyText = ROWS.file_permission.remedy) {
    super("permission_denied", fill(ROWS.file_permission.messages[0], { what }), {
      reason,
      remedy,
    });
  }
}

/** Deno's sandbox refused an operation: names the flag that would allow it. */
export class DenoPermissionError extends PatchbayError {
  readonly flag: string;
  constructor(flag: string, what: string, cause?: unknown) {
    super("deno_permission", `Permission denied: ${what}`, {
      reason: `patchbay runs under explicit Deno permissions and ${flag} was not granted`,
      remedy: denoPermissionRemedy(flag),
      cause,
    });
    this.flag = flag;
  }
}

/** `Connection timeout` (nothing established) or `Request timeout` (no answer in time). */
export class TimeoutError extends PatchbayError {
  constructor(
    kind: "Connection timeout" | "Request timeout",
    reason: string,
    remedy: RemedyText = ROWS.timeout.remedy,
  ) {
    super("timeout", kind, { reason, remedy });
  }
}

/** `Connection refused` / `Network unreachable` on the way to a provider or server. */
export class NetworkError extends PatchbayError {
  constructor(
    kind: "Connection refused" | "Network unreachable",
    reason: string,
    remedy: RemedyText = ROWS.network.remedy,
    cause?: unknown,
  ) {
    super("network", kind, { reason, remedy, cause });
  }
}

/** The command line was wrong. */
export class UsageError extends PatchbayError {
  constructor(message: string, remedy: string = USAGE_STEPS.help) {
    super("usage", message, {
      reason: "the command line could not be understood",
      remedy,
      exitCode: EXIT.usage,
    });
  }
}

/** The user cancelled (Ctrl+C / abort). */
export class CancelledError extends PatchbayError {
  constructor(what = "the operation") {
    super("cancelled", `Cancelled: ${what}`, {
      reason: "interrupted by the user",
      remedy: USAGE_STEPS.cancelled,
      exitCode: EXIT.interrupted,
    });
  }
}

/** A command ended by SIGTERM, SIGHUP or SIGQUIT, after its servers were ended. */
export class EndedBySignalError extends PatchbayError {
  constructor(signal: string, exitCode: number) {
    super("cancelled", `Ended by ${signal}`, {
      reason: signal === "SIGHUP"
        ? "the terminal closed, or the process was sent SIGHUP"
        : `the process was sent ${signal}`,
      remedy: USAGE_STEPS.runAgain,
      exitCode,
    });
  }
}
