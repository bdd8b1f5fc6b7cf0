/**
 * Conversation memory as the rest of patchbay uses it: the current session, resuming,
 * listing, the `/memory` switch, and events that say when the store comes and goes.
 * Made by `openMemory()` (open.ts).
 *
 * @module
 */

import { Leasing } from "./leasing.ts";
import type { PatchbayError } from "../errors.ts";
import { SessionNotFoundError, StoreAuthError, StoreDatabaseError } from "../errors.ts";
import { MEMORY_STEPS } from "../errors/memory_steps.ts";
import type { Log } from "../log/log.ts";
import { Redactor } from "../redact/redact.ts";
import { plural } from "../text/text.ts";
import { isSessionId, newSessionId } from "./ids.ts";
import type { RedisStoreEvent } from "./redis_store.ts";
import { Conversation, type ConversationHost } from "./conversation.ts";
import type { MemoryStore, SessionSummary, StoredMessage, StoreKind } from "./types.ts";

/**
 * What memory reports while it runs. The library never prints: the REPL shows
 * `message` (and, when there is one, the formatted `error` with its cause and remedy).
 */
export type MemoryEvent =
  & { message: string }
  & (
    /** The store cannot be reached (or stopped answering); messages go to the journal. */
    | { type: "unavailable"; error: PatchbayError; journal?: string }
    /** The store answers again; everything journaled meanwhile was written. */
    | { type: "restored"; delivered: number }
    /** Messages an earlier run had to journal were written to the store. */
    | { type: "replayed"; delivered: number; sessions: number }
    /** The configured store cannot be used at all; memory lives elsewhere (or is off). */
    | { type: "fallback"; error: PatchbayError; location?: string }
    /** Writing failed (disk full, permissions); messages are kept and retried. */
    | { type: "write-failed"; error: PatchbayError }
    /** Writes work again after `write-failed`. */
    | { type: "write-recovered" }
    /** At exit, the store was away: where the undelivered messages are kept. */
    | { type: "kept"; messages: number; journal?: string; rescue?: string }
    /** At exit, messages could not be written anywhere. */
    | { type: "unsaved"; messages: number }
  );

/** `/memory` and `/status`: whether memory is on, and where it lives. */
export interface MemoryStatus {
  enabled: boolean;
  /** The store used while on. */
  kind: StoreKind;
  /** `Redis at localhost:6379 db 0`, or the folder of the session files. */
  location: string;
  /** The store answered the last time it was asked (always true for files). */
  available: boolean;
  /** Messages waiting in the journal for the store to come back. */
  pending: number;
  /** The journal file holding them. */
  journal?: string;
  /** Why the store is not (fully) usable, if it is not. */
  problem?: PatchbayError;
  /** One line for people, e.g. `Memory on: saving to Redis at localhost:6379 db 0`. */
  text: string;
}

/** A store that memory writes to when on, opened on first need. */
export interface StoreOpener {
  /** The store's kind, known before it is opened. */
  readonly kind: StoreKind;
  /** Where it lives, known before it is opened. */
  readonly location: string;
  /**
   * Opens it. A store that could not be reached but can keep messages meanwhile comes
   * with a `problem`; `fallback` says the store is another one than configured (an
   * `OffStore` when nothing can be saved anywhere).
   */
  open(): Promise<{ store: MemoryStore; problem?: PatchbayError; fallback?: boolean }>;
}

/** Options of {@linkcode Memory}. */
export interface MemoryInit {
  opener: StoreOpener;
  /** @default true */
  enabled?: boolean;
  redactor?: Redactor;
  log?: Log;
}

/** Conversation memory. See docs/memory.md for the behaviour. */
export class Memory {
  readonly #opener: StoreOpener;
  readonly #redactor: Redactor;
  readonly #log: Log | undefined;
  readonly #listeners = new Set<(event: MemoryEvent) => void>();
  readonly #sessions = new Set<Conversation>();
  readonly #host: ConversationHost;
  #enabled: boolean;
  #store: MemoryStore | undefined;
  #opening: Promise<MemoryStore> | undefined;
  #problem: PatchbayError | undefined;
  #location: string;
  #kind: StoreKind;
  #current: Conversation | undefined;
  #closed = false;
  /** The current conversation's lease: one process per conversation. */
  readonly #leasing: Leasing;
  /** A new conversation's lease being taken: close waits for it, then gives it up. */
  #taking: Promise<void> | undefined;

