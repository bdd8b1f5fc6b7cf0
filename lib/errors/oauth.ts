/**
 * The errors of OAuth and bearer headers: a flow that could not complete, a server without
 * OAuth, a refused bearer token, an endpoint patchbay refuses, a login this run may not start.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { type ErrorDetails, PatchbayError } from "./base.ts";
import { ServerConnectError } from "./server.ts";
import { CONNECTION_STEPS } from "./connection_steps.ts";

/** The OAuth flow for an MCP server could not complete. */
export class OAuthFailedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: Omit<ErrorDetails, "remedy"> & { remedy?: RemedyText }) {
    super("oauth_failed", fill(ROWS.oauth.messages[0], { server }), {
      ...info,
      remedy: info.remedy ?? ROWS.oauth.remedy,
    });
    this.server = server;
  }
}

/**
 * `auth.method: oauth` on a server that does not support OAuth (docs/troubleshooting.md): it
 * publishes neither protected-resource nor authorization-server metadata. Raised by the
 * OAuth provider and recognised by the connection diagnosis, so both report it alike.
 */
export class OAuthUnsupportedError extends ServerConnectError {
  constructor(server: string, reason: string, cause?: unknown) {
    super(server, { reason, remedy: ROWS.oauth_unsupported.remedy, cause });
  }
}

/** The server refused the bearer token sent with `headers.Authorization`. */
export class BearerRejectedError extends ServerConnectError {
  /** The HTTP status the server answered with (401 or 403). */
  readonly status: number;
  constructor(server: string, status: number, reason: string, remedy: RemedyText) {
    super(server, { reason, remedy });
    this.status = status;
  }
}

/**
 * An address a server's OAuth metadata named (an endpoint, a metadata URL, a redirect)
 * that patchbay refuses to request or open: a file: URL, plain http off this machine, or
 * this machine or its network named by a server that is not on it
 * (lib/oauth/endpoint_policy.ts). Raised before the request, and before any browser opens.
 */
export class OAuthEndpointRefusedError extends OAuthFailedError {
  /** What the address is: `token_endpoint`, `resource_metadata`, `a redirect`, … */
  readonly endpoint: string;
  /** The address as it was given. */
  readonly url: string;
  /** The addresses its host resolved to (the literal for an IP address; none if unresolved). */
  readonly addresses: readonly string[];
  constructor(
    server: string,
    info:
      & { endpoint: string; url: string; addresses: readonly string[] }
      & Omit<
        ErrorDetails,
        "exitCode"
      >,
  ) {
    super(server, info);
    this.endpoint = info.endpoint;
    this.url = info.url;
    this.addresses = info.addresses;
  }
}

/**
 * An OAuth server needs a browser login, and this run may not start one: `patchbay doctor`
 * checks what a session would meet but never logs in.
 */
export class OAuthLoginRequiredError extends OAuthFailedError {
  constructor(server: string, reason: string) {
    super(server, {
      reason,
      remedy: CONNECTION_STEPS.loginRequired(server),
    });
  }
}
