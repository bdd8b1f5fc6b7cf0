/**
 * Identifiers of sessions and messages: random, lowercase, unambiguous (Crockford's base32
 * alphabet), so a person can type a short prefix of a session id as with git.
 *
 * @module
 */

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** 12 characters: 60 random bits, enough that two sessions never collide. */
const SESSION_ID_LENGTH = 12;
/** 16 characters: 80 random bits; message ids only need to be unique within a session. */
const MESSAGE_ID_LENGTH = 16;

/**
 * What a session id may look like. Checked before an id names a file or a key, so a
 * typed id can never reach outside the store (`../`, `*`, `{`).
 */
const SESSION_ID = /^[0-9a-z]{1,64}$/;

function randomId(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let id = "";
  for (const byte of bytes) id += ALPHABET[byte & 31];
  return id;
}

/** A new session id, e.g. `k3f9x2m7q1ab`. */
export function newSessionId(): string {
  return randomId(SESSION_ID_LENGTH);
}

/** A new message id. */
export function newMessageId(): string {
  return randomId(MESSAGE_ID_LENGTH);
}

/** Whether `text` has the shape of a session id (or a prefix of one). */
export function isSessionId(text: string): boolean {
  return SESSION_ID.test(text);
}
