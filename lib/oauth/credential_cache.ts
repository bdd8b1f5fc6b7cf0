/**
 * One server's stored OAuth credentials as the provider uses them: the record read once
 * from the {@linkcode TokenStore} and kept in memory, read again when another patchbay
 * process may have refreshed, and changed in memory before the store is written. Every
 * secret in it is registered with the log's redactor as it is read or saved.
 *
 * @module
 */

import { oversizedToken } from "./answer_limits.ts";
import { oversizedTokenError } from "./login_errors.ts";
import type { StoredOAuthTokens } from "@modelcontextprotocol/client";
import { StoreConnectError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { emptyCredentials, type ServerCredentials, type TokenStore } from "./token_store.ts";

/** Options of {@linkcode CredentialCache}. */
export interface CredentialCacheOptions {
  server: string;
  /** Stored credentials obtained for another URL are ignored. */
  serverUrl: URL;
  store: TokenStore;
  log: Log;
  redactor?: Redactor;
}

/** The stored record of one server, cached. */
export class CredentialCache {
  readonly #server: string;
  readonly #serverUrl: URL;
  readonly #store: TokenStore;
  readonly #log: Log;
  readonly #redactor?: Redactor;
  #record: ServerCredentials | undefined;
  #loaded = false;

  constructor(options: CredentialCacheOptions) {
    this.#server = options.server;
    this.#serverUrl = options.serverUrl;
    this.#store = options.store;
    this.#log = options.log;
    this.#redactor = options.redactor;
  }

  /** The record in memory as it is (not loaded yet: `undefined`). */
  get record(): ServerCredentials | undefined {
    return this.#record;
  }

  /** The record in memory (loaded once), or undefined if it is for another URL. */
  async current(): Promise<ServerCredentials | undefined> {
    if (!this.#loaded) await this.reload();
    return this.#record;
  }

  /** Reads the store again (another process may have refreshed meanwhile). */
  async reload(): Promise<ServerCredentials | undefined> {
    let stored: ServerCredentials | undefined;
    try {
      stored = await this.#store.load(this.#server);
    } catch (error) {
      // A re-read only looks for another process's refresh: with the store unreachable
      // (Redis away), the login in memory is still this process's latest, so requests go
      // on with it. A first read has nothing to fall back on and fails, and so does any
      // other failure (a damaged document, a refused read), which the person must see.
      if (!this.#loaded || !(error instanceof StoreConnectError)) throw error;
      this.#log.warn("could not read the stored OAuth login again; using the one in memory", {
        error,
      });
      return this.#record;
    }
    this.#loaded = true;
    // Tokens are bound to the URL they were obtained for: never sent to a changed one.
    this.#record = stored?.serverUrl === this.#serverUrl.href ? stored : undefined;
    if (stored && !this.#record) {
      this.#log.info("stored OAuth credentials are for another URL; ignoring them", {
        stored: stored.serverUrl,
      });
    }
    await this.#discardOversizedTokens();
    for (const entry of Object.values(this.#record?.issuers ?? {})) {
      if (entry.tokens) this.registerTokens(entry.tokens);
      this.#redactor?.addSecret(entry.client?.client_secret);
    }
    return this.#record;
  }

  /**
   * Tokens stored before they were bounded (or written by hand) that are too long to send:
   * dropped from the record and from the store, so they are not read again at every start;
   * the next request logs in again, and a token endpoint still issuing such tokens is then
   * refused by name.
   */
  async #discardOversizedTokens(): Promise<void> {
    const record = this.#record;
    if (!record) return;
    let changed = false;
    for (const [issuer, entry] of Object.entries(record.issuers)) {
      const oversized = oversizedToken(entry.tokens);
      if (!oversized) continue;
      this.#log.warn(oversizedTokenError(this.#server, issuer, oversized, true).reason, {
        issuer,
      });
      delete entry.tokens;
      changed = true;
    }
    if (!changed) return;
    try {
      await this.#store.save(record);
    } catch (error) {
      // Dropped in memory all the same; the next start drops it again.
      this.#log.warn("could not save the OAuth login without its oversized token", { error });
    }
  }

  /** Changes a copy of the record (an empty one if none) and saves it. */
  async update(change: (record: ServerCredentials) => void): Promise<void> {
    const record = structuredClone(
      (await this.current()) ?? emptyCredentials(this.#server, this.#serverUrl.href),
    );
    change(record);
    // In memory before the store is asked: when it cannot take the record, what was just
    // obtained (a rotated refresh token cannot be obtained again) still serves the rest of
    // this session; the store's error tells the person what the next one needs.
    this.#record = record;
    await this.#store.save(record);
  }

  /** Deletes the stored record and forgets the one in memory. */
  async delete(): Promise<void> {
    await this.#store.delete(this.#server);
    this.#record = undefined;
  }

  /**
   * Whether the current access token expires within `ms` of `now` (never, when its
   * expiry is unknown).
   */
  expiresWithin(ms: number, now: number): boolean {
    const record = this.#record;
    const entry = record?.issuer ? record.issuers[record.issuer] : undefined;
    if (entry?.expiresAt === undefined) return false;
    // Short-lived tokens get a proportionate margin, not one longer than their life.
    const lifetime = entry.expiresAt - (entry.obtainedAt ?? entry.expiresAt);
    const margin = Math.min(ms, lifetime / 10);
    return entry.expiresAt - margin <= now;
  }

  /** Registers the secrets of `tokens` with the redactor. */
  registerTokens(tokens: StoredOAuthTokens): void {
    this.#redactor?.addSecret(tokens.access_token);
    this.#redactor?.addSecret(tokens.refresh_token);
    this.#redactor?.addSecret(tokens.id_token);
  }
}
