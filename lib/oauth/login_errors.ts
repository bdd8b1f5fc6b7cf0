/**
 * OAuth failures as errors a person can act on: the SDK's error classes, OAuth error
 * responses and network failures become `OAuthFailedError`s with the cause in plain words
 * and a remedy. Values an attacker controls in a mix-up (the `iss` received, the callback's
 * error text) are never repeated.
 *
 * @module
 */

import {
  AuthorizationServerMismatchError,
  InsecureTokenEndpointError,
  IssuerMismatchError,
  OAuthError,
  RegistrationRejectedError,
} from "@modelcontextprotocol/client";
import { type ErrorDetails, messageOf, OAuthFailedError, PatchbayError } from "../errors.ts";
import type { OAuthGrant } from "../config/types.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { valueAt } from "../text/json_path.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import {
  authorizationServerGrant,
  type CarriesRefusedGrant,
  type RefusedGrant,
} from "../deno_permission/refused_grant.ts";
import type { FetchedDocument } from "./guarded_fetch.ts";
import { describeFetchError } from "./challenge_probe.ts";
import { causeChain } from "../cause_chain.ts";
import { perSurface, type RemedyText, STEPS } from "../errors/failure_table.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import { MAX_OAUTH_ANSWER_BYTES, MAX_TOKEN_CHARS, OAuthAnswerTooLarge } from "./answer_limits.ts";

/**
 * `OAuth authentication failed` because Deno refused the way to an authorization server
 * the plan does not name (the server moved to it): the error carries the grant, which the
 * boundary that shows it keeps so the launcher can discover that server and restart.
 */
export class AuthorizationServerRefusedError extends OAuthFailedError
  implements CarriesRefusedGrant {
  readonly refusedGrant: RefusedGrant;
  constructor(server: string, info: ErrorDetails, refusedGrant: RefusedGrant) {
    super(server, info);
    this.refusedGrant = refusedGrant;
  }
}

/** Where the failure happened, for the messages. */
export interface FailureContext {
  server: string;
  serverUrl: URL;
  redirectUri: string;
  /** The last OAuth answer received: the document an invalid-metadata error is about. */
  lastDocument?: FetchedDocument;
  /** @default "authorization_code" */
  grant?: OAuthGrant;
  /** How the client authenticates at the token endpoint. @default "none" */
  clientAuthentication?: "private_key_jwt" | "client_secret_basic" | "none";
  /** Where the private key came from (`auth.private_key_file (<path>)`). */
  privateKeySource?: string;
  /** Grants `jwt_bearer` and `token_exchange`: the field the presented JWT came from. */
  assertionField?: string;
}

/** An OAuth answer past its bound: the authorization server and the address named. */
export function oversizedAnswerError(
  server: string,
  oversize: OAuthAnswerTooLarge,
): OAuthFailedError {
  const origin = new URL(oversize.url).origin;
  return new OAuthFailedError(server, {
    reason: `the authorization server at ${origin} answered ${oversize.url} with more than ` +
      `${
        MAX_OAUTH_ANSWER_BYTES / 1024 / 1024
      } MiB (${oversize.bytes} bytes seen); patchbay reads ` +
      "OAuth answers up to that size and stopped",
    remedy: OAUTH_STEPS.answerTooLarge(origin),
    cause: oversize,
  });
}

/**
 * A token longer than `MAX_TOKEN_CHARS`, received from `issuer` (or found stored): refused,
 * since no server would accept it in a header.
 */
export function oversizedTokenError(
  server: string,
  issuer: string,
  token: { field: string; length: number },
  stored = false,
): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: `the authorization server ${issuer} ${stored ? "had issued" : "issued"} an ` +
      `${token.field} of ${token.length} characters, more than the ${MAX_TOKEN_CHARS} ` +
      `patchbay accepts (a token travels in an HTTP header, which servers cap)` +
      (stored ? "; the stored login was discarded" : "; it was not stored"),
    remedy: OAUTH_STEPS.tokenTooLarge(issuer, server),
  });
}

/** Problems of an invalid document named in a message; the rest are counted. */
const ISSUES_SHOWN = 3;

/** Characters of a value seen shown in a message. */
const VALUE_SHOWN_CHARS = 80;

