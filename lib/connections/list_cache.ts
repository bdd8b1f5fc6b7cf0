/**
 * A server's lists kept across runs (2026-07-28 caching hints, `ttlMs` and `cacheScope`):
 * its tools, prompts, resources and resource templates, in one owner-only file of the
 * state folder per server, used while every list it offered is fresh, so the catalogue and
 * the model's tools are ready before the server answers.
 *
 * - **Fresh**: a list is kept for the `ttlMs` its result gave (the freshness clock starts
 *   when it arrived), at most {@linkcode MAX_CACHE_TTL_MS}; a list without `ttlMs`, or
 *   with 0 or less, is immediately stale and not kept (the specification's default). A
 *   paginated list counts as one result with its first page's hints.
 * - **Whose**: the file belongs to the server's name and to what decides which server it is
 *   and who asks: the transport, command, arguments, folder and environment of a stdio
 *   server; the URL, the headers and the OAuth client of a network one (hashed into
 *   {@linkcode identityOf}: no value is written). A changed entry finds no lists. The state
 *   folder is the person's own, so nothing is shared between people whatever the scope: a
 *   `"private"` list (the default when a server sends no `cacheScope`) is kept only where
 *   that hash pins the authorization context, which an OAuth login does not (its tokens
 *   live elsewhere and change), so a private list of an OAuth server is not kept.
 * - **Bounded**: a file of more than {@linkcode MAX_LIST_CACHE_BYTES} is neither written
 *   nor read. What is written is what the connection holds, secrets already masked.
 * - **Replaced or dropped** by the connection: the live lists replace the kept ones when
 *   the server answers; `list_changed` drops the list at once.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join } from "node:path";
import { MAX_CACHE_TTL_MS } from "@modelcontextprotocol/client";
import { readBoundedTextSync } from "../files/bounded_read.ts";
import type { ServerConfig } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import { removeIfPresent, replacePrivateFile } from "../files/private_file.ts";
import type { ListHint, Lists } from "./session/live_session.ts";

/** Largest file of one server's lists (tool schemas can be long). */
export const MAX_LIST_CACHE_BYTES = 4 * 1024 * 1024;

/** Longest a list is kept, whatever `ttlMs` says: the SDK's bound (24 hours). */
export { MAX_CACHE_TTL_MS };

/** The layout of a file; another one is ignored (and replaced by the next save). */
const LAYOUT = 1;

/** The four lists, by their key in {@linkcode Lists}. */
export const LIST_KEYS = ["tools", "prompts", "resources", "templates"] as const;
type ListKey = (typeof LIST_KEYS)[number];

interface StoredList {
  items: unknown[];
  /** Epoch ms until which the list is fresh. */
  expiresAt: number;
  scope: "public" | "private";
}

interface StoredFile {
  layout: number;
  server: string;
  identity: string;
  /** The lists the server offered when these were saved. */
  offered: ListKey[];
  lists: Partial<Record<ListKey, StoredList>>;
}

/** Lists found fresh: every one the server offered, and until when. */
export interface CachedLists {
  lists: Lists;
  /** The earliest expiry among them (epoch ms). */
  expiresAt: number;
}

/** Options of {@linkcode ListCache}. */
export interface ListCacheOptions {
  /** The folder of the files: `lists/` in the state folder. */
  dir: string;
  log?: Log;
  /** @default Date.now */
  now?: () => number;
}

/** The lists kept for each server, in `dir`. */
export class ListCache {
  readonly dir: string;
  readonly #log?: Log;
  readonly #now: () => number;
  /** Saves run one after the other, so an older one never lands last. */
  #writing: Promise<unknown> = Promise.resolve();

  constructor(options: ListCacheOptions) {
    this.dir = options.dir;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  /** The file of `config`'s server. */
  fileOf(config: ServerConfig): string {
    const readable = config.name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40);
    return join(this.dir, `${readable}-${sha256(config.name).slice(0, 12)}.json`);
  }

