/**
 * Proxies for MCP servers over HTTP: HTTP_PROXY / HTTPS_PROXY / NO_PROXY from `.env` (never
 * in the process environment, which Deno's fetch would read by itself) carry streamable HTTP
 * and SSE connections, NO_PROXY exempts hosts, and a proxy that fails is named as the cause.
 * The proxy is the loopback one of `tests/support/proxy.ts`; its `routes` stand in for a
 * network only the proxy reaches.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ServerConfig } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ProxyRouter } from "../../lib/proxy.ts";
import { configWith, runPatchbay, sandbox, WITHOUT_PROXIES, writeConfig } from "../support/cli.ts";
import { startTestProxy } from "../support/proxy.ts";
import {
  assumingClosed,
  firstText,
  freePort,
  httpEntry,
  RecordingLog,
  startEverythingHttp,
  startManager,
} from "../support/servers.ts";

/** An environment whose `values` come from .env only. */
const dotenv = (values: Record<string, string>) =>
  createEnvironment({}, new Map(Object.entries(values)));

const started = (servers: ServerConfig[], env: ReturnType<typeof dotenv>) =>
  startManager({ servers, env });

Deno.test("a server reachable only through the proxy in .env connects (streamable HTTP and SSE)", async () => {
  await using streamable = await startEverythingHttp("streamableHttp");
  await using sse = await startEverythingHttp("sse");
  // Addresses where nothing listens: only the proxy knows where they lead.
  const [hiddenStreamable, hiddenSse] = [freePort(), freePort()];
  await using proxy = startTestProxy({
    routes: {
      [`127.0.0.1:${hiddenStreamable}`]: streamable.port,
      [`127.0.0.1:${hiddenSse}`]: sse.port,
    },
  });
  await assumingClosed(hiddenStreamable, () =>
    assumingClosed(hiddenSse, async () => {
      await using session = await started([
        httpEntry("inside", `http://127.0.0.1:${hiddenStreamable}/mcp`),
        httpEntry("legacy", `http://127.0.0.1:${hiddenSse}/sse`, { transport: "sse" }),
      ], dotenv({ HTTP_PROXY: proxy.url }));
      const { manager, log } = session;
      for (const status of session.states) {
        assert.equal(status.state, "connected", `${status.name}: ${status.error?.reason}`);
      }
      assert.equal(firstText(await manager.callTool("inside__echo", { message: "a" })), "Echo: a");
      assert.equal(firstText(await manager.callTool("legacy__echo", { message: "b" })), "Echo: b");
      assert.ok(
        proxy.requestLines.includes(
          `POST http://127.0.0.1:${hiddenStreamable}/mcp HTTP/1.1`,
        ),
        proxy.requestLines.join("\n"),
      );
      assert.ok(
        proxy.requestLines.includes(`GET http://127.0.0.1:${hiddenSse}/sse HTTP/1.1`),
        proxy.requestLines.join("\n"),
      );
      assert.equal(
        log.matching(/go through the proxy/).length,
        2,
        "each origin's route is logged once",
      );
    }));
});

Deno.test("NO_PROXY in .env exempts a server: it is reached directly, the others through the proxy", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  const hidden = freePort();
  await using proxy = startTestProxy({ routes: { [`127.0.0.1:${hidden}`]: server.port } });
  await assumingClosed(hidden, async () => {
    await using session = await started([
      httpEntry("direct", `${server.origin}/mcp`),
      httpEntry("proxied", `http://127.0.0.1:${hidden}/mcp`),
    ], dotenv({ HTTP_PROXY: proxy.url, NO_PROXY: `localhost, 127.0.0.1:${server.port}` }));
    for (const status of session.states) {
      assert.equal(status.state, "connected", `${status.name}: ${status.error?.reason}`);
    }
    await session.manager.callTool("direct__echo", { message: "x" });
    assert.ok(proxy.requestLines.length > 0, "the proxied server went through the proxy");
    const direct = proxy.requestLines.filter((line) => line.includes(`:${server.port}/`));
    assert.deepEqual(direct, [], "the exempt server was reached through the proxy");
  });
});

