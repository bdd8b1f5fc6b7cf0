/**
 * An organisation's identity provider for tests of enterprise-managed authorization, on
 * 127.0.0.1 with a random port: RFC 8414 metadata and a token endpoint that does RFC 8693
 * token exchange as SEP-990 profiles it (an ID token in, an ID-JAG out, for the audience
 * and resource asked), checking every parameter and the client's secret. The grants it
 * issues are opaque strings the authorization server fixture is told to accept
 * (`issued`).
 *
 * @module
 */

/** Options of {@linkcode startIdentityProvider}. */
export interface IdentityProviderOptions {
  /** The ID token it accepts as `subject_token`. */
  idToken: string;
  clientId: string;
  /** Required of the client when set (in the body, as the SDK sends it). */
  clientSecret?: string;
  /** Answer every exchange with this OAuth error (HTTP 400). */
  refuse?: { error: string; description: string };
}

/** A running identity provider. */
export interface IdentityProvider {
  issuer: string;
  /** Every token request's parameters, in order. */
  requests: URLSearchParams[];
  /** The grants (ID-JAGs) it issued. */
  issued: Set<string>;
  options: IdentityProviderOptions;
  [Symbol.asyncDispose](): Promise<void>;
}

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";

/** Starts the identity provider. */
export function startIdentityProvider(options: IdentityProviderOptions): IdentityProvider {
  const requests: URLSearchParams[] = [];
  const issued = new Set<string>();
  const error = (code: string, description = code) =>
    Response.json({ error: code, error_description: description }, { status: 400 });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/.well-known/")) {
      return Response.json({
        issuer: idp.issuer,
        authorization_endpoint: `${idp.issuer}/authorize`,
        token_endpoint: `${idp.issuer}/token`,
        grant_types_supported: [TOKEN_EXCHANGE],
        response_types_supported: ["code"],
      });
    }
    if (url.pathname !== "/token" || req.method !== "POST") {
      return new Response(null, { status: 404 });
    }
    const params = new URLSearchParams(await req.text());
    requests.push(params);
    if (idp.options.refuse) return error(idp.options.refuse.error, idp.options.refuse.description);
    if (params.get("client_id") !== idp.options.clientId) return error("invalid_client");
    if (idp.options.clientSecret && params.get("client_secret") !== idp.options.clientSecret) {
      return error("invalid_client");
    }
    if (params.get("grant_type") !== TOKEN_EXCHANGE) return error("unsupported_grant_type");
    const wrong = [
      params.get("subject_token_type") !== ID_TOKEN && "subject_token_type",
      params.get("requested_token_type") !== ID_JAG && "requested_token_type",
      !params.get("audience") && "audience",
      !params.get("resource") && "resource",
    ].filter(Boolean);
    if (wrong.length > 0) return error("invalid_request", `wrong: ${wrong.join(", ")}`);
    if (params.get("subject_token") !== idp.options.idToken) return error("invalid_grant");
    const grant = `idjag-${crypto.randomUUID()}`;
    issued.add(grant);
    return Response.json({ access_token: grant, issued_token_type: ID_JAG, token_type: "N_A" });
  });
  const idp: IdentityProvider = {
    issuer: `http://127.0.0.1:${server.addr.port}`,
    requests,
    issued,
    options,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
  return idp;
}
