/**
 * `rejection()`: the error a promise rejects with, checked against its class, so a test
 * can assert on its message, cause and remedy (node:assert's `rejects` returns nothing).
 *
 * @module
 */

import assert from "node:assert/strict";

/** Awaits `run()`, which must reject with an instance of `type`; returns that error. */
export async function rejection<T extends Error>(
  run: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  type: new (...args: any[]) => T,
): Promise<T> {
  try {
    await run();
  } catch (error) {
    assert.ok(
      error instanceof type,
      `expected ${type.name}, got ${(error as Error)?.constructor?.name}: ${error}`,
    );
    return error;
  }
  assert.fail(`expected a ${type.name}, but it resolved`);
}
