/**
 * The rules of the organisation grants among an entry's `auth` fields: `jwt_bearer` needs
 * one source of the workload's JWT (`assertion_file` or `assertion_command`);
 * `token_exchange` needs the identity provider (`idp`: where, who patchbay is there, and
 * one source of the person's ID token) and patchbay's client at the server's
 * authorization server. Fields of one grant written for another are reported as unused.
 * Called by lib/config/auth_rules.ts.
 *
 * @module
 */

import type { z } from "zod";
import type { AuthSchema, RuleParams } from "./schema.ts";

type Auth = z.output<typeof AuthSchema>;
type Context = z.core.$RefinementCtx<Auth>;

/** Checks the `jwt_bearer` and `token_exchange` fields of `auth`. */
export function checkOrganisationGrants(auth: Auth, ctx: Context): void {
  checkAssertion(auth, ctx);
  checkIdp(auth, ctx);
}

function checkAssertion(auth: Auth, ctx: Context): void {
  const sources = (["assertion_file", "assertion_command"] as const).filter((f) =>
    auth[f] !== undefined
  );
  if (sources.length === 2) {
    issue(
      ctx,
      ["assertion_command"],
      "auth.assertion_file and auth.assertion_command are " +
        "mutually exclusive",
      { hint: "keep the file the platform writes, or the command" },
    );
  }
  if (auth.grant === "jwt_bearer") {
    if (sources.length === 0) {
      issue(
        ctx,
        ["assertion_file"],
        'grant "jwt_bearer" presents the workload\'s JWT: set auth.assertion_file (e.g. ' +
          "/var/run/secrets/tokens/mcp) or auth.assertion_command",
        { kind: "missing" },
      );
    }
    return;
  }
  for (const field of sources) {
    issue(ctx, [field], `auth.${field} is only used with grant "jwt_bearer"`, {
      hint: 'set "grant": "jwt_bearer", or remove it',
      kind: "warning",
    });
  }
}

function checkIdp(auth: Auth, ctx: Context): void {
  const idp = auth.idp;
  if (auth.grant !== "token_exchange") {
    if (idp !== undefined) {
      issue(ctx, ["idp"], 'auth.idp is only used with grant "token_exchange"', {
        hint: 'set "grant": "token_exchange", or remove idp',
        kind: "warning",
      });
    }
    return;
  }
  if (auth.client_id === undefined) {
    issue(
      ctx,
      ["client_id"],
      'grant "token_exchange" presents the identity provider\'s grant as a pre-registered ' +
        "client of the server's authorization server: set client_id (and client_secret)",
      { kind: "missing" },
    );
  }
  if (idp === undefined) {
    issue(
      ctx,
      ["idp"],
      'grant "token_exchange" needs the identity provider: set auth.idp with issuer (or ' +
        "token_endpoint), client_id and subject_token_file (or subject_token_command)",
      { kind: "missing" },
    );
    return;
  }
  if (idp.issuer === undefined && idp.token_endpoint === undefined) {
    issue(ctx, ["idp", "issuer"], "auth.idp needs issuer or token_endpoint", {
      kind: "missing",
    });
  }
  if (idp.client_id === undefined) {
    issue(
      ctx,
      ["idp", "client_id"],
      "auth.idp needs client_id: patchbay's client at the " +
        "identity provider, the audience of the person's ID token",
      { kind: "missing" },
    );
  }
  const sources = (["subject_token_file", "subject_token_command"] as const).filter((f) =>
    idp[f] !== undefined
  );
  if (sources.length === 0) {
    issue(
      ctx,
      ["idp", "subject_token_file"],
      "auth.idp needs the person's ID token: subject_token_file or subject_token_command " +
        "(e.g. the command of your single sign-on tool that prints it)",
      { kind: "missing" },
    );
  } else if (sources.length === 2) {
    issue(
      ctx,
      ["idp", "subject_token_command"],
      "auth.idp.subject_token_file and auth.idp.subject_token_command are mutually exclusive",
      { hint: "keep one" },
    );
  }
}

function issue(
  ctx: Context,
  path: (string | number)[],
  message: string,
  params: RuleParams,
): void {
  ctx.addIssue({ code: "custom", path, message, params });
}
