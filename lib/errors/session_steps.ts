/**
 * The remedies of names and arguments a session cannot resolve (`lib/session/resolve.ts`):
 * a tool, prompt or resource more than one server offers, prompt arguments not written
 * name=value, tool arguments that are not a JSON object. Part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within
 * the size of a file. The slash command (`/prompt`, `/resource`) and the scripting command
 * (`patchbay prompt`, `patchbay read`) read the same words but for the command each names.
 *
 * @module
 */

import type { Remedy } from "./failure_table.ts";

/** Steps of the remedies of names and arguments a session cannot resolve. */
export const SESSION_STEPS = {
  /** A name several servers offer: each `server.name` that matched. */
  nameServer: (...names: readonly string[]): string => `name the server: ${names.join(" or ")}`,
  /** Prompt arguments that are not all name=value. */
  promptArguments: {
    repl: 'write e.g. /prompt greeting name="Ada Lovelace" style=formal',
    script: 'write e.g. patchbay prompt greeting name="Ada Lovelace" style=formal',
  } satisfies Remedy,
  /** Tool arguments that are not JSON. */
  jsonObject: 'write them as a JSON object, e.g. {"message": "hi"}',
  /** Tool arguments that are JSON but not an object. */
  braces: 'wrap them in braces, e.g. {"message": "hi"}',
  /** A resource URI no single server can be told to have. */
  nameResourceServer: {
    repl: "name the server too: /resource <server>:<uri>",
    script: "name the server too: patchbay read <server>:<uri>",
  } satisfies Remedy,
} as const;
