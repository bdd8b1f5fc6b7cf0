/**
 * Bounds on what one server may send, shared by every transport.
 *
 * @module
 */

/**
 * Largest message a server may send: a stdio line, an HTTP response body, or the data of
 * one event of an event stream (counted in characters there). A larger one closes that
 * server's connection with this as the cause; other servers carry on.
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** A message grew past {@linkcode MAX_MESSAGE_BYTES} before it ended. */
export class MessageTooLargeError extends Error {
  readonly limit: number;
  readonly seen: number;
  constructor(limit: number, seen: number, where: string) {
    super(
      `${where} sent a message of more than ${megabytes(limit)} (${seen} bytes so far); ` +
        "patchbay's cap for one message",
    );
    this.name = "MessageTooLargeError";
    this.limit = limit;
    this.seen = seen;
  }
}

/** `10485760` → "10 MB". */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 / 1024)} MB`;
}
