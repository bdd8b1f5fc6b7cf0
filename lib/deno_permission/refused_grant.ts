/**
 * A grant Deno refused that a restart under a wider plan would give: carried on the error
 * that reports the refusal (`refusedGrant`), and collected where errors are shown to a
 * person (`commands/_boundary.ts`), so the launcher can be asked for that restart
 * (`lib/permissions/restart.ts`). No module-wide state: whoever shows the errors keeps the
 * {@linkcode RefusedGrants}.
 *
 * A leaf: it imports nothing from lib/ but the cause-chain walker.
 *
 * @module
 */

import { causeChain } from "../cause_chain.ts";

/** One grant the client needs, as the plan names it. */
export interface NeededGrant {
  kind: string;
  value: string;
  why: string;
}

/**
 * A grant refused on the way to an OAuth server's authorization server that moved: the
 * plan computed from the stored login names the old one, so `server`'s authorization
 * server must be discovered again.
 */
export interface RefusedGrant {
  grant: NeededGrant;
  /** The server whose authorization server is discovered again at the restart. */
  rediscover: string;
}

/** An error that carries a {@linkcode RefusedGrant}. */
export interface CarriesRefusedGrant {
  readonly refusedGrant: RefusedGrant;
}

/**
 * The grant `flag` (`--allow-net=host:port`) refused while `server` was logging in, or
 * `undefined` for a flag a restart cannot add this way.
 */
export function authorizationServerGrant(
  flag: string,
  server: string,
): RefusedGrant | undefined {
  const match = /^--allow-net=(.+)$/.exec(flag);
  if (!match) return undefined;
  const why = `the new authorization server of '${server}'`;
  return { grant: { kind: "net", value: match[1], why }, rediscover: server };
}

/** The refused grant `error` (or what it wraps) carries, if any. */
export function refusedGrantOf(error: unknown): RefusedGrant | undefined {
  for (const e of causeChain(error)) {
    if (typeof e !== "object" || e === null) continue;
    const carried = (e as Partial<CarriesRefusedGrant>).refusedGrant;
    if (carried) return carried;
  }
  return undefined;
}

/** The refused grants of the errors shown so far, each grant once. */
export class RefusedGrants {
  readonly #adds: NeededGrant[] = [];
  readonly #rediscover = new Set<string>();

  /** Keeps the grant `error` carries, if it carries one. */
  note(error: unknown): void {
    const refused = refusedGrantOf(error);
    if (!refused) return;
    this.#rediscover.add(refused.rediscover);
    if (!this.#adds.some((grant) => grant.value === refused.grant.value)) {
      this.#adds.push({ ...refused.grant });
    }
  }

  /** The grants kept, and the servers whose authorization server must be found again. */
  list(): { adds: NeededGrant[]; rediscover: string[] } {
    return { adds: this.#adds.map((grant) => ({ ...grant })), rediscover: [...this.#rediscover] };
  }
}
