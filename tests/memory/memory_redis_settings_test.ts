import assert from "node:assert/strict";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { MemoryConfigError } from "../../lib/errors.ts";
import { redisConfigured, resolveRedisSettings } from "../../lib/redis/settings.ts";
import { Redactor } from "../../lib/redact/redact.ts";

const MEMORY: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };
const resolve = (env: Record<string, string>, memory: MemorySettings = MEMORY) =>
  resolveRedisSettings(memory, createEnvironment(env));

function configError(run: () => unknown): MemoryConfigError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof MemoryConfigError, String(error));
    return error;
  }
  assert.fail("expected a MemoryConfigError");
}

Deno.test("Redis settings: which variables select Redis", () => {
  assert.equal(redisConfigured(MEMORY, createEnvironment({})), false);
  assert.equal(redisConfigured(MEMORY, createEnvironment({ REDIS_HOST: "db" })), true);
  assert.equal(redisConfigured(MEMORY, createEnvironment({ REDIS_URL: "redis://db" })), true);
  assert.equal(redisConfigured(MEMORY, createEnvironment({ REDIS_HOST: "" })), false);
  assert.equal(
    redisConfigured({ ...MEMORY, clusterNodes: ["a:7000"] }, createEnvironment({})),
    true,
  );
});

Deno.test("Redis settings: REDIS_HOST and friends, with defaults", () => {
  const settings = resolve({ REDIS_HOST: "cache.internal", REDIS_DB: "4", REDIS_PASSWORD: "pw" });
  assert.deepEqual(settings.topology, {
    mode: "standalone",
    address: { host: "cache.internal", port: 6379 },
  });
  assert.equal(settings.db, 4);
  assert.equal(settings.password, "pw");
  assert.equal(settings.description, "Redis at cache.internal:6379 db 4");
  assert.equal(settings.target, "cache.internal:6379");
  assert.ok(!settings.identity.includes("pw"), "credentials must not name the journal");
  assert.equal(
    resolve({ REDIS_HOST: "h", REDIS_TLS: "yes" }).description,
    "Redis at h:6379 db 0, TLS",
  );
});

Deno.test("Redis settings: REDIS_URL wins, and the variables fill in what it leaves out", () => {
  const redactor = new Redactor();
  const url = resolveRedisSettings(
    MEMORY,
    createEnvironment({
      REDIS_URL: "rediss://app:s%40cret-pass@[::1]:6380/2",
      REDIS_HOST: "ignored",
      REDIS_PASSWORD: "ignored-too",
    }),
    redactor,
  );
  assert.deepEqual(url.topology, { mode: "standalone", address: { host: "::1", port: 6380 } });
  assert.equal(url.username, "app");
  assert.equal(url.password, "s@cret-pass");
  assert.equal(url.db, 2);
  assert.deepEqual(url.tls, {});
  assert.equal(url.description, "Redis at [::1]:6380 db 2, TLS");
  assert.equal(redactor.redact("password s@cret-pass"), "password [REDACTED]");

  const filled = resolve({ REDIS_URL: "redis://db.example", REDIS_PASSWORD: "p", REDIS_DB: "5" });
  assert.equal(filled.password, "p");
  assert.equal(filled.db, 5);
  assert.equal(filled.source, "REDIS_URL");
});

Deno.test("Redis settings: values that cannot work name the variable and where it was set", () => {
  const env = createEnvironment(
    {},
    new Map([["REDIS_PORT", "70000"]]),
    { path: "/work/.env", loaded: true, count: 1, problems: [] },
  );
  const port = configError(() => resolveRedisSettings(MEMORY, env));
  assert.equal(
    port.message,
    'Invalid configuration: REDIS_PORT is "70000", not a port number (1-65535)',
  );
  assert.equal(
    port.reason,
    "REDIS_PORT is set in /work/.env, and a port is a whole number from 1 to 65535",
  );
  assert.match(configError(() => resolve({ REDIS_DB: "one" })).message, /REDIS_DB is "one"/);
  assert.match(configError(() => resolve({ REDIS_TLS: "maybe" })).message, /REDIS_TLS is "maybe"/);
  const url = configError(() => resolve({ REDIS_URL: "redis://h:99999" }));
  assert.equal(
    url.message,
    'Invalid configuration: REDIS_URL is "redis://h:99999", which is not a redis:// or ' +
      "rediss:// URL",
  );
  assert.equal(url.reason, "REDIS_URL is set in the environment, and it is not a URL");
  assert.match(
    configError(() => resolve({}, { ...MEMORY, sentinels: ["a:1"], clusterNodes: ["b:2"] }))
      .message,
    /both set/,
  );
  assert.match(
    configError(() => resolve({}, { ...MEMORY, sentinels: ["no port:x"], sentinelName: "m" }))
      .message,
    /Memory\.sentinels\[0\] is "no port:x", not host:port/,
  );
});

Deno.test("Redis settings: Sentinel and Cluster addresses", () => {
  const sentinel = resolve(
    { REDIS_SENTINEL_PASSWORD: "spw", REDIS_PASSWORD: "mpw" },
    { ...MEMORY, sentinels: ["10.0.0.5", "[::1]:26380"], sentinelName: "mymaster" },
  );
  assert.deepEqual(sentinel.topology, {
    mode: "sentinel",
    sentinels: [{ host: "10.0.0.5", port: 26379 }, { host: "::1", port: 26380 }],
    name: "mymaster",
    sentinelPassword: "spw",
  });
  assert.equal(sentinel.target, "master 'mymaster' via 10.0.0.5:26379, [::1]:26380");
  const cluster = resolve({}, { ...MEMORY, clusterNodes: ["n1:7000", "n2"] });
  assert.deepEqual(cluster.topology, {
    mode: "cluster",
    nodes: [{ host: "n1", port: 7000 }, { host: "n2", port: 6379 }],
  });
  assert.equal(cluster.description, "Redis Cluster via n1:7000, n2:6379");
});
