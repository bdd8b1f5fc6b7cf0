/**
 * Reading a credential the organisation grants present: the workload's JWT
 * (`auth.assertion_file`, `auth.assertion_command`) or the person's ID token
 * (`auth.idp.subject_token_file`, `…_command`). Such tokens are short-lived and rotated by
 * the platform (a Kubernetes projected token is rewritten hourly), so they are read when a
 * token is requested and never stored. A file is read through the bounded reader; a command
 * runs without a shell, bounded in time and output. What is read is registered with the
 * redactor before it is used. Failures are `OAuth authentication failed`, naming the field.
 *
 * @module
 */

import { readBoundedText } from "../files/bounded_read.ts";
import type { CredentialSource } from "../config/types.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { OAuthFailedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Redactor } from "../redact/redact.ts";

/** Largest credential read (a JWT is a few KiB; a SAML assertion some tens). */
export const MAX_CREDENTIAL_BYTES = 64 * 1024;

/** Longest a credential command may run: a helper that asks the network, not a login. */
export const CREDENTIAL_COMMAND_TIMEOUT_MS = 30_000;

/** Characters of a failed command's stderr quoted in the message. */
const STDERR_SHOWN_CHARS = 200;

/** What {@linkcode readCredential} needs. */
export interface CredentialContext {
  /** The server the credential is for, for messages. */
  server: string;
  /** What the credential is, for messages: `the workload's JWT`. */
  what: string;
  redactor?: Redactor;
  signal?: AbortSignal;
  /** @default CREDENTIAL_COMMAND_TIMEOUT_MS */
  commandTimeoutMs?: number;
}

/** The credential `source` holds now, trimmed, registered as a secret. */
export async function readCredential(
  source: CredentialSource,
  context: CredentialContext,
): Promise<string> {
  const text = source.file !== undefined
    ? await fromFile(source.file, source, context)
    : await fromCommand(source.command ?? [], source, context);
  const credential = text.trim();
  if (credential === "" || /\s/.test(credential)) {
    throw new OAuthFailedError(context.server, {
      reason: `${describe(source)} gave ${
        credential === "" ? "nothing" : "text with spaces or line breaks"
      } where ${context.what} should be (one token, such as a JWT)`,
      remedy: OAUTH_STEPS.oneToken(source.field),
    });
  }
  context.redactor?.addSecret(credential);
  return credential;
}

async function fromFile(
  file: string,
  source: CredentialSource,
  context: CredentialContext,
): Promise<string> {
  try {
    return await readBoundedText(file, { what: context.what, maxBytes: MAX_CREDENTIAL_BYTES });
  } catch (error) {
    if (denoPermissionFlag(error)) throw error;
    throw new OAuthFailedError(context.server, {
      reason: `cannot read ${context.what} from ${source.field} (${file}): ` +
        (error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message),
      remedy: OAUTH_STEPS.credentialFile(file, source.field),
      cause: error,
    });
  }
}

async function fromCommand(
  argv: string[],
  source: CredentialSource,
  context: CredentialContext,
): Promise<string> {
  const [program, ...args] = argv;
  const shown = argv.join(" ");
  const fail = (reason: string, cause?: unknown) =>
    new OAuthFailedError(context.server, {
      reason: `${source.field} (${shown}) ${reason}`,
      remedy: OAUTH_STEPS.credentialCommand(shown, source.field),
      cause,
    });
  const timeoutMs = context.commandTimeoutMs ?? CREDENTIAL_COMMAND_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = context.signal ? AbortSignal.any([timeout, context.signal]) : timeout;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal,
    }).spawn();
  } catch (error) {
    if (denoPermissionFlag(error)) throw error;
    throw fail(
      error instanceof Deno.errors.NotFound
        ? "could not start: the program is not on PATH"
        : `could not start: ${(error as Error).message}`,
      error,
    );
  }
  const [stdout, stderr, status] = await Promise.all([
    readCapped(child.stdout, MAX_CREDENTIAL_BYTES, () => child.kill("SIGKILL")),
    readCapped(child.stderr, MAX_CREDENTIAL_BYTES),
    child.status,
  ]);
  context.signal?.throwIfAborted();
  if (timeout.aborted) {
    throw fail(`did not finish within ${timeoutMs / 1000} s and was stopped`);
  }
  if (stdout === undefined) {
    throw fail(`printed more than ${MAX_CREDENTIAL_BYTES / 1024} KiB and was stopped`);
  }
  if (!status.success) {
    const last = (stderr ?? "").trim().split("\n").at(-1)?.slice(0, STDERR_SHOWN_CHARS);
    throw fail(
      `exited with ${status.signal ? `signal ${status.signal}` : `code ${status.code}`}` +
        (last ? `: ${JSON.stringify(last)}` : ""),
    );
  }
  return stdout;
}

/** The stream's text, or `undefined` (and `onOverflow` called) past `maxBytes`. */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  onOverflow?: () => void,
): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > maxBytes) {
      if (!over) onOverflow?.();
      over = true;
      continue;
    }
    chunks.push(chunk);
  }
  if (over) return undefined;
  return new TextDecoder().decode(
    chunks.reduce((all, chunk) => {
      const next = new Uint8Array(all.length + chunk.length);
      next.set(all);
      next.set(chunk, all.length);
      return next;
    }, new Uint8Array()),
  );
}

function describe(source: CredentialSource): string {
  return source.file !== undefined
    ? `${source.field} (${source.file})`
    : `${source.field} (${(source.command ?? []).join(" ")})`;
}
