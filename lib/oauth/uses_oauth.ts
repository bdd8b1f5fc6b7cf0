/**
 * Which server entries use OAuth: a leaf, so that what only needs to know (the permission
 * plan, `patchbay permissions`) loads no OAuth machinery and no SDK.
 *
 * @module
 */

import type { HttpServerConfig, OAuthSettings, ServerConfig } from "../config/types.ts";

/** An HTTP server entry with `"auth": {"method": "oauth"}`. */
export type OAuthServerConfig = HttpServerConfig & { auth: OAuthSettings };

/** Whether `server` uses OAuth. */
export function usesOAuth(server: ServerConfig): server is OAuthServerConfig {
  return server.transport !== "stdio" && server.auth?.method === "oauth";
}
