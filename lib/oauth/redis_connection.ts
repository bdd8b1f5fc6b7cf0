/**
 * The OAuth token store's connection to Redis: made on first use (a session whose stored
 * tokens are never read never connects), and made again by the next operation after the
 * store went away, never in the background. A command that meets a broken connection gets
 * one fresh attempt; every failure is typed, saying why logins depend on the store.
 *
 * @module
 */

import { PatchbayError, StoreConnectError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import {
  diagnoseCommandError,
  diagnoseConnectError,
  isConnectionProblem,
} from "../redis/errors.ts";
import { closeRedisClient, openRedisClient, type RedisClient } from "../redis/client.ts";
import type { RedisSettings } from "../redis/settings.ts";

/** Options of {@linkcode LoginStoreConnection}. */
export interface LoginStoreConnectionOptions {
  /** The store's settings, resolved when first needed (they may be invalid: that throws). */
  settings: () => RedisSettings;
  /** Milliseconds a connection may take. */
  connectBudgetMs: number;
  /** @default COMMAND_TIMEOUT_MS */
  commandTimeoutMs?: number;
  log?: Log;
  /** Told each time a connection is made. */
  onConnect?: () => void;
}

/** A connection to the Redis holding OAuth logins; see the module documentation. */
export class LoginStoreConnection {
  readonly #options: LoginStoreConnectionOptions;
  #client: RedisClient | undefined;
  #connecting: Promise<RedisClient> | undefined;
  #lastError: unknown;
  /** Set by `close()`: later operations fail instead of connecting again. */
  #closed = false;

  constructor(options: LoginStoreConnectionOptions) {
    this.#options = options;
  }

  /**
   * Runs `command` on a ready client; failures become typed errors. A connection that broke
   * since its last use (Redis restarted during a long session) gets one fresh attempt:
   * `command` must be safe to run twice.
   */
  async run<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    const client = await this.#connection();
    try {
      return await command(client);
    } catch (error) {
      if (!isConnectionProblem(error)) throw this.#explain(error);
      // Its status turns to "end" only once the socket closes: forget it now.
      client.disconnect();
      if (this.#client === client) this.#client = undefined;
    }
    const again = await this.#connection();
    try {
      return await command(again);
    } catch (error) {
      throw this.#explain(error);
    }
  }

  /** Closes the connection; every later {@linkcode run} fails. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    await closeRedisClient(client);
  }

  /** A ready client; connected on first use, and again after the store went away. */
  #connection(): Promise<RedisClient> {
    const client = this.#client;
    if (client?.status === "ready") return Promise.resolve(client);
    this.#connecting ??= this.#connect().finally(() => this.#connecting = undefined);
    return this.#connecting;
  }

  async #connect(): Promise<RedisClient> {
    if (this.#closed) throw new Error("the Redis token store is closed");
    const settings = this.#options.settings();
    this.#client?.disconnect();
    this.#client = undefined;
    this.#lastError = undefined;
    const client = await openRedisClient(settings, {
      connectTimeoutMs: this.#options.connectBudgetMs,
      commandTimeoutMs: this.#options.commandTimeoutMs,
      // The last failure is the useful cause of a failed connection.
      onError: (error) => {
        this.#lastError = error;
        this.#options.log?.debug(`redis: ${(error as Error)?.message ?? error}`);
      },
      connectFailure: (error) => this.#unreachable(this.#lastError ?? error, "connect"),
    });
    this.#client = client;
    this.#options.onConnect?.();
    return client;
  }

  #explain(error: unknown): PatchbayError {
    if (error instanceof PatchbayError) return error;
    if (isConnectionProblem(error)) return this.#unreachable(this.#lastError ?? error, "session");
    return diagnoseCommandError(error, this.#options.settings(), "logins");
  }

  /** The shared diagnosis, saying why logins depend on the store. */
  #unreachable(cause: unknown, phase: "connect" | "session"): StoreConnectError {
    const diagnosed = diagnoseConnectError(cause, {
      settings: this.#options.settings(),
      budgetMs: this.#options.connectBudgetMs,
      phase,
      purpose: "logins",
    });
    return new StoreConnectError(diagnosed.store, diagnosed.target, diagnosed.problem, cause, {
      reason: `${diagnosed.reason}; patchbay keeps OAuth logins there because ` +
        'Memory.backend is "redis"',
      remedy: diagnosed.remedies,
    });
  }
}
