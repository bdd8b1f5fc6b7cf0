/**
 * The Redis token store against a real redis-server on a random loopback port: the key per
 * server under Memory.key_prefix holding the credentials file's JSON, `SCAN` for the list,
 * logout deleting the key, and what happens while Redis is away (a new login is kept in an
 * owner-only file, or in memory when that fails, and moved to Redis once it answers; reads
 * answer from those copies or fail clearly), refuses a write, or the store was closed.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { PatchbayError, StoreConnectError, StoreFailedError } from "../../lib/errors.ts";
import { Logger, silentLog } from "../../lib/log/log.ts";
import { AuthorizationBroker, type OAuthEvent } from "../../lib/oauth/broker.ts";
import { describeOAuthEvent } from "../../lib/oauth/messages.ts";
import { PatchbayOAuthProvider } from "../../lib/oauth/provider.ts";
import { RedisTokenStore, tokenStoreFor } from "../../lib/oauth/redis_token_store.ts";
import {
  CREDENTIAL_FILE_MODE,
  emptyCredentials,
  FileTokenStore,
  type ServerCredentials,
} from "../../lib/oauth/token_store.ts";
import { tempDir } from "../support/temp_dir.ts";
import { httpEntry } from "../support/oauth_harness.ts";
import { rejection } from "../support/errors.ts";
import { RedisCluster, RedisServer } from "../support/redis.ts";

const REDIS: MemorySettings = { backend: "redis", keyPrefix: "patchbay" };

/** A login to two authorization servers, the second one current. */
function loggedIn(server: string, url = `https://${server}.example/mcp`): ServerCredentials {
  const record = emptyCredentials(server, url);
  for (const issuer of ["https://old-auth.example", "https://auth.example"]) {
    record.issuer = issuer;
    record.issuers[issuer] = {
      client: { client_id: `client-of-${server}`, issuer },
      tokens: {
        access_token: `access-${server}-${issuer.length}-7c1f`,
        refresh_token: `refresh-${server}-${issuer.length}-9e2d`,
        token_type: "Bearer",
        scope: "mcp",
        issuer,
      },
      obtainedAt: 1_700_000_000_000,
      expiresAt: 1_700_003_600_000,
    };
  }
  return record;
}

const withoutStamp = (record: ServerCredentials | undefined) =>
  record && { ...record, updatedAt: "" };

/** A store on `redis` writing its undelivered logins (and a debug log) into `dir`. */
function storeOn(
  env: Record<string, string>,
  dir: string,
  options: { memory?: MemorySettings; events?: OAuthEvent[]; logger?: Logger } = {},
) {
  return new RedisTokenStore({
    memory: options.memory ?? REDIS,
    env: createEnvironment(env),
    undeliveredDir: join(dir, "undelivered"),
    onEvent: (event) => options.events?.push(event),
    log: options.logger?.child("store"),
    connectBudgetMs: 500,
  });
}

