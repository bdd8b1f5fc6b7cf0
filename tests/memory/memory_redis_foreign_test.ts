/**
 * A service that is not Redis on the port configured for Redis: real listeners (an HTTP
 * server, a TLS server, an SSH-like banner, an unknown protocol) answer ioredis's
 * handshake, and the error names what answered instead of the parser's raw complaint.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createEnvironment } from "../../lib/env.ts";
import { StoreConnectError } from "../../lib/errors.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";
import { openMemory } from "../../lib/memory/mod.ts";
import { silentListener } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";
import { selfSignedCertificate } from "../support/tls.ts";
import { rejection } from "../support/errors.ts";

/** Opens the store strictly at 127.0.0.1:`port` and returns the connection error. */
async function connectError(port: number, dir: { path: string }): Promise<StoreConnectError> {
  return await rejection(
    () =>
      openMemory(
        { backend: "auto", keyPrefix: "patchbay" },
        createEnvironment({ REDIS_HOST: "127.0.0.1", REDIS_PORT: String(port) }),
        { dataDir: dir.path, strict: true },
      ),
    StoreConnectError,
  );
}

Deno.test("an HTTP server on the Redis port: 'not a Redis server (it sent HTTP)'", async () => {
  await using dir = await tempDir();
  await using http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("<h1>hello</h1>", { headers: { "content-type": "text/html" } }),
  );
  const error = await connectError(http.addr.port, dir);
  const target = `127.0.0.1:${http.addr.port}`;
  assert.equal(error.message, `Could not connect to Redis at ${target} db 0: not a Redis server`);
  assert.equal(
    error.reason,
    `something that is not Redis answers at ${target} (it sent HTTP: a web server listens there)`,
  );
  assert.equal(error.remedy, ROWS.store.remedy.repl);
  assert.doesNotMatch(`${error.message} ${error.reason}`, /RESP|Please report/);
});

Deno.test("a TLS port reached without TLS: the remedy is REDIS_TLS / rediss://", async () => {
  await using dir = await tempDir();
  const { cert, key } = await selfSignedCertificate(dir.path);
  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(cert),
    key: await Deno.readTextFile(key),
  });
  // The handshake fails on the plain-text command, and the server answers with an alert.
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.handshake().catch(() => {});
      conn.close();
    }
  })();
  try {
    const port = listener.addr.port;
    const error = await connectError(port, dir);
    assert.equal(
      error.message,
      `Could not connect to Redis at 127.0.0.1:${port} db 0: the port expects TLS`,
    );
    assert.match(error.reason, /answered with a TLS alert: it speaks TLS/);
    assert.match(error.remedy, /REDIS_TLS=true \(or use a rediss:\/\/ REDIS_URL\)/);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
});

Deno.test("an SSH banner or an unknown protocol: named by the first byte", async () => {
  await using dir = await tempDir();
  await using ssh = silentListener({ greeting: "SSH-2.0-OpenSSH_9.2\r\n" });
  const sshError = await connectError(ssh.port, dir);
  assert.equal(
    sshError.message,
    `Could not connect to Redis at 127.0.0.1:${ssh.port} db 0: not a Redis server`,
  );
  assert.match(sshError.reason, /\(it sent what looks like an SSH banner\)$/);

  await using other = silentListener({ greeting: "xyzzy\r\n" });
  const otherError = await connectError(other.port, dir);
  assert.match(
    otherError.reason,
    /\(its reply began with "x", which no Redis reply begins with\)$/,
  );
  assert.equal(otherError.remedy, ROWS.store.remedy.repl);
});
