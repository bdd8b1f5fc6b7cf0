/**
 * The OAuth token store: owner-only files written atomically, per server and issuer,
 * the mode re-applied to files found loosened, and tokens bound to the URL they were
 * obtained for. Also the summaries `patchbay auth list` prints.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { PatchbayError } from "../../lib/errors.ts";
import { silentLog } from "../../lib/log/log.ts";
import { AuthorizationBroker } from "../../lib/oauth/broker.ts";
import { relativeTime, summarizeLogin } from "../../lib/oauth/messages.ts";
import { PatchbayOAuthProvider } from "../../lib/oauth/provider.ts";
import {
  CREDENTIAL_DIR_MODE,
  CREDENTIAL_FILE_MODE,
  emptyCredentials,
  fileNameFor,
  FileTokenStore,
  type ServerCredentials,
} from "../../lib/oauth/token_store.ts";
import { rejection } from "../support/errors.ts";
import { httpEntry } from "../support/oauth_harness.ts";
import { tempDir } from "../support/temp_dir.ts";

async function tempStore() {
  const folder = await tempDir("patchbay-store-");
  const dir = folder.path;
  return {
    dir,
    store: new FileTokenStore({ dir: join(dir, "oauth") }),
    [Symbol.asyncDispose]: () => folder[Symbol.asyncDispose](),
  };
}

function loggedIn(server: string, url: string, issuer: string, expiresAt?: number) {
  const record = emptyCredentials(server, url);
  record.issuer = issuer;
  record.issuers[issuer] = {
    tokens: {
      access_token: `at-${server}`,
      refresh_token: `rt-${server}`,
      token_type: "Bearer",
      scope: "read write",
      issuer,
    },
    obtainedAt: Date.now(),
    expiresAt,
  };
  return record;
}

const mode = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test("store: round trip, owner-only file in an owner-only folder", async () => {
  await using t = await tempStore();
  const record = loggedIn("notes", "https://notes.example/mcp", "https://auth.example", 1e12);
  await t.store.save(record);
  const loaded = await t.store.load("notes");
  assert.deepEqual({ ...loaded, updatedAt: "" }, { ...record, updatedAt: "" });
  assert.equal(await mode(await t.store.pathFor("notes")), CREDENTIAL_FILE_MODE);
  assert.equal(await mode(t.store.dir), CREDENTIAL_DIR_MODE);
  assert.equal(await t.store.load("other"), undefined);
});

Deno.test("store: the mode is re-applied to an existing file and folder that were loosened", async () => {
  await using t = await tempStore();
  await t.store.save(loggedIn("notes", "https://notes.example/mcp", "https://auth.example"));
  const file = await t.store.pathFor("notes");
  await Deno.chmod(file, 0o644);
  await Deno.chmod(t.store.dir, 0o755);
  await t.store.load("notes");
  assert.equal(await mode(file), 0o600, "tightened on read");
  await Deno.chmod(file, 0o666);
  await t.store.save(loggedIn("notes", "https://notes.example/mcp", "https://auth.example"));
  assert.equal(await mode(file), 0o600, "tightened on write");
  assert.equal(await mode(t.store.dir), 0o700);
});

Deno.test("store: concurrent writes leave one whole document and no temporary files", async () => {
  await using t = await tempStore();
  const writes = Array.from({ length: 25 }, (_, i) => {
    const record = loggedIn("busy", "https://busy.example/mcp", `https://auth${i}.example`);
    return t.store.save(record);
  });
  await Promise.all(writes);
  const loaded = await t.store.load("busy");
  assert.match(loaded?.issuer ?? "", /^https:\/\/auth\d+\.example$/);
  const names = [...Deno.readDirSync(t.store.dir)].map((entry) => entry.name);
  assert.deepEqual(names, [await fileNameFor("busy")]);
});

Deno.test("store: file names are safe and distinct for any server name", async () => {
  const names = ["my server", "my-server", "../../etc/passwd", "Notion", "notion", "ü/ß", ""];
  const files = await Promise.all(names.map(fileNameFor));
  assert.equal(new Set(files).size, names.length);
  for (const file of files) assert.match(file, /^[a-z0-9._-]+\.json$/);
  assert.ok(!files.some((file) => file.startsWith(".")));
});

Deno.test("store: list sorts by server, skips other files; a corrupt file is explained", async () => {
  await using t = await tempStore();
  await t.store.save(loggedIn("zeta", "https://z.example/mcp", "https://auth.example"));
  await t.store.save(loggedIn("alpha", "https://a.example/mcp", "https://auth.example"));
  await Deno.writeTextFile(join(t.store.dir, "notes.txt"), "not credentials");
  assert.deepEqual((await t.store.list()).map((r) => r.server), ["alpha", "zeta"]);
  assert.equal(await t.store.delete("zeta"), true);
  assert.equal(await t.store.delete("zeta"), false);

  await Deno.writeTextFile(await t.store.pathFor("alpha"), "{ truncated");
  const error = await t.store.load("alpha").then(() => undefined, (e) => e);
  assert.ok(error instanceof PatchbayError);
  assert.match(error.message, /Stored OAuth credentials are unreadable/);
  assert.match(error.remedy, /^delete the file \(rm .*\) and log in again/);
});

Deno.test("provider: stored tokens are bound to the URL they were obtained for", async () => {
  await using t = await tempStore();
  await t.store.save(loggedIn("notes", "https://notes.example/mcp", "https://auth.example"));
  const make = (url: string) =>
    new PatchbayOAuthProvider({
      server: httpEntry("notes", url),
      store: t.store,
      broker: new AuthorizationBroker(),
      log: silentLog,
    });
  assert.equal((await make("https://notes.example/mcp").tokens())?.access_token, "at-notes");
  assert.equal(await make("https://evil.example/mcp").tokens(), undefined);
});

Deno.test("provider: a stored login damaged during the session is reported when read again", async () => {
  await using t = await tempStore();
  const issuer = "https://auth.example";
  await t.store.save(loggedIn("notes", "https://notes.example/mcp", issuer));
  const provider = new PatchbayOAuthProvider({
    server: httpEntry("notes", "https://notes.example/mcp"),
    store: t.store,
    broker: new AuthorizationBroker(),
    log: silentLog,
  });
  assert.equal((await provider.tokens())?.access_token, "at-notes");
  await Deno.writeTextFile(await t.store.pathFor("notes"), "{ truncated");
  // The re-read before a refresh decision: only an unreachable store is worked around with
  // the login in memory; a damaged document must reach the person.
  const error = await rejection(() => provider.tokens({ issuer }), PatchbayError);
  assert.match(error.message, /^Stored OAuth credentials are unreadable/);
});

Deno.test("auth list summaries: states, expiry, scopes, never a token", () => {
  const now = Date.parse("2026-01-01T12:00:00Z");
  const url = "https://notes.example/mcp";
  const record: ServerCredentials = loggedIn("notes", url, "https://auth.example", now + 3_600_000);
  const fresh = summarizeLogin("notes", url, record, now);
  assert.equal(fresh.state, "logged_in");
  assert.deepEqual(fresh.scopes, ["read", "write"]);
  assert.equal(fresh.expiresAt, "2026-01-01T13:00:00.000Z");
  assert.ok(!JSON.stringify(fresh).includes("at-notes") && !JSON.stringify(fresh).includes("rt-"));
  assert.equal(summarizeLogin("notes", url, record, now + 7_200_000).state, "expired_refreshable");
  delete record.issuers["https://auth.example"].tokens!.refresh_token;
  assert.equal(summarizeLogin("notes", url, record, now + 7_200_000).state, "expired");
  assert.equal(
    summarizeLogin("notes", "https://moved.example/mcp", record, now).state,
    "url_changed",
  );
  assert.equal(summarizeLogin("notes", url, undefined, now).state, "not_logged_in");
  assert.equal(summarizeLogin("gone", undefined, record, now).configured, false);

  assert.equal(relativeTime(now + 3_600_000, now), "in 60 min");
  assert.equal(relativeTime(now - 30_000, now), "30 s ago");
  assert.equal(relativeTime(now + 5 * 3_600_000, now), "in 5 h");
  assert.equal(relativeTime(now - 3 * 86_400_000, now), "3 days ago");
});
