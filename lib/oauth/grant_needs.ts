/**
 * What the organisation grants of an entry's `auth` need of Deno's permissions: the file
 * the workload's JWT or the person's ID token is read from (`--allow-read`), the command
 * that prints it (`--allow-run`, by the file it resolves to), and the identity provider's
 * addresses (`--allow-net`). Called for each HTTP entry by its needs
 * (lib/connections/needs.ts), which the permission plan collects.
 *
 * @module
 */

import type { CredentialSource, HttpServerConfig } from "../config/types.ts";
import type { MachineFacts, NeedsSink } from "../deno_permission/needs.ts";
import { hostPort } from "../proxy.ts";

/** Adds what `server`'s `jwt_bearer` or `token_exchange` grant needs. */
export function organisationGrantNeeds(
  plan: NeedsSink,
  inputs: MachineFacts,
  server: HttpServerConfig,
): void {
  const auth = server.auth;
  if (!auth) return;
  if (auth.grant === "jwt_bearer" && auth.assertion) {
    sourceNeeds(plan, inputs, auth.assertion, `the workload's JWT for '${server.name}'`);
  }
  if (auth.grant !== "token_exchange" || !auth.idp) return;
  const { idp } = auth;
  if (idp.subjectToken) {
    sourceNeeds(plan, inputs, idp.subjectToken, `your ID token for '${server.name}'`);
  }
  const why = `the identity provider of '${server.name}' (auth.idp)`;
  for (const url of [idp.issuer, idp.tokenEndpoint]) {
    if (url && URL.canParse(url)) plan.add("net", hostPort(url), why);
  }
  if (!idp.tokenEndpoint) {
    plan.note(
      `OAuth: the token endpoint of the identity provider of '${server.name}' is read from ` +
        `its metadata at ${idp.issuer}; if it is on another host, set auth.idp.token_endpoint ` +
        "and run `patchbay permissions` again.",
    );
  }
}

function sourceNeeds(
  plan: NeedsSink,
  inputs: MachineFacts,
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
