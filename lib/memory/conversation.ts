/**
 * One conversation: its id, its messages, and the writes that persist them.
 *
 * @module
 */

import { messageOf, PatchbayError, StoreFailedError } from "../errors.ts";
import { newMessageId } from "./ids.ts";
import { MEMORY_STEPS } from "../errors/memory_steps.ts";
import type { AppendStatus, MemoryStore, MessageRecord, StoredMessage } from "./types.ts";

/** How {@linkcode Conversation.append} ended. */
export type AppendResult =
  | AppendStatus
  /** The store failed (full disk, permissions): kept here and retried on the next append. */
  | "unsaved";

/** What a session needs from the memory that owns it. */
export interface ConversationHost {
  /** The store to write to, or `undefined` while memory is off. */
  writer(): MemoryStore | undefined;
  /** Redacts a message before it is written. */
  redact(message: StoredMessage): StoredMessage;
  /** Reports that writes failed (`error`) or work again (`undefined`). */
  writeTrouble(session: Conversation, error: PatchbayError | undefined): void;
  /** A write started: the host waits for it before closing. */
  track(session: Conversation): void;
}

/** A conversation. The REPL appends every message; memory decides where it goes. */
export class Conversation {
  readonly id: string;
  /** Whether it was loaded from the store (`--resume`). */
  readonly resumed: boolean;
  readonly #host: ConversationHost;
  readonly #messages: StoredMessage[];
  /** The next record's position in the stored session (messages kept while off skip it). */
  #nextSeq: number;
  /** Records a failed write left behind, retried before the next one. */
  #unsaved: Array<{ store: MemoryStore; record: MessageRecord }> = [];
  #chain: Promise<unknown> = Promise.resolve();
  #inflight = 0;
  #failing = false;

  constructor(
    host: ConversationHost,
    id: string,
    stored: readonly MessageRecord[] = [],
    resumed = false,
  ) {
    this.#host = host;
    this.id = id;
    this.resumed = resumed;
    this.#messages = stored.map((r) => r.message);
    this.#nextSeq = stored.length;
  }

  /** Every message of the conversation, in order (including those kept while off). */
  get messages(): readonly StoredMessage[] {
    return this.#messages;
  }

  /** Messages whose write failed and that are waiting for a retry. */
  get unsaved(): number {
    return this.#unsaved.length;
  }

  /** No write in progress and none waiting for a retry. */
  get idle(): boolean {
    return this.#inflight === 0 && this.#unsaved.length === 0;
  }

  /**
   * Adds a message to the conversation and persists it (redacted) unless memory is off.
   * Resolves once the message is in the store or the crash-safe journal. Never rejects
   * because of the store: trouble is reported once through the memory's events and the
   * message is kept for a retry. Appends are written in call order.
   */
  append(message: StoredMessage): Promise<AppendResult> {
    this.#messages.push(message);
    const store = this.#host.writer();
    if (!store) return Promise.resolve("off");
    const record: MessageRecord = {
      id: newMessageId(),
      seq: this.#nextSeq++,
      message: this.#host.redact(message),
    };
    this.#inflight++;
    this.#host.track(this);
    const run = this.#chain.then(() => this.#write(store, record)).finally(() => this.#inflight--);
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Waits for every write started so far; retries failed ones once. */
  async settle(): Promise<number> {
    await this.#chain;
    if (this.#unsaved.length > 0) {
      const run = this.#chain.then(() => this.#retryUnsaved());
      this.#chain = run.catch(() => {});
      await run.catch(() => {});
    }
    return this.#unsaved.length;
  }

  async #write(store: MemoryStore, record: MessageRecord): Promise<AppendResult> {
    this.#unsaved.push({ store, record });
    return await this.#retryUnsaved() ?? "unsaved";
  }

  /** Writes waiting records in order: the last one's status, or undefined if one failed. */
  async #retryUnsaved(): Promise<AppendStatus | undefined> {
    let status: AppendStatus = "written";
    while (this.#unsaved.length > 0) {
      const { store, record } = this.#unsaved[0];
      try {
        status = await store.append(this.id, record);
      } catch (error) {
        if (!this.#failing) {
          this.#failing = true;
          this.#host.writeTrouble(this, asPatchbayError(error, store));
        }
        return undefined;
      }
      this.#unsaved.shift();
    }
    if (this.#failing) {
      this.#failing = false;
      this.#host.writeTrouble(this, undefined);
    }
    return status;
  }
}

function asPatchbayError(error: unknown, store: MemoryStore): PatchbayError {
  if (error instanceof PatchbayError) return error;
  return new StoreFailedError(`Could not save the conversation to ${store.location}`, {
    reason: messageOf(error),
    remedy: MEMORY_STEPS.saveFailed,
    cause: error,
  });
}
