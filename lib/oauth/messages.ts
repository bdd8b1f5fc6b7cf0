/**
 * OAuth events and stored logins as the sentences a person reads. Formatting only: the
 * command layer and the REPL decide where the text goes.
 *
 * @module
 */

import type { OAuthGrant, OAuthSettings } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { OAuthEvent } from "./broker.ts";
import type { ServerCredentials } from "./token_store.ts";
import type { FailureWords } from "./callback.ts";
import { PatchbayError, remedyFor } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Surface } from "../errors/failure_table.ts";
import type { Redactor } from "../redact/redact.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";

const REASONS = {
  login: "to log in",
  reauthorize: "again: the server no longer accepts the stored login",
  step_up: "again: the server needs more permissions for this request",
} as const;

/** The lines to show for an event, or `undefined` for events worth only the log. */
export function describeOAuthEvent(event: OAuthEvent): string | undefined {
  switch (event.type) {
    case "queued":
      return `Waiting for the login to '${event.behind}' to finish before logging in to ` +
        `'${event.server}'…`;
    case "authorization_started":
      return `Authorize patchbay for '${event.server}' in your browser ${REASONS[event.reason]}` +
        `${event.scope ? ` (scope: ${event.scope})` : ""}.\n` +
        `If no browser opens, open this URL by hand:\n  ${event.url}`;
    case "browser_opened":
      return undefined;
    case "browser_failed":
      return `No browser opened (${event.reason}). Open the URL above by hand; patchbay is ` +
        "waiting for the login.";
    case "callback_rejected":
      return `Ignored a login response for '${event.server}': ${event.reason}.`;
    case "authorized":
      return event.how === "browser"
        ? `Logged in to '${event.server}'${event.scope ? ` (scope: ${event.scope})` : ""}.`
        : undefined;
    case "login_kept_locally":
      return `Could not save the login to '${event.server}' in ${event.store} ` +
        `(${event.reason}). It is kept in ${event.path} (readable by you only) and moves ` +
        "to the store the next time patchbay reaches it.";
    case "logins_read_locally":
      return `Could not read the OAuth logins in ${event.store} (${event.reason}). Until it ` +
        `answers, only the logins kept locally in ${event.dir} are available.`;
  }
}

/** How a stored login stands at `now`. */
export type LoginState =
  | "logged_in"
  | "expired_refreshable"
  | "expired"
  | "not_logged_in"
  | "url_changed";

/** A stored login, summarised without any secret. */
export interface LoginSummary {
  server: string;
  /** The server is in the configuration (and uses OAuth). */
  configured: boolean;
  state: LoginState;
  url?: string;
  issuer?: string;
  /** ISO time the access token expires, when known. */
  expiresAt?: string;
  refreshable: boolean;
  scopes: string[];
  clientId?: string;
  /**
   * How the configuration obtains tokens (absent for a login whose server is no longer
   * configured): `authorization_code` (browser), `client_credentials`, `jwt_bearer` or
   * `token_exchange`.
   */
  grant?: OAuthGrant;
  /** How the client authenticates at the token endpoint, as configured. */
  clientAuthentication?: "client_secret_basic" | "private_key_jwt" | "none";
  /** The configuration asks for DPoP-bound tokens. */
  dpop?: boolean;
  /** `Bearer` or `DPoP`: how the stored token is presented. */
  tokenType?: string;
}

/** What a summary says about the configured grant, e.g. `client credentials (private_key_jwt), DPoP`. */
export function describeGrant(
  summary: Pick<LoginSummary, "grant" | "clientAuthentication" | "dpop">,
): string {
  if (!summary.grant) return "-";
  const grant = summary.grant === "client_credentials"
    ? `client credentials (${summary.clientAuthentication ?? "none"})`
    : summary.grant === "jwt_bearer"
    ? "workload JWT (jwt_bearer)"
    : summary.grant === "token_exchange"
    ? "identity provider (token_exchange)"
    : "browser";
  return summary.dpop ? `${grant}, DPoP` : grant;
}

/** The grant-related fields of a summary, from the entry's `auth`. */
export function grantOf(
  settings: OAuthSettings | undefined,
): Pick<LoginSummary, "grant" | "clientAuthentication" | "dpop"> {
  if (!settings) return {};
  return {
    grant: settings.grant ?? DEFAULTS.oauth.grant,
    clientAuthentication: settings.privateKey !== undefined
      ? "private_key_jwt"
      : settings.clientSecret !== undefined
      ? "client_secret_basic"
      : "none",
    dpop: settings.dpop ?? DEFAULTS.oauth.dpop,
  };
}

/** Summarises a stored document (never a token value). */
export function summarizeLogin(
  server: string,
  configuredUrl: string | undefined,
  stored: ServerCredentials | undefined,
  now: number,
  settings?: OAuthSettings,
): LoginSummary {
  const base = {
    server,
    configured: configuredUrl !== undefined,
    scopes: [],
    refreshable: false,
    ...grantOf(settings),
  };
  if (!stored) return { ...base, url: configuredUrl, state: "not_logged_in" };
  const issuer = stored.issuer;
  const entry = issuer ? stored.issuers[issuer] : undefined;
  const tokens = entry?.tokens;
  const summary: LoginSummary = {
    ...base,
    url: stored.serverUrl,
    issuer,
    expiresAt: entry?.expiresAt === undefined ? undefined : new Date(entry.expiresAt).toISOString(),
    refreshable: tokens?.refresh_token !== undefined,
    scopes: tokens?.scope?.split(" ").filter(Boolean) ?? [],
    clientId: entry?.client?.client_id,
    tokenType: tokens?.token_type,
    state: "not_logged_in",
  };
  if (configuredUrl !== undefined && new URL(configuredUrl).href !== stored.serverUrl) {
    return { ...summary, state: "url_changed" };
  }
  if (!tokens) return summary;
  const expired = entry?.expiresAt !== undefined && entry.expiresAt <= now;
  return {
    ...summary,
    state: !expired ? "logged_in" : summary.refreshable ? "expired_refreshable" : "expired",
  };
}

/** `in 58 min`, `3 h ago`, for expiry times. */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  const magnitude = Math.abs(seconds);
  const text = magnitude < 90
    ? `${magnitude} s`
    : magnitude < 90 * 60
    ? `${Math.round(magnitude / 60)} min`
    : magnitude < 36 * 3600
    ? `${Math.round(magnitude / 3600)} h`
    : `${Math.round(magnitude / 86400)} days`;
  return seconds >= 0 ? `in ${text}` : `${text} ago`;
}

/**
 * A failed login as the terminal shows it (message, cause, and the remedy of `surface`),
 * for the browser's callback page: secrets masked and terminal escapes removed as on the
 * terminal; the page escapes it for HTML.
 */
export function loginFailureWords(
  error: unknown,
  surface: Surface,
  redactor?: Redactor,
): FailureWords {
  const clean = (text: string) => {
    const plain = stripTerminalEscapes(text);
    return redactor ? redactor.redact(plain) : plain;
  };
  if (error instanceof PatchbayError) {
    return {
      message: clean(error.message),
      cause: clean(error.reason),
      remedy: clean(remedyFor(error, surface)),
    };
  }
  return {
    message: "OAuth login failed",
    cause: clean(error instanceof Error ? error.message : String(error)),
    remedy: OAUTH_STEPS.seeTerminal,
  };
}
