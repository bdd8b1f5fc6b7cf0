/**
 * The DPoP proof key of one server (RFC 9449, `auth.dpop`): a P-256 key made with the SDK's
 * `generateDpopKeyPair`, kept in the server's credentials record beside the tokens bound
 * to it (the file store writes that record with mode 0600; the Redis store keeps it with
 * the tokens), and imported again, non-extractable, by the next process.
 *
 * @module
 */

import { type DpopKeyPair, generateDpopKeyPair } from "@modelcontextprotocol/client";

/** The algorithm of the keys patchbay makes (the one every DPoP server supports). */
export const DPOP_KEY_ALG = "ES256";

/** A DPoP key as stored. */
export interface StoredDpopKey {
  alg: typeof DPOP_KEY_ALG;
  /** The private JWK (a secret: registered with the redactor when read). */
  privateJwk: JsonWebKey & { d: string };
  publicJwk: JsonWebKey;
  /** RFC 7638 thumbprint, the `cnf.jkt` the tokens are bound to. */
  thumbprint: string;
}

const CURVE = { name: "ECDSA", namedCurve: "P-256" } as const;

/** A new key: the pair to sign with now, and its stored form. */
export async function newDpopKey(): Promise<{ keyPair: DpopKeyPair; stored: StoredDpopKey }> {
  const keyPair = await generateDpopKeyPair({ alg: DPOP_KEY_ALG, extractable: true });
  const privateJwk = await crypto.subtle.exportKey("jwk", keyPair.privateKey);
  if (typeof privateJwk.d !== "string") throw new Error("the DPoP key could not be exported");
  // Signing from now on uses a non-extractable copy: the stored form is the only export.
  const privateKey = await crypto.subtle.importKey("jwk", privateJwk, CURVE, false, ["sign"]);
  return {
    keyPair: { ...keyPair, privateKey },
    stored: {
      alg: DPOP_KEY_ALG,
      privateJwk: privateJwk as JsonWebKey & { d: string },
      publicJwk: keyPair.publicJwk as JsonWebKey,
      thumbprint: keyPair.thumbprint,
    },
  };
}

/** The stored key as a pair to sign with (the private key non-extractable). */
export async function loadDpopKeyPair(stored: StoredDpopKey): Promise<DpopKeyPair> {
  if (stored.alg !== DPOP_KEY_ALG) throw new Error(`unsupported DPoP key algorithm ${stored.alg}`);
  const privateKey = await crypto.subtle.importKey(
    "jwk",
    stored.privateJwk,
    CURVE,
    false,
    ["sign"],
  );
  const publicKey = await crypto.subtle.importKey("jwk", stored.publicJwk, CURVE, true, [
    "verify",
  ]);
  return {
    privateKey,
    publicKey,
    publicJwk: stored.publicJwk as DpopKeyPair["publicJwk"],
    thumbprint: stored.thumbprint,
    alg: DPOP_KEY_ALG,
  };
}
