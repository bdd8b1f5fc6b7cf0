/**
 * How the client asks the launcher to start it again under an extended plan: when a new
 * configuration (`/refresh`) or a moved OAuth authorization server needs grants the running
 * plan lacks. The launcher names a file in `PATCHBAY_RESTART_FILE`; the client writes there
 * what it needs and why (and the conversation to resume), closes its servers and exits with
 * {@linkcode RESTART_EXIT_CODE}. The launcher then computes the plan again and starts the
 * client with the same command line, resuming that conversation.
 *
 * No npm imports: the launcher reads this too.
 *
 * @module
 */

import { RESTART_FILE_VARIABLE, restartFile } from "../deno_permission/launched.ts";
import type { NeededGrant, RefusedGrants } from "../deno_permission/refused_grant.ts";
import { EXIT } from "../exit_codes.ts";
import { isSessionId } from "../memory/ids.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { MAX_STATE_FILE_BYTES, readBoundedText } from "../files/bounded_read.ts";

export { RESTART_FILE_VARIABLE, restartFile };
export type { NeededGrant };

/** The exit code that asks the launcher for a restart (EX_TEMPFAIL: "try again"). */
export const RESTART_EXIT_CODE = 75;

/** What the client writes for the launcher. */
export interface RestartRequest {
  /** The grants the running plan lacks. */
  adds: NeededGrant[];
  /** The conversation to resume (none: nothing was said yet, or memory is off). */
  session?: string;
  /**
   * Servers whose authorization server must be discovered again (it moved): the plan
   * computed from their stored login would name the old one.
   */
  rediscover?: string[];
  /**
   * The exit code of the failed command that asked ({@linkcode restartCode}): it runs again
   * only under a wider plan, and ends with this code otherwise (it may have had side effects
   * and read its input). Absent: the interactive client asked (`/refresh`), which may
   * continue without the grant.
   */
  failedWith?: number;
}

/** A request file that is not one the client writes: why, in a few words. */
export interface MalformedRequest {
  malformed: string;
}

/** Writes `request` for the launcher; false when this process cannot ask for a restart. */
export async function writeRestartRequest(request: RestartRequest): Promise<boolean> {
  const file = restartFile();
  if (!file) return false;
  try {
    await Deno.writeTextFile(file, JSON.stringify(request), { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/**
 * The request in `file`, removed once read; `undefined` when there is none, and why it is
 * malformed when it is not exactly what the client writes (the launcher then does not
 * restart: what it reads goes into a command line and onto the terminal).
 */
export async function takeRestartRequest(
  file: string,
): Promise<RestartRequest | MalformedRequest | undefined> {
  let text: string;
  try {
    text = await readBoundedText(file, {
      what: "the restart request",
      maxBytes: MAX_STATE_FILE_BYTES,
    });
  } catch {
    return undefined;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
  try {
    return checkRequest(JSON.parse(text));
  } catch {
    return { malformed: "not JSON" };
  }
}

/** `value` as a {@linkcode RestartRequest}, or why it is not one. */
export function checkRequest(value: unknown): RestartRequest | MalformedRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { malformed: "not an object" };
  }
  const { adds, session, rediscover, failedWith } = value as Record<string, unknown>;
  const isGrant = (grant: unknown) =>
    typeof grant === "object" && grant !== null &&
    ["kind", "value", "why"].every((key) =>
      typeof (grant as Record<string, unknown>)[key] === "string"
    );
  if (!Array.isArray(adds) || adds.length === 0 || !adds.every(isGrant)) {
    return { malformed: "adds is not a list of grants {kind, value, why}" };
  }
  if (session !== undefined && (typeof session !== "string" || !isSessionId(session))) {
    return { malformed: "session is not a session id" };
  }
  const isServer = (name: unknown) =>
    typeof name === "string" && name !== "" && !name.startsWith("-");
  if (rediscover !== undefined && (!Array.isArray(rediscover) || !rediscover.every(isServer))) {
    return { malformed: "rediscover is not a list of server names" };
  }
  const isFailure = (code: unknown) =>
    Number.isInteger(code) && (code as number) > 0 && (code as number) < 256 &&
    code !== RESTART_EXIT_CODE;
  if (failedWith !== undefined && !isFailure(failedWith)) {
    return { malformed: "failedWith is not the exit code of a failure" };
  }
  return {
    adds: adds.map(({ kind, value, why }) => ({ kind, value, why })),
    ...(session !== undefined ? { session } : {}),
    ...(rediscover !== undefined ? { rediscover } : {}),
    ...(failedWith !== undefined ? { failedWith } : {}),
  } as RestartRequest;
}

/** The one line a person reads: what is added, and why, and what happens next. */
export function describeAdds(
  adds: readonly NeededGrant[],
  next = "the conversation continues",
): string {
  return `Restarting under an extended plan, which adds ${grantList(adds)}; ${next}.`;
}

/** Each grant with its reason: `run /usr/bin/uvx (starts server 'time')`. */
export function grantList(adds: readonly NeededGrant[]): string {
  // What the client wrote reaches the terminal: no escape sequence of its own.
  return adds.map((grant) => stripTerminalEscapes(`${grant.kind} ${grant.value} (${grant.why})`))
    .join(", ");
}

/**
 * The client's command line for the restart: `--resume <id>` added (before a `--`) when
 * there is a conversation to continue; a later `--resume` wins over an earlier one.
 */
export function restartArgs(clientArgs: readonly string[], session: string | undefined): string[] {
  if (!session) return [...clientArgs];
  const end = clientArgs.indexOf("--");
  const at = end === -1 ? clientArgs.length : end;
  return [...clientArgs.slice(0, at), "--resume", session, ...clientArgs.slice(at)];
}

/**
 * The exit code of a command that failed with `code`: {@linkcode RESTART_EXIT_CODE} when an
 * OAuth server's new authorization server was refused (`refused`: the grants the errors
 * shown carried) and the launcher can start the command again after discovering it (the
 * line saying so is printed here). Only a failure (`EXIT.failure`) asks: an interrupted or
 * terminated client (Ctrl+C, SIGTERM) was asked to stop, and a usage error is not a
 * missing grant.
 */
export async function restartCode(code: number, refused: RefusedGrants): Promise<number> {
  // The interactive client asked already (`/refresh`): its request, with the conversation
  // to resume, stands. RESTART_EXIT_CODE is returned unchanged.
  if (code !== EXIT.failure) return code;
  const { adds, rediscover } = refused.list();
  if (adds.length === 0 || !await writeRestartRequest({ adds, rediscover, failedWith: code })) {
    return code;
  }
  console.error(describeAdds(adds, "the command runs again"));
  return RESTART_EXIT_CODE;
}