/** Any failure of the SDK's auth code, typed; abort errors and PatchbayErrors pass through. */
export function typedOAuthFailure(error: unknown, context: FailureContext): unknown {
  if (error instanceof PatchbayError) return error;
  if (error instanceof DOMException && error.name === "AbortError") return error;
  const { server } = context;
  const fail = (
    reason: string,
    remedy: RemedyText = perSurface`${
      STEPS.retryLogin(server)
    }; if it keeps failing, ${OAUTH_STEPS.report}`,
  ) => new OAuthFailedError(server, { reason, remedy, cause: error });
  // Deno's sandbox refused a request (an authorization server the plan does not name):
  // the grant and the reason, never Deno's own wording.
  const flag = denoPermissionFlag(error);
  if (flag) {
    const info = {
      reason: `Permission denied: patchbay runs under explicit Deno permissions and ${flag} ` +
        "was not granted",
      remedy: denoPermissionRemedy(flag, { authorizationServer: true }),
      cause: error,
    };
    // The launcher can discover the server and run the command again: the grant travels
    // with the error to where it is shown.
    const refused = authorizationServerGrant(flag, server);
    return refused
      ? new AuthorizationServerRefusedError(server, info, refused)
      : new OAuthFailedError(server, info);
  }
  // Found wherever the SDK wrapped it (a body read inside its own error).
  const oversize = causeChain(error).find((e) => e instanceof OAuthAnswerTooLarge);
  if (oversize instanceof OAuthAnswerTooLarge) return oversizedAnswerError(server, oversize);
  if (error instanceof IssuerMismatchError) {
    return error.kind === "metadata"
      ? fail(
        `the authorization server's metadata names issuer ${JSON.stringify(error.received)}, ` +
          `not ${JSON.stringify(error.expected)} where it was fetched (RFC 8414 §3.3); ` +
          "patchbay refuses metadata whose issuer does not match",
        OAUTH_STEPS.issuerMismatch,
      )
      : fail(
        "the authorization response did not come from the expected authorization server " +
          "(RFC 9207 issuer check failed)",
        OAUTH_STEPS.responseIssuerMismatch,
      );
  }
  if (error instanceof RegistrationRejectedError) {
    return fail(
      `dynamic client registration was refused (HTTP ${error.status}: ` +
        `${error.body.slice(0, 200)})`,
      OAUTH_STEPS.registerByHand(context.redirectUri),
    );
  }
  if (error instanceof InsecureTokenEndpointError) {
    return fail(
      `the token_endpoint ${error.tokenEndpoint} is not https; patchbay does not send ` +
        "credentials over plain HTTP (except to localhost, 127.0.0.1 or [::1])",
      OAUTH_STEPS.insecureTokenEndpoint,
    );
  }
  if (error instanceof AuthorizationServerMismatchError) {
    return fail(
      "the server now names a different authorization server than the one the stored " +
        "credentials belong to",
      OAUTH_STEPS.logoutThenLogin(server),
    );
  }
  if (error instanceof OAuthError) {
    const remedy = error.code === "invalid_client" || error.code === "unauthorized_client"
      ? clientRemedy(context)
      : error.code === "invalid_scope"
      ? OAUTH_STEPS.invalidScope
      : error.code === "unsupported_grant_type"
      ? grantRemedy(context)
      : error.code === "invalid_grant" && context.assertionField
      ? assertionRemedy(context.assertionField, context.grant)
      : error.code === "use_dpop_nonce"
      ? OAUTH_STEPS.dpopNonceAgain
      : error.code === "invalid_dpop_proof"
      ? OAUTH_STEPS.invalidDpopProof
      : undefined;
    return fail(`the authorization server answered ${error.code}: ${error.message}`, remedy);
  }
  if (error instanceof TypeError) {
    return fail(
      `the authorization server could not be reached: ${describeFetchError(error)}`,
      OAUTH_STEPS.unreachable,
    );
  }
  const message = messageOf(error);
  const issues = zodIssues(error);
  if (error instanceof SyntaxError || issues) {
    // A catch-all web page (or broken JSON) where OAuth metadata should be, or a document
    // that is JSON but not what the specification says.
    return fail(
      invalidDocumentReason(context, issues, message),
      OAUTH_STEPS.invalidMetadata,
    );
  }
  if (/^Protected resource .* does not match expected/.test(message)) {
    return fail(
      `${message}: the server's protected-resource metadata (RFC 9728) is for another ` +
        "address, so patchbay refuses to request tokens for it",
      OAUTH_STEPS.resourceMismatch,
    );
  }
  return fail(message);
}

/** What to check when the authorization server does not accept the client. */
function clientRemedy(context: FailureContext): string {
  const entry = `in the entry for '${context.server}'`;
  switch (context.clientAuthentication) {
    case "private_key_jwt":
      return `check auth.client_id and the key in ${
        context.privateKeySource ?? "auth.private_key"
      } ${entry}: the authorization server must have this key's public half registered ` +
        "for the client, and auth.private_key_alg must be an algorithm it accepts";
    case "client_secret_basic":
      return `check auth.client_id and auth.client_secret ${entry} (a secret in .env: ` +
        "check the variable there); a secret may also have expired or been rotated";
    default:
      return `check auth.client_id ${entry}`;
  }
}

