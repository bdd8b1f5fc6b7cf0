/**
 * Every failure a user can meet, as a typed error carrying its row's message (the rows,
 * with their causes and each surface's remedy, are in `lib/failure_table.ts`; the user's
 * page is docs/troubleshooting.md), the probable cause and the remedy.
 *
 * Modules throw these; only the command layer (`commands/_boundary.ts`) turns them
 * into text and exit codes.
 *
 * The one import path for them all: the classes live by area in `lib/errors/` (`base.ts`,
 * `config.ts`, `hooks.ts`, `model.ts`, `oauth.ts`, `policy.ts`, `run.ts`, `secrets.ts`,
 * `server.ts`, `skills.ts`, `store.ts`) and are re-exported here.
 *
 * @module
 */

export type { Remedy, RemedyText, Surface } from "./errors/failure_table.ts";
export { EXIT } from "./exit_codes.ts";
export type { ErrorCode } from "./errors/error_codes.ts";

export * from "./errors/base.ts";
export * from "./errors/config.ts";
export * from "./errors/hooks.ts";
export * from "./errors/model.ts";
export * from "./errors/oauth.ts";
export * from "./errors/run.ts";
export * from "./errors/server.ts";
export * from "./errors/store.ts";
export * from "./errors/skills.ts";
export * from "./errors/secrets.ts";
export * from "./errors/policy.ts";
