/**
 * Newline framing of a byte stream with a cap on the length of one line: the framing of
 * MCP over stdio, where every JSON-RPC message is one line.
 *
 * @module
 */

/** A line grew past the cap before its newline arrived. */
export class LineTooLongError extends Error {
  readonly limit: number;
  readonly seen: number;
  constructor(limit: number, seen: number) {
    super(`a message of more than ${limit} bytes (${seen} bytes without a newline so far)`);
    this.name = "LineTooLongError";
    this.limit = limit;
    this.seen = seen;
  }
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits chunks into lines (without `\n`, a trailing `\r` removed). Bytes after the last
 * newline wait for the next chunk; a pending line longer than `maxLineBytes` throws
 * {@linkcode LineTooLongError} as soon as it is seen, so memory stays bounded.
 */
export class LineSplitter {
  readonly maxLineBytes: number;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Bytes waiting for their newline. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The complete lines in `chunk` (together with what was pending). */
  push(chunk: Uint8Array): Uint8Array[] {
    const lines: Uint8Array[] = [];
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    while (newline >= 0) {
      const piece = chunk.subarray(start, newline);
      const length = this.#pendingBytes + piece.length;
      if (length > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes, length);
      lines.push(trimCarriageReturn(this.#takePending(piece)));
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      const rest = chunk.slice(start);
      this.#pending.push(rest);
      this.#pendingBytes += rest.length;
      if (this.#pendingBytes > this.maxLineBytes) {
        throw new LineTooLongError(this.maxLineBytes, this.#pendingBytes);
      }
    }
    return lines;
  }

  #takePending(last: Uint8Array): Uint8Array {
    if (this.#pending.length === 0) return last;
    const line = new Uint8Array(this.#pendingBytes + last.length);
    let offset = 0;
    for (const part of this.#pending) {
      line.set(part, offset);
      offset += part.length;
    }
    line.set(last, offset);
    this.#pending = [];
    this.#pendingBytes = 0;
    return line;
  }
}

function trimCarriageReturn(line: Uint8Array): Uint8Array {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN
    ? line.subarray(0, line.length - 1)
    : line;
}