Deno.test("Redis token store: one key per server under Memory.key_prefix, the file's JSON, no expiry", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const memory = { ...REDIS, keyPrefix: "team-a", ttlSeconds: 60 };
  const store = storeOn(redis.env, dir.path, { memory });
  try {
    const record = loggedIn("notes: shared");
    await store.save(record);
    const loaded = await store.load("notes: shared");
    assert.deepEqual(withoutStamp(loaded), withoutStamp(record));
    // Both issuers keep their own client and tokens.
    assert.equal(loaded?.issuer, "https://auth.example");
    assert.equal(
      loaded?.issuers["https://old-auth.example"].tokens?.refresh_token,
      record.issuers["https://old-auth.example"].tokens?.refresh_token,
    );
    assert.equal(await store.load("other"), undefined);

    const key = "team-a:oauth:notes: shared";
    assert.equal(store.keyFor("notes: shared"), key);
    assert.deepEqual(
      (await redis.cli("KEYS", "*")).split("\n"),
      [key],
      "nothing else is written (no memory keys, no index)",
    );
    // Memory.ttl_seconds is for conversations: a login never expires from the store.
    assert.equal(await redis.cli("TTL", key), "-1");
    // The very text a credentials file holds.
    const files = new FileTokenStore({ dir: join(dir.path, "files") });
    await files.save(loaded!);
    const fileText = await Deno.readTextFile(await files.pathFor("notes: shared"));
    const stamp = (text: string) => text.replace(/"updatedAt": "[^"]+"/, '"updatedAt": ""');
    assert.equal(stamp(await redis.cli("GET", key)), stamp(fileText));
    assert.equal(store.location, `Redis at 127.0.0.1:${redis.port} db 0, keys team-a:oauth:*`);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: list finds every server of its prefix only; delete removes the key", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  // Glob characters in the prefix are matched literally: unescaped, `[x]` and `\:` in the
  // SCAN pattern would match the keys of prefix `pbx` instead of this store's own.
  const glob = storeOn(redis.env, dir.path, { memory: { ...REDIS, keyPrefix: "pb[x]\\" } });
  const other = storeOn(redis.env, dir.path, { memory: { ...REDIS, keyPrefix: "pbx" } });
  try {
    for (const server of ["zeta", "alpha", "mid dle"]) await glob.save(loggedIn(server));
    await other.save(loggedIn("foreign"));
    await redis.cli("SET", "pb[x]\\:oauth-not:x", "unrelated");

    assert.deepEqual((await glob.list()).map((r) => r.server), ["alpha", "mid dle", "zeta"]);
    assert.deepEqual((await other.list()).map((r) => r.server), ["foreign"]);

    assert.equal(await glob.delete("zeta"), true);
    assert.equal(await redis.cli("EXISTS", "pb[x]\\:oauth:zeta"), "0");
    assert.equal(await glob.delete("zeta"), false, "nothing left to delete");
    assert.deepEqual((await glob.list()).map((r) => r.server), ["alpha", "mid dle"]);
    assert.equal(await redis.cli("EXISTS", "pbx:oauth:foreign"), "1");
  } finally {
    await glob.close();
    await other.close();
  }
});

