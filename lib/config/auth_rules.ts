/**
 * The rules among an entry's `auth` fields, as a zod refinement: a grant needs its
 * credentials, and one way to authenticate the client is given, not two. The loader runs
 * them once the entry's transport and url are sound (lib/config/servers.ts), so a broken
 * entry reports its first-order problems alone.
 *
 * @module
 */

import type { z } from "zod";
import { checkOrganisationGrants } from "./grant_rules.ts";
import { AuthSchema, type RuleParams } from "./schema.ts";

type Auth = z.output<typeof AuthSchema>;
type Context = z.core.$RefinementCtx<Auth>;

/** `auth` as written (defaults applied), checked field against field. */
export const AuthRulesSchema = AuthSchema.superRefine((auth, ctx) => {
  const keyFields = (["private_key", "private_key_file"] as const).filter((f) =>
    auth[f] !== undefined
  );
  if (keyFields.length === 2) {
    issue(
      ctx,
      "private_key_file",
      "auth.private_key and auth.private_key_file are mutually exclusive",
      {
        hint: "keep one: the key itself (e.g. ${CLIENT_KEY}) or the file that holds it",
      },
    );
  }
  if (keyFields.length > 0 && auth.client_secret !== undefined) {
    issue(
      ctx,
      keyFields[0],
      `auth.client_secret and auth.${keyFields[0]} are two ways to authenticate the client`,
      {
        hint: "keep client_secret for client_secret_basic, or the private key for private_key_jwt",
      },
    );
  }
  if (keyFields.length > 0 && auth.client_id === undefined) {
    issue(
      ctx,
      keyFields[0],
      `auth.${keyFields[0]} needs auth.client_id: the key signs assertions for a ` +
        "pre-registered client",
      { hint: 'set "client_id" to the id the authorization server registered the key under' },
    );
  }
  if (auth.private_key_alg !== undefined && keyFields.length === 0) {
    issue(
      ctx,
      "private_key_alg",
      "auth.private_key_alg is set but no private key is: it is not used",
      {
        hint: "add private_key or private_key_file, or remove private_key_alg",
        kind: "warning",
      },
    );
  }
  checkOrganisationGrants(auth, ctx);
  if (auth.grant !== "authorization_code" && auth.client_metadata_url !== undefined) {
    issue(
      ctx,
      "client_metadata_url",
      `auth.client_metadata_url is for browser logins; grant "${auth.grant}" uses client_id`,
      { hint: "remove client_metadata_url" },
    );
  }
  if (auth.grant !== "client_credentials") return;
  if (auth.client_id === undefined) {
    issue(
      ctx,
      "client_id",
      'grant "client_credentials" authenticates as a pre-registered client: set ' +
        "client_id, and client_secret or private_key_file",
      { kind: "missing" },
    );
  } else if (auth.client_secret === undefined && keyFields.length === 0) {
    issue(
      ctx,
      "grant",
      'grant "client_credentials" needs the client\'s credentials: auth.client_secret ' +
        "(client_secret_basic) or auth.private_key / auth.private_key_file (private_key_jwt)",
      { hint: 'add "client_secret": "${CLIENT_SECRET}" (from .env), or "private_key_file"' },
    );
  }
});

function issue(ctx: Context, field: keyof Auth, message: string, params: RuleParams): void {
  ctx.addIssue({ code: "custom", path: [field], message, params });
}