  /** `config`'s lists when every one its server offered is still fresh; else `undefined`. */
  load(config: ServerConfig): CachedLists | undefined {
    let stored: StoredFile;
    try {
      const text = readBoundedTextSync(this.fileOf(config), {
        what: "the kept lists",
        maxBytes: MAX_LIST_CACHE_BYTES,
      });
      stored = JSON.parse(text) as StoredFile;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        this.#log?.debug(`kept lists not used: ${(error as Error).message}`);
      }
      return undefined;
    }
    if (
      stored?.layout !== LAYOUT || stored.server !== config.name ||
      stored.identity !== identityOf(config) || !Array.isArray(stored.offered)
    ) {
      return undefined;
    }
    const now = this.#now();
    const lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
    let expiresAt = Infinity;
    for (const key of stored.offered) {
      const list = stored.lists?.[key];
      if (!list || !Array.isArray(list.items) || !(now < list.expiresAt)) return undefined;
      (lists[key] as unknown[]) = list.items;
      expiresAt = Math.min(expiresAt, list.expiresAt);
    }
    return { lists, expiresAt };
  }

  /**
   * Keeps `lists` (as the connection holds them) with their `hints`: the lists with a
   * positive `ttlMs` whose scope allows it. A list the server offered that cannot be kept
   * makes the whole file useless, so it is removed instead.
   */
  save(
    config: ServerConfig,
    lists: Lists,
    hints: Partial<Record<ListKey, ListHint>>,
  ): Promise<void> {
    const file = this.fileOf(config);
    const offered = LIST_KEYS.filter((key) => hints[key] !== undefined);
    const stored: StoredFile = {
      layout: LAYOUT,
      server: config.name,
      identity: identityOf(config),
      offered,
      lists: {},
    };
    for (const key of offered) {
      const kept = keepable(hints[key]!, config);
      if (!kept) return this.#queue(() => removeIfPresent(file));
      stored.lists[key] = { items: lists[key], ...kept };
    }
    const text = JSON.stringify(stored);
    if (offered.length === 0 || text.length > MAX_LIST_CACHE_BYTES) {
      return this.#queue(() => removeIfPresent(file));
    }
    return this.#queue(async () => {
      await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await replacePrivateFile(file, text);
    });
  }

  /** Drops `config`'s kept lists (a `list_changed`, a list that cannot be kept). */
  invalidate(config: ServerConfig): Promise<void> {
    const file = this.fileOf(config);
    return this.#queue(() => removeIfPresent(file));
  }

  /** Waits for the saves under way. */
  async settled(): Promise<void> {
    await this.#writing;
  }

  #queue(work: () => Promise<unknown>): Promise<void> {
    const run = this.#writing.then(work).then(
      () => {},
      (error) => this.#log?.debug(`kept lists not written: ${(error as Error).message}`),
    );
    this.#writing = run;
    return run;
  }
}

/** How long a list may be kept and with what scope; `undefined`: not at all. */
function keepable(
  hint: ListHint,
  config: ServerConfig,
): { expiresAt: number; scope: "public" | "private" } | undefined {
  const ttl = typeof hint.ttlMs === "number" && Number.isFinite(hint.ttlMs) ? hint.ttlMs : 0;
  if (ttl <= 0) return undefined;
  const scope = hint.cacheScope === "public" ? "public" : "private";
  if (scope === "private" && config.transport !== "stdio" && config.auth) return undefined;
  return { expiresAt: hint.receivedAt + Math.min(ttl, MAX_CACHE_TTL_MS), scope };
}

/**
 * What decides which server an entry reaches and who asks, hashed: a changed command,
 * argument, folder, variable, URL, header or OAuth client finds no kept lists.
 */
export function identityOf(config: ServerConfig): string {
  const sorted = (record: Record<string, string>) =>
    Object.entries(record).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  const parts = config.transport === "stdio"
    ? [config.command, config.args, config.cwd ?? null, sorted(config.env)]
    : [
      config.url,
      sorted(config.headers),
      config.auth
        ? [config.auth.grant ?? null, config.auth.clientId ?? null, config.auth.scopes ?? null]
        : null,
    ];
  return sha256(
    JSON.stringify([LAYOUT, config.name, config.transport, config.protocol ?? null, parts]),
  );
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
