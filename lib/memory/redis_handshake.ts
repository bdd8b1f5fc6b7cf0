/**
 * The store's first exchange with its Redis server: the connection (the database selected
 * for real), then the layout version key, written when absent and refused when a newer
 * patchbay (or something else) wrote it; and, when the database index was refused, how
 * many databases the server has, for the message.
 *
 * @module
 */

import type { Redis } from "ioredis";
import { StoreFailedError } from "../errors.ts";
import { valueWithin } from "../async/deadline.ts";
import { connectRedisClient, type RedisClient } from "../redis/client.ts";
import type { RedisSettings } from "../redis/settings.ts";
import { REDIS_SCHEMA_VERSION, type RedisLayout } from "./redis_layout.ts";

/** Connects, selects the database for real, and checks the layout version. */
export async function handshake(
  client: RedisClient,
  settings: RedisSettings,
  layout: RedisLayout,
): Promise<void> {
  await connectRedisClient(client, settings);
  const found = await client.get(layout.schema);
  if (found === null) {
    await client.set(layout.schema, String(REDIS_SCHEMA_VERSION), "NX");
    return;
  }
  const version = Number(found);
  if (Number.isInteger(version) && version <= REDIS_SCHEMA_VERSION) return;
  throw new StoreFailedError(
    `${settings.description} holds conversations in a layout this patchbay cannot read`,
    {
      reason: Number.isInteger(version)
        ? `${layout.schema} is ${version}; this version of patchbay reads layout ` +
          `${REDIS_SCHEMA_VERSION} (the data was written by a newer patchbay)`
        : `${layout.schema} holds "${found}", not a layout version: something else ` +
          "uses these keys",
      remedy: Number.isInteger(version)
        ? "upgrade patchbay, or set Memory.key_prefix to keep this version's data apart"
        : "set Memory.key_prefix to a prefix nothing else uses",
    },
  );
}

/**
 * The number of databases the server has, asked on `probe` (a client of database 0, closed
 * here), each step within half of `budgetMs`; `undefined` when it cannot tell.
 */
export async function countDatabases(
  probe: RedisClient,
  budgetMs: number,
): Promise<number | undefined> {
  try {
    await valueWithin(probe.connect(), budgetMs / 2);
    const reply = await valueWithin(
      (probe as Redis).config("GET", "databases") as Promise<unknown>,
      budgetMs / 2,
    ) as string[] | undefined;
    const count = Number(reply?.[1]);
    return Number.isInteger(count) ? count : undefined;
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}
