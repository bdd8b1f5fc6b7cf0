/**
 * Credentials written into a server's URL: the password of `user:password@` and the
 * values of secret-named query parameters (`?api_key=`, `?token=`). `patchbay mcp` moves
 * them to .env, the URL keeping a `${VAR}` in their place (URLs expand `${VAR}`).
 *
 * @module
 */

import { isSecretName } from "../env.ts";

/** One credential in a URL, as written (percent-encoded: .env keeps it that way). */
export interface UrlSecret {
  /** The parameter's name, or `password`. */
  key: string;
  value: string;
  /** The text of the URL that holds it, and that text with `reference` in its place. */
  from: string;
  to(reference: string): string;
}

/** Parameters named like signatures, which `isSecretName` does not cover. */
const SIGNATURE = /^(?:sig|signature|access_token|apikey|api_key)$/i;

/** The credentials in `url`; none when it is not a URL or already uses `${VAR}`. */
export function urlSecrets(url: string): UrlSecret[] {
  if (url.includes("${")) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: UrlSecret[] = [];
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^\s/:@]*):([^\s/@]+)@/i.exec(url);
  if (userinfo && parsed.password) {
    const [, user, password] = userinfo;
    found.push({
      key: "password",
      value: password,
      from: `${user}:${password}@`,
      to: (ref) => `${user}:${ref}@`,
    });
  }
  const query = url.indexOf("?");
  if (query < 0) return found;
  const fragment = url.indexOf("#", query);
  const search = url.slice(query, fragment < 0 ? undefined : fragment);
  for (const [, separator, key, value] of search.matchAll(/([?&])([^=&#]+)=([^&#]+)/g)) {
    const name = key.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
    if (!isSecretName(name) && !SIGNATURE.test(key)) continue;
    found.push({
      key,
      value,
      from: `${separator}${key}=${value}`,
      to: (ref) => `${separator}${key}=${ref}`,
    });
  }
  return found;
}
