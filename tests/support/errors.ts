/**
 * `rejection()`: the error a promise rejects with, checked against its class, so a test
 * can assert on its message, cause and remedy (node:assert's `rejects` returns nothing);
 * `capture()` and `captureAny()`: the same without the class check.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { PatchbayError } from "../../lib/errors.ts";

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

/** Awaits `promise`, which must reject; returns what it rejected with, as a patchbay error. */
export async function capture(promise: Promise<unknown>): Promise<PatchbayError> {
  return await captureAny(promise) as PatchbayError;
}

/** Awaits `promise`, which must reject; returns what it rejected with. */
export async function captureAny(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new assert.AssertionError({ message: "expected a rejection" });
}
