/**
 * The base of every typed error: {@linkcode PatchbayError} with what it carries
 * ({@linkcode ErrorDetails}), picking a remedy for a surface, and the message of anything
 * thrown. The remedies themselves are the rows of `lib/failure_table.ts`.
 *
 * @module
 */

import { EXIT } from "../exit_codes.ts";
import { type Remedy, remedyOf, type RemedyText, type Surface } from "./failure_table.ts";
import type { ErrorCode } from "./error_codes.ts";

/** What every user-facing error carries besides its message. */
export interface ErrorDetails {
  /** Why it happened, as far as patchbay could establish (the probable cause). */
  reason: string;
  /** What the user can do about it: one text, or each surface's own (lib/failure_table.ts). */
  remedy: RemedyText;
  /** Lines of supporting detail (a source excerpt, a list of problems). */
  details?: string[];
  /** The underlying error, kept for the debug log. */
  cause?: unknown;
  /** @default EXIT.failure */
  exitCode?: number;
}

/** Base of every error patchbay shows to a person. */
export class PatchbayError extends Error {
  readonly code: ErrorCode;
  readonly reason: string;
  /** The remedy as the interactive client words it. */
  readonly remedy: string;
  /** The remedy as each surface words it ({@linkcode remedyFor} picks one). */
  readonly remedies: Remedy;
  readonly details: readonly string[];
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, info: ErrorDetails) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = new.target.name;
    this.code = code;
    this.reason = info.reason;
    this.remedies = remedyOf(info.remedy);
    this.remedy = this.remedies.repl;
    this.details = info.details ?? [];
    this.exitCode = info.exitCode ?? EXIT.failure;
  }
}

/**
 * The remedy of `error` (or a remedy) worded for `surface`: a scripting command's names no
 * slash command. A plain string reads the same on both.
 */
export function remedyFor(error: PatchbayError | RemedyText, surface: Surface): string {
  return (error instanceof PatchbayError ? error.remedies : remedyOf(error))[surface];
}

/** The message of anything thrown (an `Error`'s message, else its text). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
