/**
 * What the Redis store does while its server is away: every message that cannot be
 * written waits in the local journal (crash-safe, on disk) and is delivered, in order and
 * exactly once, when the store answers again; retries back off from
 * {@linkcode RECOVERY_FIRST_DELAY_MS} to {@linkcode RECOVERY_MAX_DELAY_MS}. Journals left by
 * earlier runs are claimed and delivered first. At exit with the store still away, the
 * messages stay in the journal (and the sessions are copied to the rescue target).
 *
 * @module
 */

import type { PatchbayError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import type { Journal, JournalEntry } from "./journal.ts";
import type { RedisAppender } from "./redis_append.ts";
import type { AppendStatus, MessageRecord } from "./types.ts";

/** First wait before retrying a store that is away; doubles up to the maximum. */
export const RECOVERY_FIRST_DELAY_MS = 500;
/** Longest wait between two retries of a store that is away. */
export const RECOVERY_MAX_DELAY_MS = 15_000;

/** What the store reports as it loses and regains its server. */
export type RedisStoreEvent =
  /** Writes stopped reaching the store; messages go to the journal. Once per outage. */
  | { type: "unavailable"; error: PatchbayError; journal?: string }
  /** The store answers again and every journaled message was delivered. */
  | { type: "restored"; delivered: number }
  /** Messages journaled by an earlier run that could not deliver them were delivered. */
  | { type: "replayed"; delivered: number; sessions: number }
  /** Closing with messages still undelivered: where they are kept. */
  | { type: "kept"; messages: number; journal?: string; rescue?: string };

/** Where undelivered messages go at exit, besides the journal. */
export interface RescueTarget {
  readonly location: string;
  load(sessionId: string): Promise<MessageRecord[] | undefined>;
  append(sessionId: string, record: MessageRecord): Promise<AppendStatus>;
  /** The file a session ends up in, for the message. */
  pathOf(sessionId: string): string;
  close(): Promise<void>;
}

/** What an {@linkcode OutageQueue} needs of its store. */
export interface OutageQueueOptions {
  journal: Journal;
  appender: RedisAppender;
  /** The store, for messages. */
  description: string;
  log?: Log;
  onEvent: (event: RedisStoreEvent) => void;
  rescue?: RescueTarget;
  /** A store error in the words of `lib/redis/errors.ts`. */
  explain: (error: unknown) => PatchbayError;
  /**
   * Makes the store ready to take the journal (connecting it if it was never reached);
   * throws while it is away.
   */
  reconnect: () => Promise<void>;
  /** Whether the store was closed: nothing is retried any more. */
  closed: () => boolean;
}

/** ioredis' Node typings change what `setTimeout` returns; Deno's is a number. */
type Timer = ReturnType<typeof setTimeout>;

/** A journal of an earlier run, discarded once all its entries are delivered. */
interface ClaimedOwner {
  left: number;
  discard(): Promise<void>;
  release(): Promise<void>;
}

/** A message waiting for the store, and the earlier run's journal it came from. */
interface PendingEntry extends JournalEntry {
  owner?: ClaimedOwner;
}

/** The messages of one store waiting for it, and the retries that deliver them. */
export class OutageQueue {
  readonly #options: OutageQueueOptions;
  /** Journaled entries not yet delivered, oldest first. */
  #pending: PendingEntry[] = [];
  /** Journals of earlier runs being delivered. */
  #claimed = new Set<ClaimedOwner>();
  #recovery: { timer: Timer; delay: number } | undefined;
  #recoveryDelay = RECOVERY_FIRST_DELAY_MS;
  #recovering: Promise<void> | undefined;
  #flushing: Promise<void> | undefined;
  #outage = false;
  #deliveredInOutage = 0;

  constructor(options: OutageQueueOptions) {
    this.#options = options;
  }

  /** Messages waiting in the journal. */
  get pending(): number {
    return this.#pending.length;
  }

  /** The journal file, once something was journaled. */
  get journalPath(): string | undefined {
    return this.#options.journal.path;
  }

  /** Whether writes are known not to reach the store. */
  get away(): boolean {
    return this.#outage;
  }

  /** Whether a delivery round runs now. */
  get flushing(): boolean {
    return this.#flushing !== undefined;
  }

  /** The first connection failed: retry in the background. */
  unreachable(): void {
    this.#outage = true;
    this.schedule();
  }

  /**
   * Journals a message that could not be written now (`failure`: why; none when it only
   * queues behind others), and retries unless a delivery round runs.
   */
  async hold(entry: JournalEntry, failure: unknown): Promise<void> {
    // Queued before it is on disk, so a delivery round in progress cannot miss it (and
    // cannot empty the journal under it); delivering it twice would be harmless.
    this.#pending.push(entry);
    await this.#options.journal.append([entry]);
    if (failure !== undefined) this.#noteOutage(failure);
    if (!this.#flushing) this.schedule();
  }

  #noteOutage(error: unknown): void {
    if (this.#outage) return;
    this.#outage = true;
    this.#deliveredInOutage = 0;
    const explained = this.#options.explain(error);
    this.#options.log?.warn(`writes to ${this.#options.description} failed: ${explained.message}`);
    this.#options.onEvent({
      type: "unavailable",
      error: explained,
      journal: this.#options.journal.path,
    });
  }

  /** Retries after the current backoff wait. */
  schedule(): void {
    if (this.#options.closed() || this.#recovery) return;
    const delayMs = this.#recoveryDelay;
    this.#recoveryDelay = Math.min(delayMs * 2, RECOVERY_MAX_DELAY_MS);
    const timer = setTimeout(() => {
      this.#recovery = undefined;
      void this.recover();
    }, delayMs);
    // A pending retry must not keep a finished command alive.
    Deno.unrefTimer(timer as unknown as number);
    this.#recovery = { timer, delay: delayMs };
  }

  /**
   * Delivers the journal once the store answers; reschedules itself until then. A store
   * that was never reached is reconnected here (ioredis does not retry a first connection,
   * by our choice, to fail fast); once connected, ioredis reconnects by itself and its
   * `ready` event brings us back, so this never touches a connection it is re-making.
   */
  recover(): Promise<void> {
    this.#recovering ??= this.#recoverOnce().finally(() => this.#recovering = undefined);
    return this.#recovering;
  }

  async #recoverOnce(): Promise<void> {
    try {
      await this.#options.reconnect();
      await this.flush();
      this.#recoveryDelay = RECOVERY_FIRST_DELAY_MS;
    } catch (error) {
      this.#options.log?.debug(`store still away: ${(error as Error)?.message ?? error}`);
      this.schedule();
    }
  }

  /** Delivers pending entries in order, one round at a time; throws at the first failure. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flushRound().finally(() => this.#flushing = undefined);
    return this.#flushing;
  }

  async #flushRound(): Promise<void> {
    const { appender, log, onEvent, description } = this.#options;
    let delivered = 0;
    let replayed = 0;
    const sessions = new Set<string>();
    while (this.#pending.length > 0) {
      while (this.#pending.length > 0) {
        const entry = this.#pending[0];
        // Entries of earlier runs have no history here to rewrite lost messages from.
        const force = !appender.knows(entry.sessionId);
        await appender.deliver(entry.sessionId, entry.record, force);
        this.#pending.shift();
        delivered++;
        if (entry.owner) {
          replayed++;
          sessions.add(entry.sessionId);
          if (--entry.owner.left === 0) {
            this.#claimed.delete(entry.owner);
            await entry.owner.discard();
          }
        }
      }
      // Entries queued while this ran are delivered before the journal is emptied.
      if (this.#pending.length === 0) await this.#options.journal.clear();
    }
    if (replayed > 0) {
      log?.info(`delivered ${replayed} journaled messages of earlier runs`);
      onEvent({ type: "replayed", delivered: replayed, sessions: sessions.size });
    }
    if (this.#outage) {
      this.#outage = false;
      this.#deliveredInOutage += delivered - replayed;
      log?.info(`${description} is back; ${delivered} messages delivered`);
      onEvent({ type: "restored", delivered: this.#deliveredInOutage });
    }
  }

  /** Takes over journals of runs that ended before delivering them; they go first. */
  async claimOrphans(): Promise<void> {
    const { journal, log } = this.#options;
    let claimed;
    try {
      claimed = await journal.claimOrphans();
    } catch (error) {
      // Unreadable journals stay where they are for a later run; this one goes on.
      log?.warn(`could not read the journals in ${journal.dir}: ${error}`);
      return;
    }
    const entries: PendingEntry[] = [];
    for (const found of claimed) {
      if (found.entries.length === 0) {
        await found.discard();
        continue;
      }
      log?.info(`found ${found.entries.length} undelivered messages in ${found.path}`);
      const owner: ClaimedOwner = {
        left: found.entries.length,
        discard: found.discard,
        release: found.release,
      };
      this.#claimed.add(owner);
      for (const entry of found.entries) entries.push({ ...entry, owner });
    }
    this.#pending.unshift(...entries);
  }

  /**
   * Stops retrying, waits for a retry in flight, delivers what it can (`deliverable`: the
   * store answers), keeps the rest and gives back the earlier runs' journals.
   */
  async close(deliverable: () => boolean): Promise<void> {
    if (this.#recovery) clearTimeout(this.#recovery.timer);
    this.#recovery = undefined;
    await this.#recovering;
    if (this.#pending.length > 0 && deliverable()) await this.flush().catch(() => {});
    if (this.#pending.length > 0) await this.#keepUndelivered();
    for (const claimed of this.#claimed) await claimed.release().catch(() => {});
    this.#claimed.clear();
    await this.#options.journal.close();
    await this.#options.rescue?.close();
  }

  /** At exit with the store away: say where the messages are, and copy sessions locally. */
  async #keepUndelivered(): Promise<void> {
    const { journal, rescue: target, log, description } = this.#options;
    const messages = this.#pending.length;
    let rescue: string | undefined;
    if (target) {
      const sessions = [...new Set(this.#pending.map((e) => e.sessionId))];
      try {
        for (const sessionId of sessions) await this.#rescueSession(target, sessionId);
        rescue = sessions.length === 1 ? target.pathOf(sessions[0]) : target.location;
      } catch (error) {
        log?.warn(`could not copy undelivered sessions locally: ${error}`);
      }
    }
    log?.warn(
      `${messages} messages not delivered to ${description}; kept in ` +
        `${journal.path}${rescue ? ` and ${rescue}` : ""}`,
    );
    // The journal stays on disk: the next run that reaches the store delivers it.
    this.#options.onEvent({ type: "kept", messages, journal: journal.path, rescue });
  }

  async #rescueSession(target: RescueTarget, sessionId: string): Promise<void> {
    const known = this.#options.appender.recordsOf(sessionId) ??
      this.#pending.filter((e) => e.sessionId === sessionId).map((e) => e.record);
    const present = new Set((await target.load(sessionId) ?? []).map((r) => r.id));
    for (const record of known) {
      if (!present.has(record.id)) await target.append(sessionId, record);
    }
  }
}
