/**
 * One message added to a stored conversation that is not the one this process has open:
 * a task's outcome arriving for a conversation of an earlier session (docs/tasks.md).
 * The conversation's lease is taken for the write, so it never interleaves with a
 * process that has it open; held by another process, nothing is written (that process,
 * or the next `--resume`, delivers it).
 *
 * @module
 */

import { LEASE_TTL_MS, thisProcess } from "./lease.ts";
import { newMessageId } from "./ids.ts";
import type { MemoryStore, StoredMessage } from "./types.ts";

/** How {@linkcode appendToStored} ended. */
export type StoredAppend =
  /** In the conversation. */
  | "written"
  /** Another process has the conversation open: not written. */
  | "held"
  /** No stored conversation has that id (deleted, expired, or never saved). */
  | "missing";

/** Appends `message` (already masked) to stored conversation `sessionId` of `store`. */
export async function appendToStored(
  store: MemoryStore,
  sessionId: string,
  message: StoredMessage,
): Promise<StoredAppend> {
  const holder = thisProcess();
  const leases = store.leases;
  if (leases) {
    const outcome = await leases.acquire(sessionId, holder, LEASE_TTL_MS);
    if (!outcome.acquired) return "held";
  }
  try {
    const records = await store.load(sessionId);
    if (!records) return "missing";
    await store.append(sessionId, { id: newMessageId(), seq: records.length, message });
    return "written";
  } finally {
    await leases?.release(sessionId, holder).catch(() => {});
  }
}