Deno.test("Redis token store: a damaged document is explained, naming the key to delete", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const store = storeOn(redis.env, dir.path);
  try {
    await redis.cli("SET", "patchbay:oauth:notes", "{ truncated");
    const error = await rejection(() => store.load("notes"), PatchbayError);
    assert.match(error.message, /^Stored OAuth credentials are unreadable: patchbay:oauth:notes/);
    assert.match(
      error.remedy,
      /^delete the key \(redis-cli DEL 'patchbay:oauth:notes'\) and log in again/,
    );
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store while Redis is away: a new login is kept locally, read from there and moved back; other reads fail clearly", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const events: OAuthEvent[] = [];
  const logger = new Logger({ file: join(dir.path, "patchbay.log"), level: "debug" });
  const store = storeOn(redis.env, dir.path, { events, logger });
  try {
    await store.save(loggedIn("notes"));
    await redis.stop();

    // With nothing kept locally, reading, listing and logging out say what is wrong and
    // what to do; nothing else (no browser login) may stand in for a login that exists but
    // cannot be read.
    const attempts = [() => store.load("notes"), () => store.list(), () => store.delete("notes")];
    for (const attempt of attempts) {
      const error = await rejection(attempt, StoreConnectError);
      assert.equal(
        error.message,
        `Could not connect to Redis at 127.0.0.1:${redis.port} db 0: connection refused`,
      );
      assert.match(error.reason, /nothing is listening at 127\.0\.0\.1:\d+/);
      assert.match(error.reason, /keeps OAuth logins there because Memory\.backend is "redis"/);
      assert.match(error.remedy, /^start the store, fix the REDIS_\* variables/);
      assert.match(error.remedy, /then run patchbay again \(no browser login starts/);
      assert.match(error.remedy, /set Memory\.backend to "file" \(or "auto"\)/);
      assert.doesNotMatch(error.remedy, /\/memory/, "turning memory off does nothing for logins");
    }

    // A login obtained now (a refresh that rotated the refresh token, say) is not lost.
    const fresh = loggedIn("notes");
    fresh.issuers["https://auth.example"].tokens!.refresh_token = "rotated-refresh-5a5a";
    await store.save(fresh);
    await store.save(fresh);
    const kept = new FileTokenStore({ dir: store.undeliveredDir });
    const path = await kept.pathFor("notes");
    assert.equal((await Deno.stat(path)).mode! & 0o777, CREDENTIAL_FILE_MODE);
    assert.deepEqual(events.map((e) => e.type), ["login_kept_locally"], "told once");
    assert.match(
      describeOAuthEvent(events[0])!,
      new RegExp(
        `^Could not save the login to 'notes' in Redis at 127\\.0\\.0\\.1:${redis.port} db 0 ` +
          `\\(Could not connect to Redis at [^)]*: connection refused\\)\\. It is kept in ` +
          `${path.replaceAll(".", "\\.")} \\(readable by you only\\)`,
      ),
    );
    // Until Redis answers, this process (and the next) reads and lists the kept copies,
    // saying once that others may exist; a server with no kept copy still fails.
    const whileAway = await store.load("notes");
    assert.equal(
      whileAway?.issuers["https://auth.example"].tokens?.refresh_token,
      "rotated-refresh-5a5a",
    );
    assert.deepEqual((await store.list()).map((r) => r.server), ["notes"]);
    await rejection(() => store.load("other"), StoreConnectError);
    assert.deepEqual(events.map((e) => e.type), ["login_kept_locally", "logins_read_locally"]);
    assert.equal(
      describeOAuthEvent(events[1]),
      `Could not read the OAuth logins in Redis at 127.0.0.1:${redis.port} db 0 (Could not ` +
        `connect to Redis at 127.0.0.1:${redis.port} db 0: connection refused). Until it answers, ` +
        `only the logins kept locally in ${store.undeliveredDir} are available.`,
    );

    await redis.restart();
    const back = await store.load("notes");
    assert.equal(
      back?.issuers["https://auth.example"].tokens?.refresh_token,
      "rotated-refresh-5a5a",
    );
    const inRedis = JSON.parse(await redis.cli("GET", "patchbay:oauth:notes"));
    assert.equal(
      inRedis.issuers["https://auth.example"].tokens.refresh_token,
      "rotated-refresh-5a5a",
    );
    assert.equal(await kept.load("notes"), undefined, "the local copy is gone once delivered");
  } finally {
    await store.close();
    logger.close();
  }
  const log = await Deno.readTextFile(join(dir.path, "patchbay.log"));
  assert.match(log, /could not save the login to 'notes'/);
  assert.ok(!/access-notes|refresh-notes|rotated-refresh/.test(log), "no token in the log");
});

Deno.test("Redis token store: a login neither Redis nor its file takes stays in memory for the session, and says so", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  // A folder that cannot be created (a dangling link in its place), yet reads as empty.
  await Deno.symlink(join(dir.path, "missing"), join(dir.path, "undelivered"));
  const events: OAuthEvent[] = [];
  const store = storeOn(redis.env, dir.path, { events });
  const provider = new PatchbayOAuthProvider({
    server: httpEntry("notes", "https://notes.example/mcp"),
    store,
    broker: new AuthorizationBroker(),
    log: silentLog,
  });
  const issuer = "https://auth.example";
  try {
    await store.save(loggedIn("notes"));
    assert.equal((await provider.tokens())?.access_token, "access-notes-20-7c1f");
    await redis.stop();

    // A refresh that rotated the tokens while neither place can keep them.
    const rotated = { access_token: "access-rotated", refresh_token: "refresh-rotated" };
    const error = await rejection(
      () => provider.saveTokens({ ...rotated, token_type: "Bearer" }, { issuer }),
      PatchbayError,
    );
    const path = await new FileTokenStore({ dir: store.undeliveredDir }).pathFor("notes");
    assert.equal(
      error.message,
      "The login to 'notes' exists only in memory for this session: it could not be saved " +
        `in Redis at 127.0.0.1:${redis.port} db 0 or kept in ${path}`,
    );
    assert.match(error.reason, /^Could not connect to Redis at [^;]*: connection refused/);
    assert.match(error.reason, /; and Could not write OAuth credentials at .*undelivered/);
    assert.match(error.remedy, /then log in again \(patchbay auth login notes\)/);
    assert.deepEqual(events, [], "not kept locally: nothing says it is");

    // This session goes on with it, and re-reads find it too.
    assert.equal((await provider.tokens())?.access_token, "access-rotated");
    assert.equal((await provider.tokens({ issuer }))?.access_token, "access-rotated");
    assert.deepEqual((await store.list()).map((r) => r.server), ["notes"]);

    // Should Redis answer before the session ends, the login reaches it.
    await redis.restart();
    assert.equal(
      (await store.load("notes"))?.issuers[issuer].tokens?.access_token,
      "access-rotated",
    );
    const inRedis = JSON.parse(await redis.cli("GET", "patchbay:oauth:notes"));
    assert.equal(inRedis.issuers[issuer].tokens.refresh_token, "refresh-rotated");
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: a write Redis refuses fails with its explanation, and nothing is kept", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  // An ACL user that may read but not SET: Redis answers, and refuses.
  await redis.cli("ACL", "SETUSER", "reader", "on", ">reader-secret", "~*", "&*", "+@all", "-set");
  const env = { ...redis.env, REDIS_USERNAME: "reader", REDIS_PASSWORD: "reader-secret" };
  const events: OAuthEvent[] = [];
  const store = storeOn(env, dir.path, { events });
  try {
    const error = await rejection(() => store.save(loggedIn("notes")), StoreFailedError);
    assert.equal(error.message, `Redis at 127.0.0.1:${redis.port} db 0 refused a command`);
    assert.match(error.reason, /^NOPERM /);
    assert.equal(
      error.remedy,
      "run with --debug for details, then log in again if a login could not be saved",
    );
    assert.deepEqual(events, []);
    assert.deepEqual(await new FileTokenStore({ dir: store.undeliveredDir }).list(), []);
    // Reading still works: no copy waits for a delivery that would be refused as well.
    assert.equal(await store.load("notes"), undefined);
    assert.deepEqual(await store.list(), []);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: a kept login that Redis refuses on its return is still used, and delivered later", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const store = storeOn(redis.env, dir.path);
  try {
    await redis.stop();
    const fresh = loggedIn("notes");
    fresh.issuers["https://auth.example"].tokens!.refresh_token = "rotated-refresh-6b6b";
    await store.save(fresh);
    await redis.restart();
    // Back, but without SET for this user: the delivery is refused.
    await redis.cli("ACL", "SETUSER", "default", "-set");
    const refused = await store.load("notes");
    assert.equal(
      refused?.issuers["https://auth.example"].tokens?.refresh_token,
      "rotated-refresh-6b6b",
    );
    const kept = new FileTokenStore({ dir: store.undeliveredDir });
    assert.ok(await kept.load("notes"), "the copy waits for a later delivery");
    assert.equal(await redis.cli("EXISTS", "patchbay:oauth:notes"), "0");

    await redis.cli("ACL", "SETUSER", "default", "+set");
    await store.load("notes");
    const inRedis = JSON.parse(await redis.cli("GET", "patchbay:oauth:notes"));
    assert.equal(
      inRedis.issuers["https://auth.example"].tokens.refresh_token,
      "rotated-refresh-6b6b",
    );
    assert.equal(await kept.load("notes"), undefined);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: closed, it refuses every operation and connects no more", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const store = storeOn(redis.env, dir.path);
  await store.save(loggedIn("notes"));
  await store.close();
  const patchbayClients = async () =>
    (await redis.cli("CLIENT", "LIST")).split("\n").filter((line) =>
      line.includes(" name=patchbay ")
    );
  const operations = [
    () => store.load("notes"),
    () => store.save(loggedIn("notes")),
    () => store.list(),
    () => store.delete("notes"),
  ];
  for (const operation of operations) {
    const error = await rejection(operation, Error);
    assert.equal(error.message, "the Redis token store is closed");
  }
  assert.deepEqual(await patchbayClients(), []);
  assert.equal(await redis.cli("EXISTS", "patchbay:oauth:notes"), "1", "the login stays");
  await store.close();
});

Deno.test("Redis token store: a login kept locally, then logged out of, is told again in the next outage", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const events: OAuthEvent[] = [];
  const store = storeOn(redis.env, dir.path, { events });
  try {
    await redis.stop();
    await store.save(loggedIn("notes"));
    await redis.restart();
    assert.equal(await store.delete("notes"), true, "the kept copy was the login");
    await redis.stop();
    await store.save(loggedIn("notes"));
    assert.deepEqual(events.map((e) => e.type), ["login_kept_locally", "login_kept_locally"]);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: a restart of Redis between two operations goes unnoticed", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start({ persistence: "aof" });
  const store = storeOn(redis.env, dir.path);
  try {
    await store.save(loggedIn("notes"));
    await redis.restart();
    assert.equal((await store.load("notes"))?.server, "notes");
    await redis.restart();
    await store.save(loggedIn("other"));
    assert.deepEqual((await store.list()).map((r) => r.server), ["notes", "other"]);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store: an older local copy loses to what Redis holds", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const store = storeOn(redis.env, dir.path);
  try {
    const kept = new FileTokenStore({ dir: store.undeliveredDir });
    const stale = loggedIn("notes");
    stale.issuers["https://auth.example"].tokens!.access_token = "stale-access";
    await kept.save(stale);
    // Another process saved a newer login to Redis after this copy was kept.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const other = storeOn(redis.env, join(dir.path, "other"));
    await other.save(loggedIn("notes"));
    await other.close();

    const [listed] = await store.list();
    assert.equal(
      listed.issuers["https://auth.example"].tokens?.access_token,
      "access-notes-20-7c1f",
    );
    assert.equal(await kept.load("notes"), undefined);
  } finally {
    await store.close();
  }
});

Deno.test("Redis token store in a cluster: list walks every master", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using cluster = await RedisCluster.start();
  const memory = { ...REDIS, clusterNodes: cluster.addresses.slice(0, 1) };
  const store = storeOn({}, dir.path, { memory });
  try {
    const servers = Array.from({ length: 12 }, (_, i) => `server-${i}`);
    for (const server of servers) await store.save(loggedIn(server));
    const holders = await Promise.all(
      cluster.nodes.map(async (node) => (await node.cli("DBSIZE")) !== "0"),
    );
    assert.ok(holders.filter(Boolean).length > 1, "the keys are spread over several nodes");
    assert.deepEqual((await store.list()).map((r) => r.server), servers.toSorted());
  } finally {
    await store.close();
  }
});

Deno.test("tokenStoreFor: Redis only when Memory.backend is redis", () => {
  const env = createEnvironment({ REDIS_HOST: "127.0.0.1" });
  assert.ok(tokenStoreFor(REDIS, env) instanceof RedisTokenStore);
  for (const backend of ["auto", "file", "off"] as const) {
    assert.ok(tokenStoreFor({ ...REDIS, backend }, env) instanceof FileTokenStore, backend);
  }
});

Deno.test("provider on the Redis store: Redis gone mid-session keeps the login in memory; a first read fails clearly", async () => {
  await using dir = await tempDir("patchbay-tokens-");
  await using redis = await RedisServer.start();
  const store = storeOn(redis.env, dir.path);
  const provider = (name: string) =>
    new PatchbayOAuthProvider({
      server: httpEntry(name, `https://${name}.example/mcp`),
      store,
      broker: new AuthorizationBroker(),
      log: silentLog,
    });
  try {
    await store.save(loggedIn("notes"));
    const inSession = provider("notes");
    const issuer = "https://auth.example";
    assert.equal((await inSession.tokens())?.access_token, "access-notes-20-7c1f");
    await redis.stop();
    // Before deciding on a refresh the SDK asks again (another process may have
    // refreshed); with the store away, this process's copy is still the latest.
    assert.equal((await inSession.tokens({ issuer }))?.access_token, "access-notes-20-7c1f");
    await rejection(() => provider("notes").tokens(), StoreConnectError);
  } finally {
    await store.close();
  }
});
