/**
 * `/image [n]`: the n-th most recent image of the conversation or of `/call` (1, the latest,
 * by default),
 * drawn in the terminal when it speaks an image protocol (see `inline_image.ts`), and its
 * saved path in every case.
 *
 * @module
 */

import { formatBytes } from "../agent/content.ts";
import { PatchbayError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import type { StoredAttachment } from "../memory/types.ts";
import { showName } from "../text/names.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import type { ClientSession } from "../session/client_session.ts";
import { sessionImages } from "./call_media.ts";
import { imageProtocol, inlineImage } from "../ui/inline_image.ts";
import type { SlashCommand } from "./slash.ts";
import { readBoundedFile } from "../files/bounded_read.ts";

/** The `/image` command. */
export const imageCommand: SlashCommand<ClientSession> = {
  name: "image",
  usage: "[n]",
  summary: "show the latest image (or the n-th latest) inline, where the terminal can",
  async run(s, args) {
    const images = sessionImages(s).reverse();
    const n = args.trim() === "" ? 1 : Number(args.trim());
    if (!Number.isInteger(n) || n < 1) {
      throw new PatchbayError("usage", "Usage: /image [n]", {
        reason: `"${args.trim()}" is not a positive whole number`,
        remedy: REPL_STEPS.image,
      });
    }
    const image = images[n - 1];
    if (!image) {
      throw new PatchbayError("usage", `No image ${n} in this conversation`, {
        reason: images.length === 0
          ? "no tool result or mention has brought an image yet"
          : `the conversation has ${images.length} image${images.length === 1 ? "" : "s"}`,
        remedy: images.length === 0 ? "ask for one (a tool that returns images)" : "/image 1",
      });
    }
    s.output.out(`${describe(image)}\n`);
    const protocol = Deno.stdout.isTerminal() ? imageProtocol(readVariable) : undefined;
    const data = image.data ?? await readSaved(image);
    const drawn = protocol && data ? inlineImage(protocol, image.mimeType ?? "", data) : undefined;
    if (drawn) {
      s.output.out(drawn);
    } else {
      s.output.out(
        `${
          s.style.dim(
            protocol
              ? `(this terminal's ${protocol} protocol cannot draw ${image.mimeType}; open the file)`
              : "(this terminal speaks no image protocol patchbay knows: kitty or iTerm2; open " +
                "the file)",
          )
        }\n`,
      );
    }
  },
};

function describe(image: StoredAttachment): string {
  // The URI and type are the server's own: on one line, with their controls shown.
  const source = image.uri ? `${showName(image.server)}:${showName(image.uri)}` : image.server;
  const where = image.path ? ` saved to ${stripTerminalEscapes(image.path)}` : " (not saved)";
  return `${source}: ${showName(image.mimeType ?? "image")}, ${
    formatBytes(image.bytes ?? 0)
  }${where}`;
}

/**
 * Largest saved image shown inline: far past any screenshot, and the file is in patchbay's
 * own folder, so only a file replaced there by hand could be larger.
 */
const MAX_SHOWN_IMAGE_BYTES = 64 * 1024 * 1024;

async function readSaved(image: StoredAttachment): Promise<string | undefined> {
  if (!image.path) return undefined;
  try {
    const bytes = await readBoundedFile(image.path, {
      what: "the saved image",
      maxBytes: MAX_SHOWN_IMAGE_BYTES,
    });
    let binary = "";
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary);
  } catch {
    return undefined;
  }
}

/** A variable's value; `undefined` when it is unset or Deno was not allowed to read it. */
function readVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
