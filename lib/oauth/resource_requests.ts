/**
 * Requests to the MCP server itself with the access token: a DPoP-bound token (RFC 9449,
 * `auth.dpop`) is presented with the `DPoP` scheme and a fresh proof, any other with
 * `Bearer`; a `use_dpop_nonce` challenge is answered once with the nonce the server gave
 * (§9), and a second one is a nonce loop. Also the DPoP session itself: its key is the one
 * stored with the tokens (dpop_key.ts), or a new one stored before any token is asked for.
 *
 * @module
 */

import {
  DpopSession,
  type FetchLike,
  isDpopNonceChallenge,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import type { CredentialCache } from "./credential_cache.ts";
import { loadDpopKeyPair, newDpopKey } from "./dpop_key.ts";
import { dpopNonceLoopError } from "./login_errors.ts";

/**
 * The DPoP session of a server: with the key stored in its record (the tokens are bound
 * to it), or a new P-256 key, stored first; tokens bound to another key are dropped then.
 */
export async function dpopSessionFor(
  credentials: CredentialCache,
  options: { log: Log; redactor?: Redactor },
): Promise<DpopSession> {
  const stored = (await credentials.current())?.dpopKey;
  if (stored) {
    options.redactor?.addSecret(stored.privateJwk.d);
    try {
      return await DpopSession.create({ keyPair: await loadDpopKeyPair(stored) });
    } catch (error) {
      options.log.warn("the stored DPoP key cannot be used; making a new one", { error });
    }
  }
  const fresh = await newDpopKey();
  options.redactor?.addSecret(fresh.stored.privateJwk.d);
  await credentials.update((record) => {
    record.dpopKey = fresh.stored;
    // Tokens bound to another key are useless with this one.
    for (const entry of Object.values(record.issuers)) {
      if (entry.tokens?.token_type?.toLowerCase() === "dpop") {
        entry.tokens = undefined;
        entry.expiresAt = undefined;
      }
    }
  });
  return await DpopSession.create({ keyPair: fresh.keyPair });
}

/** What {@linkcode sendWithToken} needs besides the request. */
export interface TokenRequestContext {
  server: string;
  serverUrl: URL;
  /** The current tokens, read at each step (a refresh may replace them meanwhile). */
  tokens: () => Promise<StoredOAuthTokens | undefined>;
  /** The DPoP session, when the entry uses DPoP. */
  session: DpopSession | undefined;
  log: Log;
}

/**
 * One request to the server through `base` with the current token, a `use_dpop_nonce`
 * challenge to a DPoP-bound token answered once.
 */
export async function sendWithToken(
  base: FetchLike,
  input: Parameters<FetchLike>[0],
  init: RequestInit | undefined,
  url: URL,
  context: TokenRequestContext,
): Promise<Response> {
  const { session } = context;
  const response = await base(input, await withToken(init, url, context));
  const bound = session && (await context.tokens())?.token_type?.toLowerCase() === "dpop";
  if (!bound) return response;
  session.observeNonce(response, url);
  if (!isDpopNonceChallenge(response) || !response.headers.has("dpop-nonce")) return response;
  await response.body?.cancel();
  context.log.info("DPoP nonce challenge from the server; retrying once with its nonce");
  const retried = await base(input, await withToken(init, url, context));
  session.observeNonce(retried, url);
  if (isDpopNonceChallenge(retried)) {
    await retried.body?.cancel();
    throw dpopNonceLoopError(context.server, `the MCP server ${context.serverUrl.href}`);
  }
  return retried;
}

/** `init` with the current token in its headers (none stored: `init` as it is). */
async function withToken(
  init: RequestInit | undefined,
  url: URL,
  context: TokenRequestContext,
): Promise<RequestInit> {
  const tokens = await context.tokens();
  const token = tokens?.access_token;
  if (!token) return init ?? {};
  const headers = new Headers(init?.headers);
  const { session } = context;
  if (session && tokens.token_type?.toLowerCase() === "dpop") {
    // A DPoP-bound token is useless without its proof (RFC 9449 §7.1): fresh per request.
    const htm = (init?.method ?? "GET").toUpperCase();
    headers.set("authorization", `DPoP ${token}`);
    headers.set("dpop", await session.buildProof({ htm, htu: url, accessToken: token }));
  } else {
    headers.set("authorization", `Bearer ${token}`);
    headers.delete("dpop");
  }
  return { ...init, headers };
}
