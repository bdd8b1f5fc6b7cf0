/**
 * Incremental framing of `text/event-stream` (WHATWG HTML, server-sent events), shared by
 * the MCP transports (`fetch.ts`) and the model client (`lib/llm/chat_api.ts`).
 *
 * @module
 */

import { createParser, type EventSourceParser } from "eventsource-parser";
import { MAX_MESSAGE_BYTES } from "./limits.ts";

/** One event of a `text/event-stream`, as far as patchbay needs it. */
export interface StreamEvent {
  event: string;
  data: string;
  /** The `id:` field of this event, if it had one. */
  id?: string;
}

/**
 * Incremental parser of `text/event-stream` (WHATWG HTML, server-sent events), by
 * `eventsource-parser` (the parser the SDK itself uses): a line break split between two
 * chunks (`\r` at the end of one, `\n` at the start of the next) is one line break, and
 * the data of one event is bounded.
 */
export class EventStreamScanner {
  #decoder = new TextDecoder();
  #parser: EventSourceParser;
  #overflow = false;
  /** Bytes received since the last event ended (for the message of an overflow). */
  #sinceEvent = 0;

  /** `maxChars`: the longest event data (and unfinished line) kept. */
  constructor(onEvent: (event: StreamEvent) => void, maxChars: number = MAX_MESSAGE_BYTES) {
    this.#parser = createParser({
      maxBufferSize: maxChars,
      onEvent: (event) => {
        this.#sinceEvent = 0;
        onEvent({ event: event.event ?? "message", data: event.data, id: event.id });
      },
      onError: (error) => {
        if (error.type === "max-buffer-size-exceeded") this.#overflow = true;
      },
    });
  }

  /**
   * Parses `chunk`; returns the bytes seen since the last event when the event in
   * progress outgrew the cap (the scanner is then finished), else `undefined`.
   */
  push(chunk: Uint8Array): number | undefined {
    if (this.#overflow) return this.#sinceEvent;
    this.#sinceEvent += chunk.length;
    this.#parser.feed(this.#decoder.decode(chunk, { stream: true }));
    return this.#overflow ? this.#sinceEvent : undefined;
  }

  /**
   * The body ended: an event left without its closing blank line is dispatched (servers
   * omit it at the end; the `openai` SDK dispatched it too).
   */
  end(): void {
    if (this.#overflow) return;
    this.#parser.feed(this.#decoder.decode() + "\n\n");
  }
}
