/**
 * A server's prompt as a message to send (`/server:prompt`, `/prompt`): its messages as the
 * text of one user turn, and the resources it embeds as attachments, which reach the model
 * wrapped as untrusted server content exactly as mentioned resources do
 * (`<resource server="…" uri="…" trust="untrusted">`, lib/agent/attachments.ts).
 *
 * All of it is the server's: nothing in it is the person's typing, so nothing in it is
 * scanned for `@server:uri` mentions (lib/agent/mentions.ts). A prompt cannot make patchbay
 * read a resource, of its own server or of another.
 *
 * @module
 */

import type { GetPromptResult } from "@modelcontextprotocol/client";
import {
  type OutgoingMessage,
  type ReadMentionsOptions,
  resourceAttachments,
} from "../agent/mentions.ts";
import { MAX_IMAGES_KEPT } from "../agent/image_store.ts";
import { promptText } from "../ui/listing.ts";

/** An embedded resource's content, as a prompt message carries it. */
type EmbeddedContent = { uri: string; mimeType?: string; text?: string; blob?: string };

/**
 * The message `server`'s prompt `name` sends: its text (each embedded resource named in it)
 * and the embedded resources as attachments. They share the bounds of one mentioned
 * resource: at most `MAX_CONTENTS_PER_RESOURCE` items, one text cap, the image budget of a
 * message; what is left out is counted in a line for the model.
 */
export async function promptMessage(
  server: string,
  name: string,
  result: GetPromptResult,
  options: ReadMentionsOptions = {},
): Promise<OutgoingMessage> {
  const embedded: EmbeddedContent[] = [];
  for (const message of result.messages) {
    const content = message.content as { type?: string; resource?: EmbeddedContent };
    if (content.type === "resource" && content.resource && typeof content.resource === "object") {
      embedded.push(content.resource);
    }
  }
  const text = promptText(result, { attached: true });
  if (embedded.length === 0) return { text, typed: "" };
  const attachments = await resourceAttachments(
    { server, uri: `prompt:${name}` },
    { contents: embedded as { uri: string; text: string }[] },
    options,
    { images: MAX_IMAGES_KEPT },
  );
  return { text, typed: "", attachments };
}
