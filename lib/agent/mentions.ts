/**
 * Resources by mention: `@server:uri` in a message attaches that resource to it.
 *
 * Ordinary text with `@` must not misfire, so a mention is recognised only when all of
 * these hold: the `@` starts the text or follows whitespace or an opening bracket or quote
 * (so `bob@example.com` is never one); the name after it is a configured server's, followed
 * at once by `:`; and at least one non-space character follows the colon. Anything else
 * (`@alice`, `@everything: hi`, `@nosuchserver:x`) is left as the text it is. A URI runs to
 * the next whitespace; sentence punctuation at its end (`.,;:!?` and closing brackets or
 * quotes) is not part of it.
 *
 * Each mentioned resource is read before anything is sent; one that cannot be read fails
 * the message with the server's error ({@linkcode MentionReadError}).
 *
 * Mentions are the person's: only what the person typed is scanned
 * ({@linkcode OutgoingMessage.typed}). Text a server supplied (a prompt's messages, and the
 * resources, tool results or completions they may quote) and text piped on stdin are sent
 * as they are, so a server can never make patchbay read another server's resource.
 *
 * @module
 */

import type { ReadResourceResult } from "@modelcontextprotocol/client";
import { CancelledError, MentionReadError } from "../errors.ts";
import type { StoredAttachment } from "../memory/types.ts";
import { base64Bytes, capText, TOOL_OUTPUT_MAX_CHARS } from "./content.ts";
import { MAX_IMAGE_BYTES, MAX_IMAGES_KEPT } from "./image_store.ts";

/**
 * A message about to be sent, with where its text came from: the model receives `text`
 * (and `attachments`); only `typed` is scanned for mentions.
 */
export interface OutgoingMessage {
  /** The whole text the model receives. */
  text: string;
  /** The part of `text` the person typed (`""` when none): the only part scanned. */
  typed: string;
  /** Server content that comes with it already read (a prompt's embedded resources). */
  attachments?: readonly StoredAttachment[];
}

/** A message the person typed, all of it theirs. */
export function typedMessage(text: string): OutgoingMessage {
  return { text, typed: text };
}

/** One `@server:uri` found in a message. */
export interface Mention {
  server: string;
  uri: string;
  /** Where the mention starts (the `@`) and ends in the text. */
  start: number;
  end: number;
}

/** Most mentions one message may carry; each is a request to a server and context spent. */
export const MAX_MENTIONS_PER_MESSAGE = 10;

/**
 * Most content items one mentioned resource brings (its texts, blobs and images; images
 * also count against the message's image bound). Each is an attachment, a notice and a
 * part of the model's context; a real resource has one, or a few.
 */
export const MAX_CONTENTS_PER_RESOURCE = 64;

const OPENERS = new Set(["(", "[", "{", '"', "'", "`", "<"]);
const TRAILING_PUNCTUATION = /[.,;:!?)\]}"'`>]+$/;

/** The mentions of known servers in `text`, in order. */
export function findMentions(text: string, servers: readonly string[]): Mention[] {
  // Longest names first, so `@docs-v2:` is not taken for a server named `docs`.
  const names = [...servers].sort((a, b) => b.length - a.length);
  const found: Mention[] = [];
  for (let at = text.indexOf("@"); at >= 0; at = text.indexOf("@", at + 1)) {
    const before = at === 0 ? "" : text[at - 1];
    if (before !== "" && !/\s/.test(before) && !OPENERS.has(before)) continue;
    const server = names.find((name) => text.startsWith(`${name}:`, at + 1));
    if (!server) continue;
    const uriStart = at + 1 + server.length + 1;
    const word = /^\S+/.exec(text.slice(uriStart))?.[0] ?? "";
    const uri = word.replace(TRAILING_PUNCTUATION, "");
    if (uri === "") continue;
    found.push({ server, uri, start: at, end: uriStart + uri.length });
  }
  return found;
}

/** Reads one resource (the connection manager's `readResource`). */
export type ResourceReader = (
  server: string,
  uri: string,
  options: { signal?: AbortSignal },
) => Promise<ReadResourceResult>;

/** Options of {@linkcode readMentions}. */
export interface ReadMentionsOptions {
  signal?: AbortSignal;
  /** Keeps an image for the person and returns its path. @default not kept */
  saveImage?: (mimeType: string, data: string) => Promise<string>;
  /** @default TOOL_OUTPUT_MAX_CHARS */
  maxChars?: number;
  /** Told how many images of a mention went past {@linkcode MAX_IMAGES_KEPT}. */
  onImagesLeftOut?: (mention: Pick<Mention, "server" | "uri">, count: number) => void;
}

