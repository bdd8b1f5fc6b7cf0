/**
 * Binary data inside a tool's structured content: base64 of an image, a sound or a blob
 * sitting in a JSON field (server-filesystem's `read_media_file` returns its image as an
 * image block and again inside `structuredContent`). Left as it is, tens of kilobytes of
 * base64 would be printed as text and sent to the model as text; instead each such value is
 * replaced by a description (the caller words it: `content.ts`), and handed back apart, to
 * be saved like the images of content blocks (and, for a distinct image, offered to a vision
 * model like one).
 *
 * Pure: no I/O.
 *
 * @module
 */

/**
 * A string at least this long, made only of base64 characters, is binary data, not text:
 * about 770 bytes decoded, longer than any identifier or hash a server puts in a field.
 */
export const STRUCTURED_BINARY_MIN_CHARS = 1024;

/** Most values one result's structured content hands back; the rest are only described. */
export const MAX_STRUCTURED_BINARIES = 32;

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[^,;]*)*;base64,/i;
/** Fields that name the type of a binary value beside it. */
const TYPE_FIELDS = ["mimeType", "mime_type", "mediaType", "contentType", "content_type"];

/** One binary value found in structured content. */
export interface StructuredBinary {
  /** Where it was: `content[0].data`. */
  path: string;
  /** From a field beside it (`mimeType`) or its data URL; absent when nothing says. */
  mimeType?: string;
  /** The base64 text (without a data URL's prefix). */
  data: string;
  /** A content block of the same result carries the same data. */
  repeated: boolean;
}

/** Structured content with its binary values replaced, and those values. */
export interface DescribedStructure {
  value: unknown;
  binaries: StructuredBinary[];
}

/**
 * `value` with every binary string replaced by what `describe` says of it; `known` are the
 * base64 texts the result's content blocks already carry (a repeated one is marked so).
 */
export function describeBinaries(
  value: unknown,
  known: ReadonlySet<string>,
  describe: (binary: StructuredBinary) => string,
): DescribedStructure {
  const binaries: StructuredBinary[] = [];
  const walk = (node: unknown, path: string, siblings?: Record<string, unknown>): unknown => {
    if (typeof node === "string") {
      const found = binaryOf(node, siblings);
      if (!found) return node;
      const binary = { path, ...found, repeated: known.has(found.data) };
      if (binaries.length < MAX_STRUCTURED_BINARIES) binaries.push(binary);
      return describe(binary);
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, `${path}[${i}]`));
    if (node !== null && typeof node === "object") {
      const record = node as Record<string, unknown>;
      return Object.fromEntries(
        Object.entries(record).map(([key, item]) => [
          key,
          walk(item, path ? `${path}.${key}` : key, record),
        ]),
      );
    }
    return node;
  };
  return { value: walk(value, ""), binaries };
}

function binaryOf(
  text: string,
  siblings: Record<string, unknown> | undefined,
): Omit<StructuredBinary, "path" | "repeated"> | undefined {
  if (text.length < STRUCTURED_BINARY_MIN_CHARS) return undefined;
  const url = DATA_URL.exec(text.slice(0, 200));
  const data = url ? text.slice(url[0].length) : text;
  // Base64 may be wrapped in lines; a space makes it text ("word word …" is all letters).
  if (!BASE64.test(data.replace(/\r?\n/g, ""))) return undefined;
  const named = TYPE_FIELDS.map((field) => siblings?.[field]).find((v) => typeof v === "string");
  const mimeType = url?.[1] ?? (named as string | undefined);
  return { ...(mimeType ? { mimeType } : {}), data };
}
