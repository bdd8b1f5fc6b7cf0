/**
 * MCP tool results as the text a model (and the memory store) receives.
 *
 * Every content type becomes text: text as it is; images and audio as a line naming their
 * type and size (the chat-completions tool message carries text only; images are also
 * handed back apart, in `images`, for a vision model and for the person); resource links as
 * their URI, name and description; embedded resources as their text, or a line for binary
 * ones; structured content as compact JSON unless a text block already carries it, its
 * binary values (base64 of an image, a sound, a blob) replaced by their type and size
 * (`structured_binary.ts`). Images, and the other binary data (handed back in `binaries`),
 * are kept apart to be saved for the person. The
 * whole is then capped at {@linkcode TOOL_OUTPUT_MAX_CHARS}, keeping the head and the tail
 * (errors and summaries tend to sit at the end) and saying how much was cut.
 *
 * Pure: no I/O, so that it can be tested in isolation.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { describeBinaries, type StructuredBinary } from "./structured_binary.ts";

/**
 * Most characters of one tool result passed to the model and stored. About 5,000 tokens:
 * enough for a file or a listing, small enough that a runaway tool cannot fill the
 * context window (or the memory store) by itself.
 */
export const TOOL_OUTPUT_MAX_CHARS = 20_000;

/** Share of the cap kept from the end of an over-long result. */
export const TOOL_OUTPUT_TAIL_SHARE = 0.25;

/** A tool result as text. */
export interface ConvertedToolResult {
  /** What the model and the memory store receive. */
  text: string;
  /** The server flagged the result as an error (`isError`). */
  isError: boolean;
  /** Characters removed to respect the cap (0: nothing was cut). */
  omittedChars: number;
  /** Images, audio clips and binary resources that were described instead of passed on. */
  mediaItems: number;
  /**
   * The images of the result (image blocks, embedded image resources, then distinct images
   * inside structured content), in order.
   */
  images: ResultImage[];
  /**
   * The other binary data (audio blocks, binary resources, binary values of structured
   * content), each once: described in `text`, never sent to the model, saved for the person.
   */
  binaries: ResultImage[];
}

/** An image a server returned. */
export interface ResultImage {
  mimeType: string;
  /** base64, as the server sent it. */
  data: string;
  /** Decoded size. */
  bytes: number;
  /** The embedded resource's URI, when it came as one. */
  uri?: string;
}

type ContentBlock = CallToolResult["content"][number];

/** Converts and caps a tool result. */
export function convertToolResult(
  result: CallToolResult,
  maxChars: number = TOOL_OUTPUT_MAX_CHARS,
): ConvertedToolResult {
  const parts: string[] = [];
  let mediaItems = 0;
  const images: ResultImage[] = [];
  const binaries: ResultImage[] = [];
  const blocks: ContentBlock[] = Array.isArray(result.content) ? result.content : [];
  for (const block of blocks) {
    const image = imageOf(block);
    if (image) images.push(image);
    const binary = binaryOf(block);
    if (binary) binaries.push(binary);
    const converted = convertBlock(block);
    if (converted.media) mediaItems++;
    parts.push(converted.text);
  }
  const structured = result.structuredContent;
  if (structured !== undefined && !repeatsStructured(blocks, structured)) {
    const known = new Set([...images, ...binaries].map((item) => item.data));
    const described = describeBinaries(structured, known, describeStructuredBinary);
    for (const found of described.binaries) {
      if (known.has(found.data)) continue;
      known.add(found.data);
      mediaItems++;
      const item = {
        mimeType: found.mimeType ?? "application/octet-stream",
        data: found.data,
        bytes: base64Bytes(found.data),
      };
      (item.mimeType.toLowerCase().startsWith("image/") ? images : binaries).push(item);
    }
    parts.push(`Structured content (JSON): ${safeJson(described.value)}`);
  }
  const whole = parts.length > 0 ? parts.join("\n") : "(the tool returned no content)";
  const capped = capText(whole, maxChars);
  return {
    text: capped.text,
    isError: result.isError === true,
    omittedChars: capped.omittedChars,
    mediaItems,
    images,
    binaries,
  };
}

/** What stands in a structured value for its base64: `[image/png, 64.9 kB of base64, …]`. */
function describeStructuredBinary(binary: StructuredBinary): string {
  return `[${binary.mimeType ?? "binary data"}, ${formatBytes(base64Bytes(binary.data))} of ` +
    `base64 ${binary.repeated ? "repeating a content block above" : "left out of the text"}]`;
}

/** The binary data a block carries other than an image: audio, a binary resource. */
function binaryOf(block: ContentBlock): ResultImage | undefined {
  if (block.type === "audio" && typeof block.data === "string") {
    return { mimeType: block.mimeType, data: block.data, bytes: base64Bytes(block.data) };
  }
  if (block.type !== "resource") return undefined;
  const resource = block.resource;
  const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
  if (!blob || resource.mimeType?.startsWith("image/")) return undefined;
  return {
    mimeType: resource.mimeType ?? "application/octet-stream",
    data: blob,
    bytes: base64Bytes(blob),
    uri: resource.uri,
  };
}