/** What to check when the authorization server refuses the JWT patchbay presented. */
function assertionRemedy(field: string, grant: OAuthGrant | undefined): string {
  return grant === "token_exchange"
    ? `the identity provider's grant was refused: check with your administrator that the ` +
      "server's authorization server trusts your identity provider for this client " +
      `(auth.client_id); if your ID token (${field}) expired, sign in again`
    : `check the JWT ${field} gives: it must be current (not expired), its "aud" must be ` +
      "the authorization server's issuer, and the authorization server must trust its issuer";
}

/** What to do when the authorization server refuses the grant patchbay asked for. */
function grantRemedy(context: FailureContext): string {
  if (context.grant === "jwt_bearer" || context.grant === "token_exchange") {
    return "the authorization server does not accept the JWT bearer grant (RFC 7523) for " +
      "this client: ask its operator to trust " +
      (context.grant === "jwt_bearer"
        ? "your workload's identity provider"
        : "your organisation's identity provider (enterprise-managed authorization)") +
      ', or remove "grant" from the entry\'s "auth" to log in in the browser';
  }
  return context.grant === "client_credentials"
    ? "the authorization server does not allow the client_credentials grant for this " +
      'client: enable it for the client at the service, or remove "grant" from the ' +
      'entry\'s "auth" to log in in the browser'
    : "the authorization server does not accept browser logins (authorization_code) for " +
      `this client; if it was issued client credentials, set "grant": "client_credentials"`;
}

/** A server that keeps asking for a fresh DPoP nonce after patchbay sent the one it gave. */
export function dpopNonceLoopError(server: string, where: string): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: `${where} answered use_dpop_nonce again after patchbay retried once with the ` +
      "nonce it had just given (RFC 9449 §9): a nonce loop, so patchbay stops here",
    remedy: OAUTH_STEPS.dpopNonceLoop,
  });
}

/** One problem zod found in a document. */
interface ZodIssue {
  path: ReadonlyArray<PropertyKey>;
  message: string;
}

/** The issues of a zod validation error (the SDK's schemas), or `undefined`. */
function zodIssues(error: unknown): ZodIssue[] | undefined {
  if (!(error instanceof Error) || !error.name.endsWith("ZodError")) return undefined;
  const issues = (error as { issues?: unknown }).issues;
  return Array.isArray(issues) ? issues as ZodIssue[] : [];
}

/**
 * `the OAuth metadata at <url> is not valid: token_endpoint is 42 (Invalid input: expected
 * string, received number)`: the document, each field wrong in it, the value seen there.
 */
function invalidDocumentReason(
  context: FailureContext,
  issues: ZodIssue[] | undefined,
  message: string,
): string {
  const last = context.lastDocument;
  const what = !last
    ? `the OAuth metadata published for ${context.serverUrl.origin}`
    : last.method === "GET"
    ? `the OAuth metadata at ${last.url}`
    : `the answer of ${last.url} (${last.method}, HTTP ${last.status})`;
  if (!issues) {
    return `${what} is not JSON (${message.split("\n")[0].slice(0, 160)})`;
  }
  const problems = issues.slice(0, ISSUES_SHOWN).map((issue) => {
    const field = issue.path.map(String).join(".") || "the document";
    if (last?.json === undefined) return `${field}: ${issue.message}`;
    const value = valueAt(last.json, issue.path);
    const seen = value === undefined ? "is missing" : `is ${showValue(value)}`;
    return `${field} ${seen} (${issue.message})`;
  });
  const more = issues.length > ISSUES_SHOWN ? `; and ${issues.length - ISSUES_SHOWN} more` : "";
  const kind = last && last.method !== "GET" ? "" : " OAuth metadata";
  return `${what} is not valid${kind}: ${problems.join("; ") || message}${more}`;
}

function showValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > VALUE_SHOWN_CHARS ? `${text.slice(0, VALUE_SHOWN_CHARS)}…` : text;
}

/** A 403 `insufficient_scope` that another login cannot or did not fix. */
export function insufficientScopeError(
  server: string,
  required?: string,
  granted?: string,
): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: `the server requires scope "${required ?? "(unspecified)"}" for this request` +
      (granted !== undefined ? `, but the authorization server granted "${granted}"` : "") +
      " (403 insufficient_scope)",
    remedy: OAUTH_STEPS.insufficientScope,
  });
}

/** A 401 for tokens that were just obtained. */
export function rejectedAfterLoginError(
  server: string,
  challenge: { error?: string; errorDescription?: string },
): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: "the server refused the tokens it was just given (HTTP 401" +
      (challenge.error ? ` ${challenge.error}` : "") +
      (challenge.errorDescription ? `: ${challenge.errorDescription.slice(0, 200)}` : "") +
      ")",
    remedy: OAUTH_STEPS.rejectedAfterLogin(server),
  });
}
