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

/**
 * Most bytes the images folder holds; past it the oldest images are removed as new ones
 * are saved. Each answer of a server is bounded, but not how many answers it gives: a
 * server returning a fresh large image on every call would otherwise fill the disk.
 */
export const MAX_IMAGES_FOLDER_BYTES = 512 * 1024 * 1024;

/** Options of {@linkcode saveImage}. */
export interface SaveImageOptions {
  /** @default the state folder's `images/` */
  dir?: string;
  /** @default MAX_IMAGES_FOLDER_BYTES */
  maxFolderBytes?: number;
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
  await pruneOldest(dir, options.maxFolderBytes ?? MAX_IMAGES_FOLDER_BYTES, path);
  return path;
}

/** Removes the oldest images of `dir` until it holds at most `max` bytes; `keep` stays. */
async function pruneOldest(dir: string, max: number, keep: string): Promise<void> {
  const files: { path: string; size: number; mtime: number }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile) continue;
    const path = join(dir, entry.name);
    const info = await Deno.stat(path).catch(() => undefined);
    if (info) files.push({ path, size: info.size, mtime: info.mtime?.getTime() ?? 0 });
  }
  let total = files.reduce((sum, file) => sum + file.size, 0);
  files.sort((a, b) => a.mtime - b.mtime);
  for (const file of files) {
    if (total <= max) break;
    if (file.path === keep) continue;
    await Deno.remove(file.path).catch(() => {});
    total -= file.size;
  }
}

/** Bytes of base64 text (whitespace ignored); invalid text yields what decodes. */
export function decodeBase64(data: string): Uint8Array<ArrayBuffer> {
  const binary = atob(data.replace(/\s/g, ""));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
