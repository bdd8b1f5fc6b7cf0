/**
 * The values of the organisation grants' `auth` fields, read as the rest of the entry is:
 * paths made absolute against the configuration's folder, `${VAR}` expanded (a secret from
 * `.env` stays out of the file), the identity provider's addresses checked as URLs. The
 * credentials themselves are not read here: a workload's JWT or a person's ID token is
 * short-lived, so it is read when a token is requested (lib/oauth/credential_source.ts).
 *
 * @module
 */

import type { FieldPath } from "./problem_list.ts";
import type { AuthEntry } from "./schema.ts";
import type { CredentialSource, IdpSettings } from "./types.ts";
import type { ConfigValues } from "./values.ts";

/** The `jwt_bearer` and `token_exchange` settings of an `auth` section. */
export function readGrantValues(
  values: ConfigValues,
  auth: AuthEntry,
  path: FieldPath,
): { assertion?: CredentialSource; idp?: IdpSettings } {
  const assertion = source(values, "auth", auth.assertion_file, auth.assertion_command, {
    file: [...path, "assertion_file"],
    command: [...path, "assertion_command"],
  });
  const written = auth.idp;
  if (!written) return { assertion };
  const at = [...path, "idp"];
  const idp: IdpSettings = {
    issuer: values.url(written.issuer, [...at, "issuer"]),
    tokenEndpoint: values.url(written.token_endpoint, [...at, "token_endpoint"]),
    clientId: written.client_id && values.expand(written.client_id, [...at, "client_id"]),
    clientSecret: written.client_secret &&
      values.expand(written.client_secret, [...at, "client_secret"]),
    subjectToken: source(
      values,
      "auth.idp",
      written.subject_token_file,
      written.subject_token_command,
      { file: [...at, "subject_token_file"], command: [...at, "subject_token_command"] },
    ),
  };
  return { assertion, idp };
}

function source(
  values: ConfigValues,
  section: string,
  file: string | undefined,
  command: string[] | undefined,
  paths: { file: FieldPath; command: FieldPath },
): CredentialSource | undefined {
  if (file !== undefined) {
    const name = paths.file.at(-1);
    return { field: `${section}.${String(name)}`, file: values.path(file, paths.file) };
  }
  if (command !== undefined) {
    const name = paths.command.at(-1);
    return {
      field: `${section}.${String(name)}`,
      command: command.map((word, i) => values.expand(word, [...paths.command, i])),
    };
  }
  return undefined;
}