/**
 * Reads every mentioned resource (each once, however often it is mentioned) and returns
 * the attachments, in order. Throws {@linkcode MentionReadError} for the first one that
 * cannot be read, and a `MentionReadError` too when a message mentions more than
 * {@linkcode MAX_MENTIONS_PER_MESSAGE} resources.
 */
export async function readMentions(
  mentions: readonly Mention[],
  read: ResourceReader,
  options: ReadMentionsOptions = {},
): Promise<StoredAttachment[]> {
  const unique = mentions.filter((m, i) =>
    mentions.findIndex((o) => o.server === m.server && o.uri === m.uri) === i
  );
  if (unique.length > MAX_MENTIONS_PER_MESSAGE) {
    const extra = unique[MAX_MENTIONS_PER_MESSAGE];
    throw new MentionReadError(
      extra.server,
      extra.uri,
      new Error(`a message may mention at most ${MAX_MENTIONS_PER_MESSAGE} resources`),
    );
  }
  const attachments: StoredAttachment[] = [];
  const budget = { images: MAX_IMAGES_KEPT };
  for (const mention of unique) {
    let result: ReadResourceResult;
    try {
      result = await read(mention.server, mention.uri, { signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw new CancelledError("reading the mentioned resources");
      throw new MentionReadError(mention.server, mention.uri, error);
    }
    attachments.push(...await resourceAttachments(mention, result, options, budget));
  }
  return attachments;
}

/**
 * One resource's contents as attachments (a read result, or a prompt's embedded resource):
 * its texts (capped), each blob, and each image while the message's `budget` of images
 * lasts; the images past it are one line for the model.
 */
export async function resourceAttachments(
  mention: Pick<Mention, "server" | "uri">,
  result: Pick<ReadResourceResult, "contents">,
  options: ReadMentionsOptions,
  budget: { images: number },
): Promise<StoredAttachment[]> {
  const contents = Array.isArray(result.contents) ? result.contents : [];
  if (contents.length === 0) {
    return [{ server: mention.server, uri: mention.uri, kind: "text", text: "(empty resource)" }];
  }
  const out: StoredAttachment[] = [];
  let leftOut = 0;
  let otherLeftOut = 0;
  // The texts of one resource share one cap, as one tool result's do: a server cannot pass
  // the cap by splitting its text into many contents.
  let room = options.maxChars ?? TOOL_OUTPUT_MAX_CHARS;
  for (const content of contents) {
    const uri = typeof content.uri === "string" ? content.uri : mention.uri;
    const mimeType = typeof content.mimeType === "string" ? content.mimeType : undefined;
    const isText = "text" in content && typeof content.text === "string";
    if (out.length >= MAX_CONTENTS_PER_RESOURCE || (isText && room <= 0)) {
      otherLeftOut++;
      continue;
    }
    if (isText) {
      const capped = capText(content.text as string, room);
      room -= capped.text.length;
      out.push({ server: mention.server, uri, kind: "text", mimeType, text: capped.text });
      continue;
    }
    const blob = "blob" in content && typeof content.blob === "string" ? content.blob : "";
    const bytes = base64Bytes(blob);
    if (!mimeType?.startsWith("image/")) {
      out.push({ server: mention.server, uri, kind: "binary", mimeType, bytes });
      continue;
    }
    if (budget.images <= 0) {
      leftOut++;
      continue;
    }
    budget.images--;
    let path: string | undefined;
    try {
      path = await options.saveImage?.(mimeType, blob);
    } catch {
      // Not kept for the person; the model still gets it.
    }
    out.push({
      server: mention.server,
      uri,
      kind: "image",
      mimeType,
      bytes,
      ...(bytes <= MAX_IMAGE_BYTES ? { data: blob } : {}),
      ...(path ? { path } : {}),
    });
  }
  if (leftOut > 0) {
    options.onImagesLeftOut?.(mention, leftOut);
    out.push({
      server: mention.server,
      uri: mention.uri,
      kind: "text",
      text: `[${leftOut} more image${leftOut === 1 ? " was" : "s were"} left out: a message ` +
        `keeps at most ${MAX_IMAGES_KEPT} images]`,
    });
  }
  if (otherLeftOut > 0) {
    out.push({
      server: mention.server,
      uri: mention.uri,
      kind: "text",
      text: `[${otherLeftOut} more content item${otherLeftOut === 1 ? " was" : "s were"} left ` +
        `out: a mentioned resource brings at most ${MAX_CONTENTS_PER_RESOURCE} items and ` +
        `${(options.maxChars ?? TOOL_OUTPUT_MAX_CHARS).toLocaleString("en-US")} characters ` +
        "of text]",
    });
  }
  return out;
}
