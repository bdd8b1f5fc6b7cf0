/**
 * One run of a secret helper (`headers_helper`, `LLM.api_key_helper`; docs/secrets.md): the
 * program started like a stdio server's command, in the configuration's folder, with the
 * minimal environment stdio servers get plus its own `env` and the facts patchbay passes
 * (`PATCHBAY_*`), bounded by {@linkcode runProgram}. A failure becomes a
 * {@linkcode SecretHelperError} saying what failed, why, and what to do.
 *
 * What it printed is registered with the redactor before anything else reads it when the
 * caller cannot use it (a token printed bare where JSON belongs is still a token); what the
 * caller uses, it registers itself.
 *
 * @module
 */

import type { HelperCommand } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import {
  CancelledError,
  helperField,
  type HelperRole,
  PatchbayError,
  SecretHelperError,
  STDERR_DETAIL,
} from "../errors.ts";
import type { Remedy } from "../errors/failure_table.ts";
import { SECRETS_STEPS } from "../errors/secrets_steps.ts";
import type { Redactor } from "../redact/redact.ts";
import { childEnvironment } from "../transports/process.ts";
import { type RunFailure, runProgram } from "./run_program.ts";

/** Options of {@linkcode runHelper}. */
export interface HelperRunOptions {
  role: HelperRole;
  /** Where the inherited variables come from (process environment over .env). */
  parentEnv: (name: string) => string | undefined;
  /** What patchbay tells the helper (`PATCHBAY_MCP_SERVER_NAME`, …). @default none */
  facts?: Record<string, string>;
  redactor: Redactor;
  signal?: AbortSignal;
  /** @default DEFAULTS.secrets.helperTimeoutSeconds × 1000 */
  timeoutMs?: number;
  /** @default DEFAULTS.secrets.helperMaxOutputBytes */
  maxOutputBytes?: number;
}

/** Runs `helper` and returns what it printed on stdout, decoded as UTF-8. */
export async function runHelper(helper: HelperCommand, options: HelperRunOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.secrets.helperTimeoutSeconds * 1000;
  const result = await runProgram(
    {
      command: helper.command,
      args: helper.args,
      env: { ...options.facts, ...childEnvironment(helper.env, options.parentEnv) },
      cwd: helper.cwd,
    },
    {
      timeoutMs,
      maxStdoutBytes: options.maxOutputBytes ?? DEFAULTS.secrets.helperMaxOutputBytes,
      signal: options.signal,
    },
  );
  if (!result.ok) {
    if (result.failure.kind === "cancelled") {
      const reason = options.signal?.reason;
      throw reason instanceof PatchbayError
        ? reason
        : new CancelledError(`running ${helperField(options.role)}`);
    }
    throw new SecretHelperError(options.role, {
      ...describeFailure(result.failure, helper, options.role),
      details: result.stderr ? [`${STDERR_DETAIL}${result.stderr}`] : [],
    });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(result.stdout);
  } catch {
    throw refused(options.role, helper, "its output is not UTF-8 text");
  }
  return text;
}

/**
 * The helper printed what its caller cannot use: every line of it becomes a secret first
 * (a bare token where JSON belongs is still a token), then the error says `why`.
 */
export function refusedOutput(
  role: HelperRole,
  helper: HelperCommand,
  output: string,
  why: string,
  redactor: Redactor,
): SecretHelperError {
  redactor.addSecret(output.trim());
  for (const line of output.split(/\r?\n/)) redactor.addSecret(line.trim());
  return refused(role, helper, why);
}

function refused(role: HelperRole, helper: HelperCommand, why: string): SecretHelperError {
  const shape = role.kind === "headers"
    ? 'one JSON object of header names to text values, e.g. {"Authorization": "Bearer …"}'
    : "the key alone, on one line";
  return new SecretHelperError(role, {
    reason: `${describeHelper(helper)} printed what patchbay cannot use: ${why}`,
    remedy: fixThen(role, `make it print ${shape} on stdout, nothing else (messages go to stderr)`),
  });
}

/** The helper as a message names it: its command line. */
export function describeHelper(helper: HelperCommand): string {
  return `the helper ${[helper.command, ...helper.args].join(" ")}`;
}

/** `fix`, then what makes patchbay run the helper again, on each surface. */
export function fixThen(role: HelperRole, fix: string): Remedy {
  return SECRETS_STEPS.helperThen(fix, role.kind === "headers");
}

function describeFailure(
  failure: RunFailure,
  helper: HelperCommand,
  role: HelperRole,
): { reason: string; remedy: Remedy | string } {
  const it = describeHelper(helper);
  const field = helperField(role);
  switch (failure.kind) {
    case "not_found":
      return {
        reason: `${it} was not found: "${helper.command}" is ${
          helper.command.includes("/") ? "no file" : "on no folder of PATH"
        }`,
        remedy: fixThen(
          role,
          `install it, or write its full path in ${field} (a relative path is taken from ` +
            "the configuration's folder)",
        ),
      };
    case "not_executable":
      return {
        reason: `${it} could not be started: ${failure.detail}`,
        remedy: fixThen(role, `make ${helper.command} executable (chmod +x)`),
      };
    case "not_granted":
      return {
        reason: `Deno did not grant running ${helper.command} (${failure.flag})`,
        remedy: denoPermissionRemedy(failure.flag),
      };
    case "timeout":
      return {
        reason: `${it} ran for more than ${failure.seconds} s and was ended with what it ` +
          "started",
        remedy: fixThen(
          role,
          "make it answer sooner: it gets no input, so it must not wait for any (run an " +
            "interactive login once by hand first), and it must close its output when done",
        ),
      };
    case "too_large":
      return {
        reason: `${it} printed more than ${failure.limit} bytes and was ended`,
        remedy: fixThen(role, "make it print only what it is for"),
      };
    case "exit":
      return {
        reason: failure.signal
          ? `${it} was ended by ${failure.signal}`
          : `${it} exited with status ${failure.code}`,
        remedy: fixThen(
          role,
          "run it by hand in the configuration's folder and fix what it reports",
        ),
      };
    case "cancelled":
      return { reason: `${it} was stopped before it answered`, remedy: SECRETS_STEPS.runAgain };
  }
}
