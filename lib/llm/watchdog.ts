/**
 * {@linkcode Watchdog}: a stall timer for a model request, reset by every sign of life
 * (the headers, each chunk of the stream), so that a slow but live answer goes on and a
 * silent one ends after the configured timeout.
 *
 * @module
 */

import { setTimer } from "../async/timers.ts";

/** Fires once when `reset` has not been called for `ms`. */
export class Watchdog {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ms: number;
  #onFire: () => void;
  fired = false;

  constructor(ms: number, onFire: () => void) {
    this.#ms = ms;
    this.#onFire = onFire;
    this.reset();
  }

  reset(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimer(() => {
      this.fired = true;
      this.#onFire();
    }, this.#ms);
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
