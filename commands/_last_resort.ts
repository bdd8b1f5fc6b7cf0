/**
 * The last resort behind the command boundary: an error nothing caught (a promise nobody
 * awaited, an exception thrown in a callback, a failure of the parser itself) is shown the
 * way the boundary shows every error, with its cause and remedy, instead of Deno's stack
 * trace. A permission the plan lacks then reads `Permission denied: … --allow-env=X was not
 * granted` with the flag to add, wherever it was refused.
 *
 * @module
 */

import { runCommand } from "./_boundary.ts";
import { EXIT } from "../lib/exit_codes.ts";

/**
 * Shows `error` as the boundary does (stderr, logged) and returns the exit code it maps to.
 */
export function reportEscaped(error: unknown): Promise<number> {
  return runCommand(() => Promise.reject(error));
}

let installed = false;

/**
 * Catches what escapes every `await` for the rest of the process: the error is reported by
 * {@linkcode reportEscaped} and the process ends with its exit code, as a command that
 * failed would. Installing twice installs once.
 */
export function installLastResort(): void {
  if (installed) return;
  installed = true;
  let ending = false;
  const end = async (error: unknown) => {
    // A second escape while the first is being reported changes nothing: one message.
    if (ending) return;
    ending = true;
    let code: number = EXIT.failure;
    try {
      code = await reportEscaped(error);
    } catch {
      // Reporting failed too (no terminal left to write to): the process still ends.
    }
    Deno.exit(code);
  };
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    void end(event.reason);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    void end(event.error);
  });
}
