/**
 * The stable identifiers every typed error carries (`lib/errors.ts`) and the failure table
 * names (`lib/failure_table.ts`). A leaf, so the table and the errors share it without an
 * import cycle.
 *
 * @module
 */

/** Stable identifiers for `--json` output and tests; never shown as prose. */
export type ErrorCode =
  | "server_connect_failed"
  | "server_unavailable"
  | "connection_closed"
  | "server_request_failed"
  | "invalid_api_key"
  | "authentication_failed"
  | "oauth_failed"
  | "config_syntax"
  | "config_invalid"
  | "config_not_found"
  | "tool_failed"
  | "tool_timeout"
  | "tool_declined"
  | "permission_denied"
  | "deno_permission"
  | "store_unreachable"
  | "store_failed"
  | "session_not_found"
  | "rate_limited"
  | "timeout"
  | "network"
  | "usage"
  | "cancelled"
  | "limit_reached"
  | "provider_error"
  | "sampling_rejected"
  | "skill_refused"
  | "skill_not_found"
  | "task_unknown"
  | "task_not_found"
  | "hook_failed"
  | "hook_blocked"
  // Secrets from helpers and the keychain (docs/secrets.md).
  | "secret_helper_failed"
  | "keychain_failed"
  | "policy_refused"
  | "policy_invalid"
  | "internal";
