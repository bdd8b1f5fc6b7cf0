/**
 * What the organisation grants of an entry's `auth` need of Deno's permissions: the file
 * the workload's JWT or the person's ID token is read from (`--allow-read`), the command
 * that prints it (`--allow-run`, by the file it resolves to), and the identity provider's
 * addresses (`--allow-net`). Called by lib/permissions/plan.ts for each HTTP entry.
 *
 * @module
 */

import type { CredentialSource, HttpServerConfig } from "../config/types.ts";
import { portOf } from "../proxy.ts";

/** The part of the plan's builder this uses (the kinds named here: plan.ts imports this). */
export interface PlanGrants {
  add(kind: "read" | "run" | "net", value: string, why: string): void;
  note(text: string): void;
}

/** The part of the plan's inputs this uses. */
export interface GrantPlanInputs {
  resolveCommand(command: string, searchPath: string | undefined, cwd: string): string | undefined;
  env: { get(name: string): string | undefined };
  cwd: string;
}

/** Adds what `server`'s `jwt_bearer` or `token_exchange` grant needs. */
export function planOrganisationGrant(
  plan: PlanGrants,
  inputs: GrantPlanInputs,
  server: HttpServerConfig,
): void {
  const auth = server.auth;
  if (!auth) return;
  if (auth.grant === "jwt_bearer" && auth.assertion) {
    planSource(plan, inputs, auth.assertion, `the workload's JWT for '${server.name}'`);
  }
  if (auth.grant !== "token_exchange" || !auth.idp) return;
  const { idp } = auth;
  if (idp.subjectToken) {
    planSource(plan, inputs, idp.subjectToken, `your ID token for '${server.name}'`);
  }
  const why = `the identity provider of '${server.name}' (auth.idp)`;
  for (const url of [idp.issuer, idp.tokenEndpoint]) {
    if (url && URL.canParse(url)) plan.add("net", hostPortOf(new URL(url)), why);
  }
  if (!idp.tokenEndpoint) {
    plan.note(
      `OAuth: the token endpoint of the identity provider of '${server.name}' is read from ` +
        `its metadata at ${idp.issuer}; if it is on another host, set auth.idp.token_endpoint ` +
        "and run `patchbay permissions` again.",
    );
  }
}

function planSource(
  plan: PlanGrants,
  inputs: GrantPlanInputs,
  source: CredentialSource,
  what: string,
): void {
  if (source.file) plan.add("read", source.file, `${what} (${source.field})`);
  const program = source.command?.[0];
  if (!program) return;
  const path = inputs.resolveCommand(program, inputs.env.get("PATH"), inputs.cwd);
  plan.add("run", path ?? program, `prints ${what} (${source.field})`);
  if (!path) {
    plan.note(
      `'${program}' (${source.field}) is not on PATH; Deno allows a command by the file it ` +
        "resolves to, so install it (or fix the field) and run `patchbay permissions` again.",
    );
  }
}

function hostPortOf(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}
