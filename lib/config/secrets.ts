/**
 * Secrets in a server entry (`env` values with secret names, credential headers, values
 * shaped like credentials, secret command arguments: `arg_secrets.ts`, credentials in a
 * URL: `url_secrets.ts`) moved out of servers_config.json into .env, the entry keeping a
 * `${VAR}` reference in their place.
 *
 * @module
 */

import { isSecretName } from "../env.ts";
import { argSecrets, shapedSecret } from "./arg_secrets.ts";
import { urlSecrets } from "./url_secrets.ts";
import type { JsonValue } from "./json.ts";

/** One secret found in an entry, and where it goes. */
export interface FoundSecret {
  server: string;
  /** `env.GITHUB_TOKEN`, `headers.Authorization` or `args[3]`. */
  field: string;
  /** The variable it is stored under in .env. */
  variable: string;
  /** The secret itself (never printed). */
  value: string;
  /** What the entry says instead, e.g. `Bearer ${GITHUB_TOKEN}`. */
  replacement: string;
  /** When the secret is part of a URL: the text `replacement` takes the place of. */
  fragment?: string;
  /** The .env file already gives the variable this value: nothing to add. */
  present: boolean;
}

/** Header names whose values are credentials whatever their wording. */
const CREDENTIAL_HEADER = /^(?:authorization|proxy-authorization|cookie)$|key|token|secret|auth/i;
/** A scheme before a credential, kept in the entry: `Bearer ${TOKEN}`. */
const SCHEME = /^(Bearer|Basic|Token|Bot)\s+(\S.*)$/i;

/** What a variable holds in effect (the process over .env), and in the .env file. */
export interface Lookup {
  get(name: string): string | undefined;
  fileValue(name: string): string | undefined;
}

/**
 * The secrets of `entry` (named `server`), each with a variable that `lookup` shows free or
 * already holding the same value (`present` when .env has it already); `chosen` carries the names picked for earlier entries.
 */
export function findSecrets(
  server: string,
  entry: Record<string, JsonValue>,
  lookup: Lookup,
  chosen: Map<string, string> = new Map(),
): FoundSecret[] {
  const found: FoundSecret[] = [];
  const pick = (preferred: string[], value: string) => {
    const candidates = [...preferred];
    for (let i = 2; i < 100; i++) candidates.push(`${preferred.at(-1)}_${i}`);
    for (const name of candidates) {
      // A name the process sets to another value would win over .env: not that one.
      const held = chosen.get(name) ?? lookup.get(name);
      if (held === undefined || held === value) {
        chosen.set(name, value);
        return { variable: name, present: lookup.fileValue(name) === value };
      }
    }
    throw new Error(`no free variable name for ${preferred[0]}`);
  };
  const prefix = variablePart(server);
  for (const [name, value] of stringsOf(entry.env)) {
    if (value.includes("${") || value === "") continue;
    // A variable with another name may still hold one (`DATABASE_URL=postgres://u:pw@…`).
    const shaped = isSecretName(name) ? undefined : shapedSecret(value);
    if (!isSecretName(name) && !shaped) continue;
    const secret = shaped?.value ?? value;
    const { variable, present } = pick(
      shaped ? [`${prefix}_${variablePart(name)}`] : [name, `${prefix}_${variablePart(name)}`],
      secret,
    );
    found.push({
      server,
      field: `env.${name}`,
      variable,
      value: secret,
      replacement: shaped ? shaped.replace(`\${${variable}}`) : `\${${variable}}`,
      present,
    });
  }
  for (const [name, value] of stringsOf(entry.headers)) {
    if (!CREDENTIAL_HEADER.test(name) || value.includes("${") || value === "") continue;
    const scheme = SCHEME.exec(value);
    const secret = scheme ? scheme[2] : value;
    const base = scheme ? `${prefix}_TOKEN` : `${prefix}_${variablePart(name)}`;
    const { variable, present } = pick([base], secret);
    found.push({
      server,
      field: `headers.${name}`,
      variable,
      value: secret,
      replacement: scheme ? `${scheme[1]} \${${variable}}` : `\${${variable}}`,
      present,
    });
  }
  if (typeof entry.url === "string") {
    for (const secret of urlSecrets(entry.url)) {
      const { variable, present } = pick([`${prefix}_${variablePart(secret.key)}`], secret.value);
      found.push({
        server,
        field: `url (${secret.key})`,
        variable,
        value: secret.value,
        replacement: secret.to(`\${${variable}}`),
        fragment: secret.from,
        present,
      });
    }
  }
  // A word that is not a string (the entry is then refused) is an empty one here.
  const args = Array.isArray(entry.args)
    ? entry.args.map((arg) => typeof arg === "string" ? arg : "")
    : [];
  for (const secret of argSecrets(args)) {
    const base = `${prefix}_${secret.flag ? variablePart(secret.flag) : "TOKEN"}`;
    // The same value given in `env` too (a flag and its variable): one variable.
    const same = found.find((f) => f.value === secret.value);
    const { variable, present } = same ?? pick([base], secret.value);
    found.push({
      server,
      field: `args[${secret.index}]`,
      variable,
      value: secret.value,
      replacement: secret.replace(`\${${variable}}`),
      present,
    });
  }
  return found;
}

/** `entry` with each of `secrets` replaced by its reference. */
export function withReferences(
  entry: Record<string, JsonValue>,
  secrets: readonly FoundSecret[],
): Record<string, JsonValue> {
  const out = structuredClone(entry);
  for (const secret of secrets) {
    if (secret.fragment !== undefined) {
      out.url = String(out.url).replace(secret.fragment, secret.replacement);
      continue;
    }
    const arg = /^args\[(\d+)\]$/.exec(secret.field);
    if (arg) {
      (out.args as JsonValue[])[Number(arg[1])] = secret.replacement;
      continue;
    }
    const [section, ...rest] = secret.field.split(".");
    (out[section] as Record<string, JsonValue>)[rest.join(".")] = secret.replacement;
  }
  return out;
}

/** `text` as part of a variable name: upper case, other characters as `_`. */
export function variablePart(text: string): string {
  const part = text.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  return /^[A-Z_]/.test(part) ? part : `S_${part}`;
}

function stringsOf(value: JsonValue | undefined): [string, string][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => typeof v === "string" ? [[k, v]] : []);
}
