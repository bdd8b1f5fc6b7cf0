/**
 * Images servers return, kept for the person: each is written once under the state folder
 * (`images/`, named by its content's hash, mode 0600, since a screenshot can hold anything
 * a secret can) so that its path can be printed and the file opened.
 *
 * @module
 */

import { join } from "node:path";
import { statePath } from "../paths.ts";

/**
 * Largest image (decoded bytes) passed to the model or kept in the conversation; a larger
 * one is saved for the person and described to the model. 5 MB is the smallest per-image
 * limit among the major vision APIs (Anthropic's), so an image under it is never refused
 * for its size alone.
 */
export const MAX_IMAGE_BYTES = 5_000_000;

/**
 * Most images sent in one model request, the most recent first; older ones are described.
 * Each image costs about a thousand tokens and some providers cap the count per request.
 */
export const MAX_IMAGES_PER_REQUEST = 8;

/**
 * Most images one message (its mentions together) or one tool result keeps: saved, stored
 * with the conversation and offered to the model. A server can put thousands of tiny
 * distinct images in one answer within the message size limit; each would be a file
 * written, a line told and an entry in the stored conversation. Four times the images one
 * request sends is room for any real screenshot series; the rest are counted and told.
 */
export const MAX_IMAGES_KEPT = 4 * MAX_IMAGES_PER_REQUEST;

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "image/bmp": "bmp",
};

/** Options of {@linkcode saveImage}. */
export interface SaveImageOptions {
  /** @default the state folder's `images/` */
  dir?: string;
}

/**
 * Writes a base64 image under the images folder and returns its path. The same image
 * twice is one file.
 */
export async function saveImage(
  mimeType: string,
  data: string,
  options: SaveImageOptions = {},
): Promise<string> {
  const dir = options.dir ?? statePath("images");
  const bytes = decodeBase64(data);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const name = Array.from(digest.slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
  const extension = EXTENSIONS[mimeType.toLowerCase()] ?? "bin";
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${name}.${extension}`);
  await Deno.writeFile(path, bytes, { mode: 0o600 });
  // `mode` applies only when the file is created; an older file keeps what it had.
  await Deno.chmod(path, 0o600).catch(() => {});
  return path;
}

/** Bytes of base64 text (whitespace ignored); invalid text yields what decodes. */
export function decodeBase64(data: string): Uint8Array<ArrayBuffer> {
  const binary = atob(data.replace(/\s/g, ""));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
