/**
 * `patchbay read <uri> [--server <name>] [--output <file>]` (or `read <server>:<uri>`,
 * as `@server:uri` in chat): prints a resource exactly as
 * the server sent it: text as is, binary content as its bytes (so it can be redirected to a
 * file, or written to one with `--output FILE`). On a terminal, text is cleaned of control
 * sequences and binary content is described, never written: its bytes are the server's to
 * choose, escape sequences included.
 *
 * @module
 */

import { resolve } from "node:path";
import type { ReadResourceResult } from "@modelcontextprotocol/client";
import { EXIT } from "../lib/errors.ts";
import { resourceServer, splitServerUri } from "../lib/session/resolve.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { type ScriptOptions, withServers } from "./_connect.ts";
import { only } from "./tools.ts";

/** Options of `patchbay read`. */
export interface ReadOptions extends ScriptOptions {
  /** Which server to ask. @default the one that lists the URI */
  server?: string;
  /** Write the contents, as sent, to this file instead of stdout. */
  output?: string;
}

/** Reads a resource. */
export function read(uri: string, options: ReadOptions): Promise<number> {
  return withServers(options, async ({ manager, failed, signal }) => {
    if (options.server && failed.some((f) => f.name === options.server)) {
      throw failed.find((f) => f.name === options.server)!.error;
    }
    const resources = manager.resources();
    const templates = manager.resourceTemplates();
    // `server:uri` names its server, as `@server:uri` does in chat.
    const named = options.server === undefined
      ? splitServerUri(uri, manager.states().map((st) => st.name), resources, templates)
      : undefined;
    if (named && failed.some((f) => f.name === named.server)) {
      throw failed.find((f) => f.name === named.server)!.error;
    }
    const server = options.server ?? named?.server ??
      resourceServer(uri, resources, templates);
    const result = await manager.readResource(server, named?.uri ?? uri, { signal });
    if (options.json) {
      console.log(JSON.stringify({ server, ...result }, null, 2));
      return EXIT.ok;
    }
    if (options.output !== undefined) {
      const bytes = contentBytes(result.contents);
      await Deno.writeFile(resolve(options.output), bytes);
      console.error(`Wrote ${bytes.length} bytes to ${stripTerminalEscapes(options.output)}`);
      return EXIT.ok;
    }
    // Piped, the text is passed on byte for byte; on a terminal, a server's escape
    // sequences could rewrite the screen, so they are removed.
    const toTerminal = Deno.stdout.isTerminal();
    for (const content of result.contents) {
      if ("text" in content && typeof content.text === "string") {
        const text = toTerminal ? stripTerminalEscapes(content.text) : content.text;
        await writeAll(new TextEncoder().encode(text));
      } else if ("blob" in content && typeof content.blob === "string") {
        const bytes = Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0));
        if (toTerminal) console.log(describeBinary(content.uri, content.mimeType, bytes.length));
        else await writeAll(bytes);
      }
    }
    return EXIT.ok;
  }, options.server ? (names) => only(options.server!, names) : undefined);
}

/** Every content's bytes, in order: text as UTF-8, binary decoded. */
function contentBytes(contents: ReadResourceResult["contents"]): Uint8Array {
  const parts = contents.map((content) =>
    "blob" in content && typeof content.blob === "string"
      ? Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0))
      : new TextEncoder().encode("text" in content ? String(content.text) : "")
  );
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** What a terminal is shown instead of a binary resource's bytes. */
export function describeBinary(uri: string, mimeType: string | undefined, size: number): string {
  return `[binary content of ${stripTerminalEscapes(uri)}: ${
    stripTerminalEscapes(mimeType ?? "no MIME type")
  }, ${size} bytes; not written to a terminal. To save it: ` +
    `patchbay read '${stripTerminalEscapes(uri)}' --output FILE]`;
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  const writer = Deno.stdout.writable.getWriter();
  try {
    await writer.write(bytes);
  } finally {
    writer.releaseLock();
  }
}
