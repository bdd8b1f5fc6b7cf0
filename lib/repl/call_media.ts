/**
 * What `/call` does with a result's images and other binary data: saves them as a model
 * turn does (the same line says where each went), and keeps the images for `/image`,
 * placed where they came in the conversation although the model never saw them.
 *
 * @module
 */

import type { ConvertedToolResult } from "../agent/content.ts";
import { MAX_IMAGE_BYTES, saveImage } from "../agent/image_store.ts";
import { savedLine, saveResultMedia } from "../agent/result_media.ts";
import type { CatalogueTool } from "../connections/types.ts";
import type { StoredAttachment, StoredMessage } from "../memory/types.ts";
import { showName } from "../text/names.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import type { ClientSession } from "../session/client_session.ts";

/** Saves what `converted` carries, says where, and keeps its images for `/image`. */
export async function keepCallMedia(
  s: ClientSession,
  tool: CatalogueTool,
  converted: ConvertedToolResult,
): Promise<void> {
  const where = `${stripTerminalEscapes(tool.server)} › ${showName(tool.originalName)}`;
  const at = conversation(s).length;
  for (const { item, kind, path, error } of await saveResultMedia(converted, saveImage)) {
    s.output.err(
      `${
        path
          ? s.errStyle.dim(savedLine(item, where, path))
          : s.errStyle.yellow(`warning: could not save the ${item.mimeType} data: ${error}`)
      }\n`,
    );
    if (kind !== "image") continue;
    s.calledImages.push({
      at,
      image: {
        server: tool.server,
        kind: "image",
        mimeType: item.mimeType,
        bytes: item.bytes,
        ...(item.uri ? { uri: item.uri } : {}),
        ...(item.bytes <= MAX_IMAGE_BYTES ? { data: item.data } : {}),
        ...(path ? { path } : {}),
      },
    });
  }
}

/** The images of the conversation and of `/call`, in the order they came, oldest first. */
export function sessionImages(s: ClientSession): StoredAttachment[] {
  const messages = conversation(s);
  const images: StoredAttachment[] = [];
  const called = (at: number) => s.calledImages.filter((c) => c.at === at).map((c) => c.image);
  messages.forEach((message, i) => {
    images.push(...called(i));
    images.push(...(message.attachments ?? []).filter((a) => a.kind === "image"));
  });
  images.push(...s.calledImages.filter((c) => c.at >= messages.length).map((c) => c.image));
  return images;
}

function conversation(s: ClientSession): readonly StoredMessage[] {
  return s.agent?.history ?? s.memory.session.messages;
}