  constructor(init: MemoryInit) {
    this.#opener = init.opener;
    this.#enabled = init.enabled ?? true;
    this.#redactor = init.redactor ?? new Redactor();
    this.#log = init.log;
    this.#location = init.opener.location;
    this.#kind = init.opener.kind;
    this.#leasing = new Leasing(init.log);
    this.#host = {
      writer: () => this.#enabled ? this.#store : undefined,
      redact: (message) => this.#redactor.redactValue(message),
      writeTrouble: (_session, error) => {
        if (error) {
          this.#emit({
            type: "write-failed",
            error,
            message: "Messages that could not be saved are kept and retried with the next one.",
          });
        } else {
          this.#emit({ type: "write-recovered", message: "Saving the conversation works again." });
        }
      },
      track: (session) => this.#sessions.add(session),
    };
  }

  /** Whether new messages are persisted. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** The open store, if any (`undefined` until first needed when memory starts off). */
  get store(): MemoryStore | undefined {
    return this.#store;
  }

  /** Why the store is not (fully) usable, if it is not. */
  get problem(): PatchbayError | undefined {
    return this.#problem;
  }

  /** Listens to {@linkcode MemoryEvent}s; returns the function that stops listening. */
  subscribe(listener: (event: MemoryEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Forwards a Redis store's events (wired by `openMemory`). */
  relay(event: RedisStoreEvent): void {
    switch (event.type) {
      case "unavailable":
        this.#problem = event.error;
        this.#emit({
          ...event,
          message: `Memory continues in the local journal${
            event.journal ? ` ${event.journal}` : ""
          }; ${this.#whenWritten(event.error, "again")}.`,
        });
        break;
      case "restored":
        this.#problem = undefined;
        this.#emit({
          ...event,
          message: `${this.#location} answers again; ${
            plural(event.delivered, "journaled message")
          } written.`,
        });
        break;
      case "replayed":
        this.#emit({
          ...event,
          message: `${plural(event.delivered, "message")} of ${
            plural(event.sessions, "earlier session")
          } waiting in the local journal were written to ${this.#location}.`,
        });
        break;
      case "kept":
        this.#emit({
          ...event,
          message: `${plural(event.messages, "message")} could not reach ${this.#location}: ` +
            `kept in ${event.journal ?? "the local journal"}, and written there the next time ` +
            `patchbay reaches it${
              event.rescue ? `; the conversation is also saved in ${event.rescue}` : ""
            }.`,
        });
        break;
    }
  }

  /** Whether memory is on and where it lives, for `/memory` and `/status`. */
  status(): MemoryStatus {
    const store = this.#store as
      | (MemoryStore & {
        available?: boolean;
        pending?: number;
        journalPath?: string;
      })
      | undefined;
    const available = store?.available ?? (store !== undefined || this.#problem === undefined);
    const pending = store?.pending ?? 0;
    const journal = store?.journalPath;
    let text: string;
    if (store?.kind === "off") {
      text = "Memory off: nothing can be saved" +
        (this.#problem ? ` (${this.#problem.message})` : "");
    } else if (!this.#enabled) {
      text = `Memory off: this conversation is not saved (/memory saves it again, to ` +
        `${this.#location})`;
    } else if (!available) {
      text =
        `Memory on: ${this.#location} ${
          refusedUs(this.#problem) ? "refused the connection" : "is unreachable"
        }` +
        (this.#problem ? ` (${this.#problem.message})` : "") +
        `; ${plural(pending, "message")} waiting in the local journal` +
        (journal ? ` ${journal}` : "") + " until it answers";
    } else {
      text = `Memory on: saving to ${this.#location}` +
        (pending > 0 ? ` (${plural(pending, "message")} being delivered from the journal)` : "");
    }
    return {
      enabled: this.#enabled,
      kind: this.#kind,
      location: this.#location,
      available,
      pending,
      ...(journal ? { journal } : {}),
      ...(this.#problem ? { problem: this.#problem } : {}),
      text,
    };
  }

  /**
   * Turns persistence on or off (`/memory`). Turning it on opens the store if needed;
   * messages exchanged while it was off are never written.
   */
  async setEnabled(on: boolean): Promise<MemoryStatus> {
    if (on) {
      const store = await this.#ensureStore();
      this.#enabled = store.kind !== "off";
    } else {
      this.#enabled = false;
    }
    this.#log?.info(`memory ${this.#enabled ? "on" : "off"} (${this.#location})`);
    return this.status();
  }

  /** The current session (a new one if none was started). */
  get session(): Conversation {
    return this.#current ?? this.newSession();
  }

  /** Starts a new conversation and makes it current (`/clear`). */
  newSession(): Conversation {
    const session = this.#adopt(new Conversation(this.#host, newSessionId()));
    // A fresh id is nobody else's: the lease is taken in the background.
    if (this.#enabled && !this.#closed) {
      this.#taking = this.#ensureStore().then((store) => this.#leasing.take(store, session.id))
        .catch((error) =>
          this.#log?.warn("could not take the new conversation's lease", { error })
        );
    }
    return session;
  }

  /** Resolves once the lease of a conversation started by `newSession` was asked for. */
  async leaseTaken(): Promise<void> {
    await this.#taking;
  }

  /**
   * Continues a stored conversation as a new branch: a new conversation, current from now
   * on, starting with a copy of its messages (the stored one is left as it is). What a
   * person chooses when the conversation is open in another process.
   */
  async branch(idOrPrefix: string): Promise<Conversation> {
    const { messages } = await this.load(idOrPrefix);
    const session = this.newSession();
    for (const message of messages) await session.append(message);
    this.#log?.info(`branched session ${session.id} from ${idOrPrefix}`);
    return session;
  }

  /**
   * Loads a stored conversation and makes it current: `true` for the most recent one
   * (`--resume`; of `folder` when given, or stored without a folder), or an id or a unique
   * prefix of one (`--resume <id>`, from any folder).
   */
  async resume(target: true | string = true, folder?: string): Promise<Conversation> {
    const store = await this.#readableStore();
    const summary = target === true ? await this.#latest(store, folder) : await this.find(target);
    // Refused while another process has it open: their turns would interleave.
    await this.#leasing.take(store, summary.id);
    const records = await store.load(summary.id) ?? [];
    const session = this.#adopt(new Conversation(this.#host, summary.id, records, true));
    this.#log?.info(`resumed session ${summary.id} (${records.length} messages)`);
    return session;
  }

  /** Stored sessions, most recent first. */
  async sessions(
    options: { limit?: number; signal?: AbortSignal } = {},
  ): Promise<SessionSummary[]> {
    return await (await this.#readableStore()).list(options);
  }

  /** The stored session with this id or unique id prefix. */
  async find(idOrPrefix: string): Promise<SessionSummary> {
    const store = await this.#readableStore();
    const wanted = idOrPrefix.trim().toLowerCase();
    if (!isSessionId(wanted)) {
      throw new SessionNotFoundError(
        `Session '${idOrPrefix}' not found`,
        "session ids are letters and digits, like k3f9x2m7q1ab",
        MEMORY_STEPS.listSessions,
      );
    }
    const exact = await store.summary(wanted);
    if (exact) return exact;
    const matches = await store.findIds(wanted);
    if (matches.length > 1) {
      throw new SessionNotFoundError(
        `Session id '${idOrPrefix}' is ambiguous`,
        `it starts ${matches.length} session ids: ${matches.slice(0, 5).join(", ")}` +
          (matches.length > 5 ? ", ..." : ""),
        MEMORY_STEPS.longerId,
      );
    }
    const summary = matches.length === 1 ? await store.summary(matches[0]) : undefined;
    if (summary) return summary;
    throw new SessionNotFoundError(
      `Session '${idOrPrefix}' not found`,
      `${store.location} holds no session with that id (it may have been deleted or expired)`,
      MEMORY_STEPS.listSessions,
    );
  }

  /** A stored session's summary and messages. */
  async load(idOrPrefix: string): Promise<{ summary: SessionSummary; messages: StoredMessage[] }> {
    const summary = await this.find(idOrPrefix);
    const records = await (await this.#readableStore()).load(summary.id) ?? [];
    return { summary, messages: records.map((r) => r.message) };
  }

  /** Deletes a stored session; returns what it was. */
  async delete(idOrPrefix: string): Promise<SessionSummary> {
    const summary = await this.find(idOrPrefix);
    await (await this.#readableStore()).delete(summary.id);
    this.#log?.info(`deleted session ${summary.id}`);
    return summary;
  }

  /**
   * Waits for pending writes, retries failed ones, and closes the store. Undelivered
   * messages are reported through events (`kept`, `unsaved`). Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let unsaved = 0;
    for (const session of this.#sessions) unsaved += await session.settle();
    if (unsaved > 0) {
      this.#emit({
        type: "unsaved",
        messages: unsaved,
        message: `${plural(unsaved, "message")} of this conversation could not be saved to ` +
          `${this.#location}.`,
      });
    }
    await this.#opening?.catch(() => undefined);
    await this.#taking;
    await this.#leasing.release();
    await this.#store?.close();
  }

  /** Makes `session` current; earlier sessions are kept only while they have writes. */
  #adopt(session: Conversation): Conversation {
    for (const earlier of this.#sessions) if (earlier.idle) this.#sessions.delete(earlier);
    this.#sessions.add(session);
    this.#current = session;
    return session;
  }

  async #latest(store: MemoryStore, folder?: string): Promise<SessionSummary> {
    const all = await store.list(folder === undefined ? { limit: 1 } : {});
    const latest = all.find((s) => folder === undefined || !s.folder || s.folder === folder);
    if (latest) return latest;
    if (all.length > 0) {
      throw new SessionNotFoundError(
        "No conversation to resume in this folder",
        `the ${all.length} stored in ${store.location} were held in other folders than ${folder}`,
        MEMORY_STEPS.otherFolders,
      );
    }
    throw new SessionNotFoundError(
      "No conversation to resume",
      `${store.location} holds no stored sessions yet`,
      MEMORY_STEPS.firstConversation,
    );
  }

  /** The store for reading, opened even while memory is off (resuming reads only). */
  #readableStore(): Promise<MemoryStore> {
    return this.#ensureStore();
  }

  #ensureStore(): Promise<MemoryStore> {
    if (this.#store) return Promise.resolve(this.#store);
    this.#opening ??= this.#open().finally(() => this.#opening = undefined);
    return this.#opening;
  }

  async #open(): Promise<MemoryStore> {
    const { store, problem, fallback } = await this.#opener.open();
    this.#store = store;
    this.#problem = problem;
    if (store.kind !== "off") {
      this.#location = store.location;
      this.#kind = store.kind;
    }
    if (problem && fallback) {
      const nowhere = store.kind === "off";
      this.#emit({
        type: "fallback",
        error: problem,
        ...(nowhere ? {} : { location: store.location }),
        message: nowhere
          ? "Memory is off for this session: nothing is saved."
          : `Memory is saved to ${store.location} instead.`,
      });
    } else if (problem) {
      this.#emit({
        type: "unavailable",
        error: problem,
        message: `Memory continues in a local journal; ${this.#whenWritten(problem)}.`,
      });
    }
    return store;
  }

  /**
   * When journaled messages reach the store: once it answers, for a store that is away; a
   * store that refused the password or has no such database will not take them until
   * patchbay runs again with settings it accepts.
   */
  #whenWritten(problem: unknown, again = ""): string {
    return refusedUs(problem)
      ? `messages wait there and are written to ${this.#location} by the first run with ` +
        "settings it accepts"
      : `messages are written to ${this.#location} when it answers${again ? ` ${again}` : ""}`;
  }

  #emit(event: MemoryEvent): void {
    this.#log?.[event.type === "restored" || event.type === "replayed" ? "info" : "warn"](
      event.message,
    );
    for (const listener of this.#listeners) listener(event);
  }
}

/** The store answered and refused us (credentials, database): waiting will not help. */
function refusedUs(problem: unknown): boolean {
  return problem instanceof StoreAuthError || problem instanceof StoreDatabaseError;
}
