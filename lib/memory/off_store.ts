/**
 * The store behind `Memory.backend: "off"`: holds nothing and writes nothing.
 *
 * @module
 */

import type { AppendStatus, MemoryStore, MessageRecord, SessionSummary } from "./types.ts";

/** A {@linkcode MemoryStore} that persists nothing. */
export class OffStore implements MemoryStore {
  readonly kind = "off" as const;
  readonly location = "nowhere (memory is off)";

  append(): Promise<AppendStatus> {
    return Promise.resolve("off");
  }

  load(): Promise<MessageRecord[] | undefined> {
    return Promise.resolve(undefined);
  }

  list(): Promise<SessionSummary[]> {
    return Promise.resolve([]);
  }

  summary(): Promise<SessionSummary | undefined> {
    return Promise.resolve(undefined);
  }

  findIds(): Promise<string[]> {
    return Promise.resolve([]);
  }

  delete(): Promise<boolean> {
    return Promise.resolve(false);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
