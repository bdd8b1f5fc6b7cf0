/**
 * The one place patchbay waits (`lib/async/`): each helper's meaning at the edges — an
 * abort, a bound that runs out — since the callers that used to carry their own copies
 * differed exactly there (one `sleep` rejected on abort, another resolved; one `withTimeout`
 * rejected, another resolved `undefined`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { abortable } from "../../lib/async/abortable.ts";
import { deadline, valueWithin } from "../../lib/async/deadline.ts";
import { delay } from "../../lib/async/delay.ts";

/** A promise that never settles: the bound, not the work, must end each wait below. */
const never = () => new Promise<never>(() => {});

Deno.test("delay resolves after its time and rejects with the signal's reason on abort", async () => {
  await delay(1);
  const controller = new AbortController();
  const waiting = delay(60_000, { signal: controller.signal });
  const reason = new Error("stopped by the person");
  controller.abort(reason);
  await assert.rejects(waiting, (error) => error === reason);
  await assert.rejects(delay(1, { signal: AbortSignal.abort(reason) }), (e) => e === reason);
});

Deno.test("abortable ends the wait, not the work: the signal's reason, or the one given", async () => {
  assert.equal(await abortable(Promise.resolve("done"), undefined), "done");
  const controller = new AbortController();
  const waiting = abortable(never(), controller.signal);
  controller.abort(new Error("turn cancelled"));
  await assert.rejects(waiting, /turn cancelled/);
  const named = abortable(never(), AbortSignal.abort(), () => new Error("waiting for a login"));
  await assert.rejects(named, /waiting for a login/);
  assert.equal(await abortable(Promise.resolve(7), new AbortController().signal), 7);
});

Deno.test("deadline rejects with its error once the bound passes; valueWithin answers undefined", async () => {
  await assert.rejects(deadline(never(), 5, () => new Error("no answer in 5 ms")), /5 ms/);
  await assert.rejects(deadline(never(), 5), /no answer within 0.005 s/);
  assert.equal(await deadline(Promise.resolve("on time"), 60_000), "on time");
  assert.equal(await valueWithin(never(), 5), undefined);
  assert.equal(await valueWithin(Promise.resolve("on time"), 60_000), "on time");
});