Deno.test("NO_PROXY in .env wins over a proxy in the process environment (plain HTTP)", async () => {
  await using server = await Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("direct"),
  );
  const deadProxy = freePort();
  const url = `http://127.0.0.1:${server.addr.port}/`;
  await assumingClosed(deadProxy, async () => {
    // Deno's own fetch would send this through HTTP_PROXY and fail.
    const processEnv = { HTTP_PROXY: `http://127.0.0.1:${deadProxy}` };
    using router = new ProxyRouter({
      env: createEnvironment(processEnv, new Map([["NO_PROXY", "127.0.0.1"]])),
      processEnv: { get: (name) => processEnv[name as keyof typeof processEnv] },
    });
    assert.equal(router.route(url), undefined);
    const response = await router.fetch(url);
    assert.equal(await response.text(), "direct");
  });
});

Deno.test("NO_PROXY in .env cannot beat a process proxy for https: patchbay says so once", async () => {
  const [deadProxy, closed] = [freePort(), freePort()];
  const processEnv = { HTTPS_PROXY: `http://127.0.0.1:${deadProxy}` };
  const log = new RecordingLog();
  using router = new ProxyRouter({
    env: createEnvironment(processEnv, new Map([["NO_PROXY", "127.0.0.1"]])),
    processEnv: { get: (name) => processEnv[name as keyof typeof processEnv] },
    log,
  });
  const url = `https://127.0.0.1:${closed}/mcp`;
  assert.equal(router.route(url), undefined);
  for (let i = 0; i < 2; i++) await router.fetch(url).then((r) => r.body?.cancel(), () => {});
  assert.deepEqual(log.lines.map((l) => [l.level, l.message]), [[
    "warn",
    `NO_PROXY exempts 127.0.0.1:${closed}, but Deno sends HTTPS requests through the proxy ` +
    "of the process environment (HTTPS_PROXY) regardless; set NO_PROXY in the environment, " +
    "not only in .env, to reach it directly",
  ]]);
});

Deno.test("a dead proxy is named as the cause, not the server", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  const deadProxy = freePort();
  await assumingClosed(deadProxy, async () => {
    await using session = await started(
      [httpEntry("behind", `${server.origin}/mcp`, { timeoutSeconds: 3 })],
      dotenv({ HTTP_PROXY: `http://127.0.0.1:${deadProxy}` }),
    );
    const [status] = session.states;
    assert.equal(status.state, "failed");
    assert.equal(status.error?.message, "Failed to connect to server 'behind': Session terminated");
    assert.equal(
      status.error?.reason,
      `Connection refused: nothing is listening at the proxy http://127.0.0.1:${deadProxy} ` +
        `(HTTP_PROXY), through which patchbay reaches ${server.origin}`,
    );
    assert.equal(
      status.error?.remedy,
      "start the proxy, or correct HTTP_PROXY (in .env or the environment); to reach " +
        "127.0.0.1 without the proxy, add it to NO_PROXY",
    );
  });
});

