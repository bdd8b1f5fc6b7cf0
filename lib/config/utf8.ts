/**
 * Decoding a configuration file as strict UTF-8. A lossy decoder turns bytes that are not
 * UTF-8 (a file saved as Latin-1 or UTF-16, an encoded lone surrogate) into U+FFFD without a
 * word, and a path or token then silently differs from what is in the file; here they are
 * reported with their position instead.
 *
 * @module
 */

import type { SourcePosition } from "../errors.ts";

/** Where and why bytes are not UTF-8. */
export interface Utf8Fault {
  /** Byte offset of the first offending byte. */
  offset: number;
  /** Line and column (in characters) of that byte. */
  position: SourcePosition;
  message: string;
  hint: string;
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `bytes` as text, or the first place where they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { fault: Utf8Fault } {
  try {
    return { text: strict.decode(bytes) };
  } catch {
    // Found below, with its position.
  }
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return {
      fault: {
        offset: 0,
        position: { line: 1, column: 1 },
        message: "the file is UTF-16 text, not UTF-8",
        hint: "save the file as UTF-8 (without a byte-order mark is best)",
      },
    };
  }
  const offset = firstInvalid(bytes);
  const before = strict.decode(bytes.subarray(0, offset));
  const lineStart = before.lastIndexOf("\n") + 1;
  const line = before.split("\n").length;
  const byte = bytes[offset];
  const surrogate = byte === 0xed && bytes[offset + 1] >= 0xa0 && bytes[offset + 1] <= 0xbf;
  return {
    fault: {
      offset,
      position: { line, column: [...before.slice(lineStart)].length + 1 },
      message: surrogate
        ? "an encoded lone surrogate (bytes 0xED 0x" +
          bytes[offset + 1].toString(16).toUpperCase() + " ...) is not valid UTF-8"
        : `byte 0x${hex(byte)} is not valid UTF-8 here`,
      hint: surrogate
        ? "the text was converted from UTF-16 incorrectly (CESU-8); save it again as UTF-8"
        : "save the file as UTF-8; it is probably in another encoding (Latin-1, Windows-1252)",
    },
  };
}

function hex(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, "0");
}

/** Byte offset of the first sequence that is not well-formed UTF-8 (RFC 3629). */
function firstInvalid(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0; // no overlong forms
      if (b === 0xed) high = 0x9f; // no surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f; // nothing above U+10FFFF
    } else return i;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (next === undefined || next < min || next > max) return i;
    }
    i += length;
  }
  return bytes.length;
}
