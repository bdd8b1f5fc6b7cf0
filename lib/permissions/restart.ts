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

/** The exit code that asks the launcher for a restart (EX_TEMPFAIL: "try again"). */
export const RESTART_EXIT_CODE = 75;

/** The variable naming the file the client writes its request to. */
export const RESTART_FILE_VARIABLE = "PATCHBAY_RESTART_FILE";

/** One grant the client needs, as the plan names it. */
export interface NeededGrant {
  kind: string;
  value: string;
  why: string;
}

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
}

/** The file the launcher named, if this process may ask for a restart. */
export function restartFile(): string | undefined {
  try {
    if (Deno.env.get("PATCHBAY_LAUNCHER") !== "narrow") return undefined;
    return Deno.env.get(RESTART_FILE_VARIABLE) || undefined;
  } catch {
    return undefined; // Not granted: not started by a launcher that can restart it.
  }
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

/** The request in `file`, removed once read; `undefined` when there is none. */
export async function takeRestartRequest(file: string): Promise<RestartRequest | undefined> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(file)) as RestartRequest;
    return Array.isArray(parsed?.adds) ? parsed : undefined;
  } catch {
    return undefined;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
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
  return adds.map((grant) => `${grant.kind} ${grant.value} (${grant.why})`).join(", ");
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

/** Grants this process was refused on the way to an OAuth server that moved, and which. */
const refused: { adds: NeededGrant[]; rediscover: Set<string> } = {
  adds: [],
  rediscover: new Set(),
};

/**
 * Remembers that Deno refused `flag` (`--allow-net=host:port`) while `server` was logging
 * in: its authorization server is not the one its stored login names, so the plan lacks it.
 * A command that then fails asks the launcher to discover it again ({@linkcode restartCode}).
 */
export function noteOAuthRefusal(flag: string, server: string): void {
  const match = /^--allow-net=(.+)$/.exec(flag);
  if (!match) return;
  refused.rediscover.add(server);
  if (!refused.adds.some((grant) => grant.value === match[1])) {
    refused.adds.push({
      kind: "net",
      value: match[1],
      why: `the new authorization server of '${server}'`,
    });
  }
}

/** What {@linkcode noteOAuthRefusal} remembered, if anything. */
export function oauthRefusals(): { adds: NeededGrant[]; rediscover: string[] } {
  return { adds: [...refused.adds], rediscover: [...refused.rediscover] };
}

/**
 * The exit code of a command that failed with `code`: {@linkcode RESTART_EXIT_CODE} when an
 * OAuth server's new authorization server was refused and the launcher can start the
 * command again after discovering it (the line saying so is printed here).
 */
export async function restartCode(code: number): Promise<number> {
  // The interactive client asked already (`/refresh`): its request, with the conversation
  // to resume, stands.
  if (code === RESTART_EXIT_CODE) return code;
  const { adds, rediscover } = oauthRefusals();
  if (adds.length === 0 || !await writeRestartRequest({ adds, rediscover })) return code;
  console.error(describeAdds(adds, "the command runs again"));
  return RESTART_EXIT_CODE;
}