/** The image a block carries: an image block, or an embedded resource of an image type. */
function imageOf(block: ContentBlock): ResultImage | undefined {
  if (block.type === "image" && typeof block.data === "string") {
    return { mimeType: block.mimeType, data: block.data, bytes: base64Bytes(block.data) };
  }
  if (block.type !== "resource") return undefined;
  const resource = block.resource;
  const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
  if (!blob || !resource.mimeType?.startsWith("image/")) return undefined;
  return {
    mimeType: resource.mimeType,
    data: blob,
    bytes: base64Bytes(blob),
    uri: resource.uri,
  };
}

/**
 * Text no longer than `maxChars` (plus the note): the head and the tail of the original
 * with a note in between saying how many characters were cut and why.
 */
export function capText(text: string, maxChars: number): { text: string; omittedChars: number } {
  if (text.length <= maxChars) return { text, omittedChars: 0 };
  const tailLength = Math.floor(maxChars * TOOL_OUTPUT_TAIL_SHARE);
  const headEnd = safeCut(text, maxChars - tailLength);
  const tailStart = safeCut(text, text.length - tailLength);
  const omittedChars = tailStart - headEnd;
  const note = `\n[… ${omittedChars.toLocaleString("en-US")} of ` +
    `${text.length.toLocaleString("en-US")} characters cut here: tool output is capped at ` +
    `${maxChars.toLocaleString("en-US")} characters …]\n`;
  return { text: text.slice(0, headEnd) + note + text.slice(tailStart), omittedChars };
}

/**
 * One content block in words, as a tool result's text carries it (a prompt's messages hold
 * the same blocks): text as it is, an image or audio as its type and size, an embedded
 * resource as its text or, when binary, its URI, type and size.
 */
export function describeBlock(block: ContentBlock): string {
  return convertBlock(block).text;
}

function convertBlock(block: ContentBlock): { text: string; media: boolean } {
  switch (block.type) {
    case "text":
      return { text: block.text, media: false };
    case "image":
      // Whether the model sees it is decided per request (LLM.vision), not here.
      return {
        text: `[image: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}]`,
        media: true,
      };
    case "audio":
      return {
        text: `[audio: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}; ` +
          "not passed to the model]",
        media: true,
      };
    case "resource_link": {
      const name = block.title && block.title !== block.name
        ? `${block.title} (${block.name})`
        : block.name;
      const details = [
        block.mimeType,
        block.size === undefined ? undefined : formatBytes(block.size),
      ].filter(Boolean).join(", ");
      return {
        text: `[resource link: ${name} <${block.uri}>${details ? ` ${details}` : ""}` +
          `${block.description ? `: ${block.description}` : ""}]`,
        media: false,
      };
    }
    case "resource": {
      const resource = block.resource;
      const type = resource.mimeType ? ` (${resource.mimeType})` : "";
      if ("text" in resource && typeof resource.text === "string") {
        return { text: `[resource <${resource.uri}>${type}]\n${resource.text}`, media: false };
      }
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      const image = resource.mimeType?.startsWith("image/") ?? false;
      return {
        text: `[${image ? "image" : "binary"} resource <${resource.uri}>${type}, ${
          formatBytes(base64Bytes(blob))
        }${image ? "" : "; not passed to the model"}]`,
        media: true,
      };
    }
    default:
      return {
        text: `[content of type "${(block as { type?: string }).type ?? "unknown"}" omitted]`,
        media: false,
      };
  }
}

/**
 * Whether the text blocks already carry the structured content, so that repeating it would
 * only cost tokens: a block holds it as JSON (servers are asked to do so), or every value in
 * it appears in the text (servers that wrap their text output, `{"content": "<text>"}`).
 */
function repeatsStructured(blocks: ContentBlock[], structured: unknown): boolean {
  const wanted = canonicalJson(structured);
  // The content blocks themselves, wrapped (server-filesystem's `read_media_file`).
  if (blocks.length > 0 && wanted === canonicalJson({ content: blocks })) return true;
  const texts = blocks.flatMap((block) => block.type === "text" ? [block.text] : []);
  if (texts.length === 0) return false;
  const asJson = texts.some((text) => {
    try {
      return canonicalJson(JSON.parse(text)) === wanted;
    } catch {
      return false;
    }
  });
  if (asJson) return true;
  const leaves = leafValues(structured);
  const joined = texts.join("\n");
  return leaves.length > 0 && leaves.every((leaf) => joined.includes(leaf));
}

/** The scalar values of a JSON value, as text. */
function leafValues(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap(leafValues);
  if (typeof value === "object") return Object.values(value).flatMap(leafValues);
  return [String(value)];
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
        : v,
  );
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A cut position that does not split a surrogate pair. */
function safeCut(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

/** Decoded size of base64 data, without decoding it. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(clean.length * 3 / 4) - padding);
}

/** `512 B`, `1.5 kB`, `2.0 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
