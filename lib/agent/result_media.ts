/**
 * The images and other binary data of one tool result, saved for the person, the same
 * wherever the tool ran: a model turn, `/call`, or `patchbay call`. Each is written once
 * under the images folder (`image_store.ts`) and told in one line,
 * `Image from everything › get-tiny-image saved to …`.
 *
 * @module
 */

import type { ConvertedToolResult, ResultImage } from "./content.ts";
import { MAX_IMAGES_KEPT } from "./image_store.ts";

/** Writes base64 data of a type to a file and returns its path (`saveImage`). */
export type SaveMedia = (mimeType: string, data: string) => Promise<string>;

/** One item of a result, and where it went. */
export interface SavedItem {
  item: ResultImage;
  /** `image` (shown by `/image`, offered to a vision model) or other binary data. */
  kind: "image" | "binary";
  /** Where it was written; absent when saving failed (`error` says why). */
  path?: string;
  error?: unknown;
}

/** What the line that tells of an item calls it: `Image`, `Audio`, `File`. */
export function mediaNoun(mimeType: string): string {
  const type = mimeType.toLowerCase();
  return type.startsWith("image/") ? "Image" : type.startsWith("audio/") ? "Audio" : "File";
}

/** `Image from everything › get-tiny-image saved to /…/images/ab12.png`. */
export function savedLine(item: ResultImage, where: string, path: string): string {
  return `${mediaNoun(item.mimeType)} from ${where} saved to ${path}`;
}

/**
 * Saves the images and binary data of `converted` (at most {@linkcode MAX_IMAGES_KEPT} of
 * each); returns each with its path, or the error that kept it from being written.
 */
export async function saveResultMedia(
  converted: Pick<ConvertedToolResult, "images" | "binaries">,
  save: SaveMedia,
): Promise<SavedItem[]> {
  const items = [
    ...converted.images.slice(0, MAX_IMAGES_KEPT).map((item) => ({ item, kind: "image" as const })),
    ...converted.binaries.slice(0, MAX_IMAGES_KEPT).map((item) => ({
      item,
      kind: "binary" as const,
    })),
  ];
  const saved: SavedItem[] = [];
  for (const entry of items) {
    try {
      saved.push({ ...entry, path: await save(entry.item.mimeType, entry.item.data) });
    } catch (error) {
      saved.push({ ...entry, error });
    }
  }
  return saved;
}
