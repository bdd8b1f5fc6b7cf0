/**
 * What a message needs before it goes to the model: the servers still connecting waited
 * for (up to `AgentConfig.connect_wait`), and the resources it mentions (`@server:uri`)
 * read and named to the person; and the footer said after its answer.
 *
 * @module
 */

import { findMentions, readMentions, type ReadMentionsOptions } from "../agent/mentions.ts";
import { MAX_IMAGES_KEPT, saveImage } from "../agent/image_store.ts";
import { formatBytes } from "../agent/content.ts";
import { showName } from "../text/names.ts";
import type { StoredAttachment } from "../memory/types.ts";
import type { AgentUi } from "../agent/ui.ts";
import type { ConnectionManager } from "../connections/manager.ts";
import { DEFAULTS } from "../defaults.ts";
import { CancelledError } from "../errors.ts";
import type { Style } from "../terminal/style.ts";
import type { TerminalOutput } from "../ui/output.ts";
import type { LineEditor } from "../terminal/line_editor.ts";
import { names } from "./notices.ts";
import type { TurnResult } from "../agent/agent.ts";
import { plural } from "../text/text.ts";
import { formatDuration } from "../ui/terminal_ui.ts";

/** What {@linkcode mentionAttachments} reads with and tells. */
export interface MentionContext {
  /** The configured servers' names: what a mention may name. */
  servers: string[];
  manager: ConnectionManager;
  ui: AgentUi;
}

/**
 * The resources `typed` mentions (`@server:uri`, see lib/agent/mentions.ts), read now and
 * each named to the person (an image with the path it was saved to). `typed` is what the
 * person typed, never a server's text. Throws `MentionReadError` for one that cannot be
 * read: the message must then not be sent.
 */
export async function mentionAttachments(
  typed: string,
  context: MentionContext,
  signal?: AbortSignal,
): Promise<StoredAttachment[]> {
  const { servers, manager, ui } = context;
  const mentions = findMentions(typed, servers);
  if (mentions.length === 0) return [];
  const attachments = await readMentions(
    mentions,
    (server, uri, options) => manager.readResource(server, uri, options),
    { signal, ...attachmentOptions(ui) },
  );
  announceAttachments(attachments, ui);
  return attachments;
}

/** How attachments are kept for the person and what is said of images left out. */
export function attachmentOptions(
  ui: AgentUi,
): Pick<ReadMentionsOptions, "saveImage" | "onImagesLeftOut"> {
  return {
    saveImage: (mimeType, data) => saveImage(mimeType, data),
    onImagesLeftOut: (mention, count) =>
      ui.notice(
        "warning",
        `${showName(mention.server)}:${showName(mention.uri)}: ${count} more image${
          count === 1 ? "" : "s"
        } not kept (a message keeps at most ${MAX_IMAGES_KEPT})`,
      ),
  };
}

/** Names each attachment to the person: `Attached server:uri (what; where it was saved)`. */
export function announceAttachments(attachments: readonly StoredAttachment[], ui: AgentUi): void {
  for (const attachment of attachments) {
    const what = attachment.kind === "text"
      ? `${formatBytes(new TextEncoder().encode(attachment.text ?? "").length)} of text`
      : `${attachment.mimeType ?? "binary"}, ${formatBytes(attachment.bytes ?? 0)}`;
    const saved = attachment.path ? `; saved to ${attachment.path}` : "";
    // The URI of each content is the server's own: one line, its controls shown.
    const shown = `Attached ${showName(attachment.server)}:${showName(attachment.uri ?? "")} (${
      showName(what)
    }${saved})`;
    ui.notice("info", shown, {
      kind: "attachment",
      server: attachment.server,
      uri: attachment.uri ?? "",
      ...(attachment.mimeType ? { mime_type: attachment.mimeType } : {}),
      bytes: attachment.kind === "text"
        ? new TextEncoder().encode(attachment.text ?? "").length
        : attachment.bytes ?? 0,
      ...(attachment.path ? { path: attachment.path } : {}),
    });
  }
}

/** What {@linkcode waitForServers} waits with and writes to. */
export interface WaitContext {
  manager: ConnectionManager;
  /** `AgentConfig.connect_wait`, in seconds. @default DEFAULTS.agent.connectWaitSeconds */
  connectWaitSeconds?: number;
  output: TerminalOutput;
  editor: LineEditor;
  errStyle: Style;
}

/**
 * A message sent while servers are still connecting waits for them up to
 * `AgentConfig.connect_wait` (Ctrl+C: not longer), then goes without those still
 * connecting, saying so. Their tools join from the first model step after they connect.
 */
export async function waitForServers(context: WaitContext, signal: AbortSignal): Promise<void> {
  const { manager, output, editor, errStyle } = context;
  let pending = manager.pending();
  if (pending.length === 0) return;
  const connectWaitSeconds = context.connectWaitSeconds ?? DEFAULTS.agent.connectWaitSeconds;
  if (connectWaitSeconds > 0) {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    output.spin(
      `waiting for ${names(pending)} to connect (at most ${connectWaitSeconds} s; Ctrl+C goes on ` +
        "without)…",
    );
    try {
      pending = await editor.whileBusy(
        () => manager.settled({ timeoutMs: connectWaitSeconds * 1000, signal: stop.signal }),
        () => stop.abort(),
      );
    } finally {
      output.stopSpinner();
      signal.removeEventListener("abort", onAbort);
    }
  }
  if (signal.aborted) throw new CancelledError("the turn");
  if (pending.length === 0) return;
  const are = pending.length === 1 ? "is" : "are";
  output.err(
    errStyle.yellow(
      `… ${names(pending)} ${are} still connecting: this message goes without ` +
        `${pending.length === 1 ? "its" : "their"} tools (they join once connected)\n`,
    ),
  );
}

/**
 * The line after an answer: steps, tool calls, tokens (and how many of the prompt's the
 * provider's cache served) and how long it took (`ms`).
 */
export function turnFooter(result: TurnResult, ms: number): string {
  const parts = [
    plural(result.steps, "step"),
    ...(result.toolCalls > 0 ? [plural(result.toolCalls, "tool call")] : []),
    `${result.usage.totalTokens.toLocaleString("en-US")} tokens${
      result.usage.estimated ? " (est.)" : ""
    }${
      result.usage.cacheReadTokens
        ? ` (${result.usage.cacheReadTokens.toLocaleString("en-US")} from cache)`
        : ""
    }`,
    formatDuration(ms),
  ];
  return parts.join(" · ");
}
