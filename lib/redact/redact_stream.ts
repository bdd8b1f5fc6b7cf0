/**
 * Masking text that arrives in pieces (a trace of a stream, a server's output read in
 * chunks): a secret split between two pieces is masked as if it had come whole.
 *
 * @module
 */

import type { Redactor } from "./redact.ts";

/**
 * Holds back the end of each piece while it could be the start of a secret, and masks
 * the rest with `redactor`. {@linkcode end} gives what is held when the stream ends.
 */
export class RedactingStream {
  readonly #redactor: Redactor;
  readonly #mask: (text: string) => string;
  #held = "";

  /**
   * @param options.knownOnly mask only the registered secrets, not credential shapes
   * (`Redactor.redactKnown`). @default false
   */
  constructor(redactor: Redactor, options: { knownOnly?: boolean } = {}) {
    this.#redactor = redactor;
    this.#mask = options.knownOnly
      ? (text) => redactor.redactKnown(text)
      : (text) => redactor.redact(text);
  }

  /** The text that can be passed on now, masked. */
  push(piece: string): string {
    const text = this.#held + piece;
    const keep = heldLength(text, this.#redactor.forms);
    this.#held = text.slice(text.length - keep);
    return this.#mask(text.slice(0, text.length - keep));
  }

  /** Whatever was held back, masked (the stream ended). */
  end(): string {
    const rest = this.#mask(this.#held);
    this.#held = "";
    return rest;
  }
}

/** Length of the longest end of `text` that begins some secret form without ending it. */
function heldLength(text: string, forms: readonly string[]): number {
  let longest = 0;
  for (const form of forms) {
    const max = Math.min(form.length - 1, text.length);
    for (let n = max; n > longest; n--) {
      if (text.endsWith(form.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
