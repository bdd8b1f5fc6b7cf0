/**
 * What one doctor check found: a status, the finding in one line, the remedy, and
 * supporting detail. Checks never throw; a failure is a result like any other.
 *
 * @module
 */

import {
  DenoPermissionError,
  type ErrorCode,
  messageOf,
  PatchbayError,
  remedyFor,
} from "../errors.ts";
import { denoPermissionFlag, findDenoDenial } from "../deno_permission/denial.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/**
 * `pass`: works; `warn`: works, but something deserves attention; `fail`: patchbay will
 * fail here; `skip`: not checked (not applicable, `--offline`, or an earlier failure).
 */
export type CheckStatus = "pass" | "warn" | "fail" | "skip";

/** The outcome of one check. */
export interface CheckResult {
  /** Stable identifier: `config`, `env_file`, `server:<name>`, ... */
  name: string;
  status: CheckStatus;
  /** What was found, in one line (for failures: the message, then its cause). */
  finding: string;
  /** What to do, for `warn` and `fail`. */
  remedy?: string;
  /** Supporting lines: a source excerpt, stderr, the values compared. */
  details: string[];
  /** The error's code, when the finding is a patchbay error. */
  code?: ErrorCode;
}

/** A passing result. */
export function pass(name: string, finding: string, details: string[] = []): CheckResult {
  return { name, status: "pass", finding, details };
}

/** A warning with its remedy. */
export function warn(
  name: string,
  finding: string,
  remedy: string,
  details: string[] = [],
): CheckResult {
  return { name, status: "warn", finding, remedy, details };
}

/** A check that did not run, and why. */
export function skip(name: string, why: string): CheckResult {
  return { name, status: "skip", finding: why, details: [] };
}

/**
 * A failure from what was thrown: a patchbay error keeps its message, cause and remedy;
 * a Deno sandbox refusal names its flag; anything else is reported as unexpected.
 */
export function failure(
  name: string,
  error: unknown,
  status: "fail" | "warn" = "fail",
): CheckResult {
  const e = asPatchbayError(error);
  return {
    name,
    status,
    finding: `${e.message} — ${e.reason}`,
    // The doctor is a scripting command: remedies name its flags, not slash commands.
    remedy: remedyFor(e, "script"),
    details: [...e.details],
    code: e.code,
  };
}

/** `error` as a {@linkcode PatchbayError}. */
export function asPatchbayError(error: unknown): PatchbayError {
  if (error instanceof PatchbayError) return error;
  const flag = denoPermissionFlag(error);
  if (flag) {
    return new DenoPermissionError(flag, findDenoDenial(error)!.message.split(",")[0], error);
  }
  const message = messageOf(error);
  return new PatchbayError("internal", `Unexpected error: ${message}`, {
    reason: "the check met a condition patchbay does not recognise",
    remedy: DOCTOR_STEPS.checkFailed,
    cause: error,
  });
}

/** A signal that aborts after `ms`, or earlier with `signal`. */
export function timeoutSignal(ms: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}
