/**
 * `patchbay read <uri> [--server <name>]`: prints a resource exactly as the server sent
 * it: text as is, binary content as its bytes (so it can be redirected to a file).
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { resourceServer } from "../lib/repl/resolve.ts";
import { stripTerminalEscapes } from "../lib/terminal.ts";
import { type ScriptOptions, withServers } from "./_connect.ts";
import { only } from "./tools.ts";

/** Options of `patchbay read`. */
export interface ReadOptions extends ScriptOptions {
  /** Which server to ask. @default the one that lists the URI */
  server?: string;
}

/** Reads a resource. */
export function read(uri: string, options: ReadOptions): Promise<number> {
  return withServers(options, async ({ manager, failed, signal }) => {
    if (options.server && failed.some((f) => f.name === options.server)) {
      throw failed.find((f) => f.name === options.server)!.error;
    }
    const server = options.server ??
      resourceServer(uri, manager.resources(), manager.resourceTemplates());
    const result = await manager.readResource(server, uri, { signal });
    if (options.json) {
      console.log(JSON.stringify({ server, ...result }, null, 2));
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
        await writeAll(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0)));
      }
    }
    return EXIT.ok;
  }, options.server ? (names) => only(options.server!, names) : undefined);
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  const writer = Deno.stdout.writable.getWriter();
  try {
    await writer.write(bytes);
  } finally {
    writer.releaseLock();
  }
}
