/**
 * Where OAuth credentials live between sessions: per server, and inside a server per
 * authorization-server issuer (a client registration or token is only ever valid at the
 * issuer that minted it, RFC 6749 §2.2).
 *
 * {@linkcode TokenStore} is the seam: {@linkcode FileTokenStore} keeps one JSON file per
 * server under `~/.config/patchbay/oauth/` (mode 0600, written atomically);
 * `RedisTokenStore` (`redis_token_store.ts`) implements the same methods over one key per
 * server (`<prefix>:oauth:<server>` holding the same JSON document, `SCAN` for `list`).
 *
 * @module
 */

import { MAX_STORED_CREDENTIALS_BYTES } from "./answer_limits.ts";
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { basename, join } from "node:path";
import type { StoredDpopKey } from "./dpop_key.ts";
import { DenoPermissionError, PatchbayError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { configDir } from "../paths.ts";
import { chmodOwnerOnly, removeIfPresent, replacePrivateFile } from "../files/private_file.ts";
import { readBoundedText } from "../files/bounded_read.ts";

/** Version of the stored document; a reader refuses documents it does not understand. */
export const CREDENTIALS_FORMAT = 1;

/** File mode of credential files: readable and writable by the owner only. */
export const CREDENTIAL_FILE_MODE = 0o600;

/** Directory mode of the credential folder. */
export const CREDENTIAL_DIR_MODE = 0o700;

/** What one authorization server issued to patchbay for one MCP server. */
export interface IssuerCredentials {
  /** A client registered at run time (dynamic registration or a metadata-document URL). */
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  /** When `tokens` were obtained (ms since the epoch). */
  obtainedAt?: number;
  /** When the access token expires (ms since the epoch); absent when the server did not say. */
  expiresAt?: number;
}

/** Everything stored for one MCP server. */
export interface ServerCredentials {
  format: typeof CREDENTIALS_FORMAT;
  /** The server's name in servers_config.json. */
  server: string;
  /**
   * The URL the credentials were obtained for. Tokens are bound to it: if the entry's URL
   * changes, the stored tokens are not sent to the new address.
   */
  serverUrl: string;
  /** The issuer whose tokens are current (the one the transport presents). */
  issuer?: string;
  issuers: Record<string, IssuerCredentials>;
  /** Protected-resource and authorization-server metadata from the last discovery. */
  discovery?: OAuthDiscoveryState;
  /**
   * The DPoP key the tokens are bound to (`auth.dpop`): kept with them, since a bound token
   * is useless without it (dpop_key.ts).
   */
  dpopKey?: StoredDpopKey;
  /** ISO time of the last write. */
  updatedAt: string;
}

/**
 * Persistence of {@linkcode ServerCredentials}, one document per server. Writes replace
 * the whole document atomically, so readers never see half of one.
 */
export interface TokenStore {
  /** A human-readable location, for `patchbay auth list` and error messages. */
  readonly location: string;
  load(server: string, signal?: AbortSignal): Promise<ServerCredentials | undefined>;
  save(credentials: ServerCredentials, signal?: AbortSignal): Promise<void>;
  /** Removes a server's document; `false` when there was none. */
  delete(server: string, signal?: AbortSignal): Promise<boolean>;
  /** Every stored document, in server-name order. */
  list(signal?: AbortSignal): Promise<ServerCredentials[]>;
  /**
   * Releases what the store holds open (a connection). Call it last: a store may refuse
   * every later operation (`RedisTokenStore` does, rather than connect again).
   */
  close(): Promise<void>;
}

/** An empty document for `server` at `serverUrl`. */
export function emptyCredentials(server: string, serverUrl: string): ServerCredentials {
  return {
    format: CREDENTIALS_FORMAT,
    server,
    serverUrl,
    issuers: {},
    updatedAt: new Date().toISOString(),
  };
}

/**
 * The stored text of a document, stamped with the time of writing: the same bytes in a
 * file and in Redis, so a login can be moved between them by copying.
 */
export function serializeCredentials(credentials: ServerCredentials): string {
  const document: ServerCredentials = { ...credentials, updatedAt: new Date().toISOString() };
  return JSON.stringify(document, null, 2) + "\n";
}

/** Parses stored text; throws an `Error` saying what is wrong with it. */
export function parseCredentials(text: string): ServerCredentials {
  const parsed = JSON.parse(text) as ServerCredentials;
  if (parsed?.format !== CREDENTIALS_FORMAT || typeof parsed.server !== "string") {
    throw new Error(`unknown format ${JSON.stringify(parsed?.format)}`);
  }
  parsed.issuers ??= {};
  return parsed;
}

/** Options of {@linkcode FileTokenStore}. */
export interface FileTokenStoreOptions {
  /** Folder of the credential files. @default `<configDir()>/oauth` */
  dir?: string;
}

const FILE_SUFFIX = ".json";

/** Credentials kept as one JSON file per server, owner-only, replaced atomically. */
export class FileTokenStore implements TokenStore {
  readonly dir: string;

  constructor(options: FileTokenStoreOptions = {}) {
    this.dir = options.dir ?? join(configDir(), "oauth");
  }

  get location(): string {
    return this.dir;
  }

  /** The file holding `server`'s credentials. */
  async pathFor(server: string): Promise<string> {
    return join(this.dir, await fileNameFor(server));
  }

  async load(server: string): Promise<ServerCredentials | undefined> {
    const path = await this.pathFor(server);
    const document = await this.#read(path);
    // A file found under this name for a different server is a hash collision: ignore it.
    return document?.server === server ? document : undefined;
  }

  async save(credentials: ServerCredentials): Promise<void> {
    await this.#ensureDir();
    const path = await this.pathFor(credentials.server);
    try {
      await replacePrivateFile(path, serializeCredentials(credentials), CREDENTIAL_FILE_MODE);
    } catch (error) {
      throw storeError("write", path, error);
    }
  }

  async delete(server: string): Promise<boolean> {
    const path = await this.pathFor(server);
    try {
      return await removeIfPresent(path);
    } catch (error) {
      throw storeError("delete", path, error);
    }
  }

  async list(): Promise<ServerCredentials[]> {
    const documents: ServerCredentials[] = [];
    try {
      for await (const entry of Deno.readDir(this.dir)) {
        if (!entry.isFile || !entry.name.endsWith(FILE_SUFFIX)) continue;
        const document = await this.#read(join(this.dir, entry.name));
        if (document) documents.push(document);
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw storeError("read", this.dir, error);
    }
    return documents.sort((a, b) => a.server.localeCompare(b.server));
  }

  close(): Promise<void> {
    // Every operation opens and closes its own files: nothing stays open.
    return Promise.resolve();
  }

  async #read(path: string): Promise<ServerCredentials | undefined> {
    let text: string;
    try {
      // The mode is re-applied on every read: a file copied in or chmod-ed by hand is
      // tightened again before its secrets are used.
      await chmodOwnerOnly(path, CREDENTIAL_FILE_MODE);
      // A document this large holds a token no server would take: read, it would cost its
      // size in memory at every start. It is discarded unread; the next request logs in.
      if ((await Deno.stat(path)).size > MAX_STORED_CREDENTIALS_BYTES) {
        await removeIfPresent(path);
        return undefined;
      }
      text = await readBoundedText(path, {
        what: "the stored OAuth credentials",
        maxBytes: MAX_STORED_CREDENTIALS_BYTES,
        code: "oauth_failed",
      });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      if (error instanceof PatchbayError) throw error;
      throw storeError("read", path, error);
    }
    try {
      return parseCredentials(text);
    } catch (error) {
      throw new PatchbayError("oauth_failed", `Stored OAuth credentials are unreadable: ${path}`, {
        reason: `${basename(path)} is not a credentials document patchbay understands ` +
          `(${(error as Error).message})`,
        remedy: OAUTH_STEPS.deleteFile(path),
        cause: error,
      });
    }
  }

  async #ensureDir(): Promise<void> {
    try {
      await Deno.mkdir(this.dir, { recursive: true, mode: CREDENTIAL_DIR_MODE });
      await chmodOwnerOnly(this.dir, CREDENTIAL_DIR_MODE);
    } catch (error) {
      throw storeError("write", this.dir, error);
    }
  }
}

/**
 * A file name for a server name, which may hold any character: a readable slug plus a
 * hash of the exact name, so `my server` and `my-server` never share a file.
 */
export async function fileNameFor(server: string): Promise<string> {
  const slug = server.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[.-]+/, "")
    .slice(0, 48) || "server";
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(server));
  const hash = Array.from(new Uint8Array(digest).slice(0, 6))
    .map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${slug}-${hash}${FILE_SUFFIX}`;
}

function storeError(action: "read" | "write" | "delete", path: string, error: unknown) {
  const flag = denoPermissionFlag(error);
  if (flag) return new DenoPermissionError(flag, `${action} OAuth credentials at ${path}`, error);
  return new PatchbayError("oauth_failed", `Could not ${action} OAuth credentials at ${path}`, {
    reason: (error as Error).message,
    remedy: OAUTH_STEPS.fileAccess(path),
    cause: error,
  });
}
