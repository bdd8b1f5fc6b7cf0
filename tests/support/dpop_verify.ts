/**
 * Verifies a DPoP proof (RFC 9449 §4.3) as a resource or authorization server does, for
 * the test fixtures: the JWS signed by the key in its header (ES256), `typ`, `htm`, `htu`
 * (without query and fragment), `iat` recent, a `jti`, the `ath` of the access token
 * presented with it, and the nonce when one is required.
 *
 * @module
 */

/** The claims of a verified proof. */
export interface DpopClaims {
  htm: string;
  htu: string;
  iat: number;
  jti: string;
  ath?: string;
  nonce?: string;
  /** RFC 7638 thumbprint of the proof's key. */
  jkt: string;
}

/** How far `iat` may be from now. */
const IAT_WINDOW_S = 120;

function b64urlDecode(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return b64url(new Uint8Array(digest));
}

/** The claims of `proof` if it is valid for the request; throws what is wrong otherwise. */
export async function verifyDpopProof(
  proof: string | null,
  expected: { htm: string; htu: string; accessToken?: string; nonce?: string },
): Promise<DpopClaims> {
  if (!proof) throw new Error("no DPoP header");
  const [h, p, s] = proof.split(".");
  const header = JSON.parse(new TextDecoder().decode(b64urlDecode(h)));
  const claims = JSON.parse(new TextDecoder().decode(b64urlDecode(p)));
  if (header.typ !== "dpop+jwt") throw new Error(`typ is ${header.typ}`);
  if (header.alg !== "ES256") throw new Error(`alg is ${header.alg}`);
  const jwk = header.jwk;
  if (!jwk || jwk.d) throw new Error("no public jwk in the header");
  const key = await crypto.subtle.importKey(
    "jwk",
    jwk,
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["verify"],
  );
  const ok = await crypto.subtle.verify(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    b64urlDecode(s),
    new TextEncoder().encode(`${h}.${p}`),
  );
  if (!ok) throw new Error("bad signature");
  const htu = new URL(expected.htu);
  htu.search = "";
  htu.hash = "";
  if (claims.htm !== expected.htm) throw new Error(`htm is ${claims.htm}`);
  if (claims.htu !== htu.href) throw new Error(`htu is ${claims.htu}, not ${htu.href}`);
  if (typeof claims.jti !== "string" || claims.jti.length === 0) throw new Error("no jti");
  if (Math.abs(claims.iat - Date.now() / 1000) > IAT_WINDOW_S) throw new Error("iat too far");
  if (expected.accessToken !== undefined) {
    if (claims.ath !== await sha256(expected.accessToken)) throw new Error("ath mismatch");
  }
  if (expected.nonce !== undefined && claims.nonce !== expected.nonce) {
    throw new Error(`nonce is ${claims.nonce ?? "missing"}`);
  }
  const jkt = await sha256(
    JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }),
  );
  return { ...claims, jkt };
}