Deno.test("a proxy that cannot reach the server, and a proxy variable that is not a URL", async () => {
  const nowhere = freePort();
  await using proxy = startTestProxy();
  await assumingClosed(nowhere, async () => {
    await using session = await started(
      [httpEntry("lost", `http://127.0.0.1:${nowhere}/mcp`, { timeoutSeconds: 3 })],
      dotenv({ HTTP_PROXY: proxy.url }),
    );
    const [status] = session.states;
    assert.equal(status.state, "failed");
    assert.match(
      status.error!.reason,
      new RegExp(
        `^the request to http://127\\.0\\.0\\.1:${nowhere}/mcp through the proxy ` +
          `${proxy.url} \\(HTTP_PROXY\\) failed \\([^)]+\\): the proxy could not reach the ` +
          "server, or dropped the connection$",
      ),
    );
    assert.match(
      status.error!.remedy,
      new RegExp(`check that the server runs at 127\\.0\\.0\\.1:${nowhere}`),
    );
  });

  await using bad = await started(
    [httpEntry("typo", "http://127.0.0.1:1/mcp", { timeoutSeconds: 3 })],
    dotenv({ HTTP_PROXY: "http://proxy.example.com:not-a-port" }),
  );
  const [status] = bad.states;
  assert.equal(status.state, "failed");
  assert.equal(
    status.error?.reason,
    'HTTP_PROXY is not a URL: "http://proxy.example.com:not-a-port": patchbay cannot send ' +
      "requests for http://127.0.0.1:1 through it",
  );
  assert.match(status.error!.remedy, /^set the variable to the proxy's address/);
});

Deno.test("a proxy that refuses: a tunnel it will not open, HTTP 407, HTTP 502", async () => {
  {
    // The loopback proxy opens tunnels to 127.0.0.1 only: this CONNECT is refused (403).
    await using proxy = startTestProxy();
    await using session = await started(
      [httpEntry("far", "https://mcp.example.com/mcp", { timeoutSeconds: 3 })],
      dotenv({ HTTPS_PROXY: proxy.url }),
    );
    const [status] = session.states;
    assert.equal(status.state, "failed");
    assert.equal(
      status.error?.reason,
      `the proxy ${proxy.url} (HTTPS_PROXY) refused to open a connection to mcp.example.com:443`,
    );
    assert.match(status.error!.remedy, /its credentials \(user:password@ in HTTPS_PROXY\)/);
    assert.ok(proxy.requestLines.every((line) => line === "CONNECT mcp.example.com:443 HTTP/1.1"));
  }
  for (
    const [answer, reason] of [
      [
        "407 Proxy Authentication Required",
        /^the proxy \S+ \(HTTP_PROXY\) requires authentication \(HTTP 407 Proxy Authentication Required\)$/,
      ],
      [
        "502 Bad Gateway",
        /^the proxy \S+ \(HTTP_PROXY\) answered HTTP 502 Bad Gateway: it could not reach 127\.0\.0\.1:\d+$/,
      ],
    ] as const
  ) {
    await using proxy = startTestProxy({ answerAll: answer });
    await using session = await started(
      [httpEntry("behind", `http://127.0.0.1:${freePort()}/mcp`, { timeoutSeconds: 3 })],
      dotenv({ HTTP_PROXY: proxy.url }),
    );
    const [status] = session.states;
    assert.equal(status.state, "failed");
    assert.match(status.error!.reason, reason);
    assert.match(status.error!.remedy, /add it to NO_PROXY$/);
  }
});

Deno.test("patchbay call reaches a server through the proxy in .env; NO_PROXY there beats the process's proxy", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  const hidden = freePort();
  await using proxy = startTestProxy({ routes: { [`127.0.0.1:${hidden}`]: server.port } });
  // The proxies this test means are its own: none is passed on from the machine running it.
  await using box = await sandbox({ ...WITHOUT_PROXIES });
  await assumingClosed(hidden, async () => {
    await writeConfig(box, configWith({ inside: { url: `http://127.0.0.1:${hidden}/mcp` } }));
    await Deno.writeTextFile(`${box.cwd}/.env`, `HTTP_PROXY=${proxy.url}\n`);
    const viaProxy = await runPatchbay(box, ["call", "inside.echo", '{"message": "hello"}']);
    assert.equal(viaProxy.code, 0, viaProxy.stderr);
    assert.equal(viaProxy.stdout, "Echo: hello\n");
  });

  // A corporate proxy in the real environment, the local server exempted in .env.
  const deadProxy = freePort();
  await assumingClosed(deadProxy, async () => {
    await writeConfig(box, configWith({ local: { url: `${server.origin}/mcp` } }));
    await Deno.writeTextFile(`${box.cwd}/.env`, "NO_PROXY=127.0.0.1\n");
    const exempt = await runPatchbay(box, ["call", "local.echo", '{"message": "direct"}'], {
      env: { HTTP_PROXY: `http://127.0.0.1:${deadProxy}` },
    });
    assert.equal(exempt.code, 0, exempt.stderr);
    assert.equal(exempt.stdout, "Echo: direct\n");
  });
});
