/**
 * The OAuth pieces on their own: the browser opener (real subprocesses, never a shell),
 * finding the process that holds a port, the callback listener's edges (on a random
 * port: the contract's port 3000 is exercised in oauth_flow_test.ts), the SDK-warning
 * diversion and the messages shown to the person.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CancelledError, OAuthFailedError } from "../lib/errors.ts";
import { Logger } from "../lib/log.ts";
import { browserCommands, openBrowser, splitWords } from "../lib/oauth/browser.ts";
import { CallbackListener } from "../lib/oauth/callback.ts";
import { describeOAuthEvent } from "../lib/oauth/messages.ts";
import { findPortHolder, listeningInodes } from "../lib/oauth/port_holder.ts";
import { withSdkWarningsLogged } from "../lib/oauth/sdk_warnings.ts";
import { DENO } from "./support/deps.ts";

async function tempDir() {
  const path = await Deno.makeTempDir({ prefix: "patchbay-units-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

Deno.test("browser: the platform's opener, or $BROWSER's commands with %s or the URL appended", () => {
  const url = "https://auth.example/authorize?a=1&b=2";
  assert.deepEqual(browserCommands(url, undefined, "linux"), [["xdg-open", url]]);
  assert.deepEqual(browserCommands(url, "", "darwin"), [["open", url]]);
  assert.deepEqual(browserCommands(url, undefined, "windows"), [
    ["rundll32", "url.dll,FileProtocolHandler", url],
  ]);
  assert.deepEqual(browserCommands(url, "firefox --new-tab:w3m", "linux"), [
    ["firefox", "--new-tab", url],
    ["w3m", url],
  ]);
  assert.deepEqual(browserCommands(url, "'/opt/My Browser/run' --url=%s", "linux"), [
    ["/opt/My Browser/run", `--url=${url}`],
  ]);
  assert.deepEqual(splitWords(`a "b c" 'd e' f`), ["a", "b c", "d e", "f"]);
});

Deno.test("browser: only http and https URLs are opened", async () => {
  for (const url of ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi"]) {
    const result = await openBrowser(new URL(url), { getEnv: () => "true" });
    assert.equal(result.opened, false);
    assert.match(result.reason!, /only http and https/);
  }
});

Deno.test("browser: $BROWSER runs without a shell; the URL arrives as one argument", async () => {
  await using dir = await tempDir();
  const script = join(dir.path, "record.ts");
  const out = join(dir.path, "argv.json");
  await Deno.writeTextFile(
    script,
    "Deno.writeTextFileSync(Deno.args[0], JSON.stringify(Deno.args.slice(1)));",
  );
  const url = new URL("https://auth.example/authorize?a=1&b=$(touch pwned);c='x'`id`");
  const command = `${DENO} run --allow-write=${dir.path} ${script} ${out}`;
  // The first command fails; the second one opens.
  const result = await openBrowser(url, { getEnv: () => `false:${command}`, graceMs: 10_000 });
  await result.waitForExit?.();
  assert.equal(result.opened, true, result.reason);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(out)), [url.href]);
  await assert.rejects(Deno.stat("pwned"), Deno.errors.NotFound);
});

Deno.test("browser: failures say why; a long-running browser counts as opened", async () => {
  const url = new URL("https://auth.example/authorize");
  const missing = await openBrowser(url, { getEnv: () => "no-such-browser-xyz" });
  assert.deepEqual([missing.opened, missing.reason], [
    false,
    "no-such-browser-xyz is not installed",
  ]);
  const failing = await openBrowser(url, { getEnv: () => "false" });
  assert.equal(failing.opened, false);
  assert.match(failing.reason!, /false exited with code 1/);
  await failing.waitForExit?.();
  const sleeper = `${DENO} eval "await new Promise((r) => setTimeout(r, 1000))"`;
  const running = await openBrowser(url, { getEnv: () => sleeper, graceMs: 100 });
  assert.equal(running.opened, true);
  await running.waitForExit?.();
});

Deno.test("port holder: /proc/net/tcp parsing and the real process behind a port", async () => {
  const table = [
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    "   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 424242 1",
    "   1: 0100007F:0BB8 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 515151 1",
    "   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 616161 1",
  ].join("\n");
  assert.deepEqual(listeningInodes(table, 3000), ["424242"]);
  assert.deepEqual(listeningInodes(table, 8080), ["616161"]);

  if (Deno.build.os !== "linux" && Deno.build.os !== "darwin") return;
  const child = new Deno.Command("node", {
    args: [
      "-e",
      'const s=require("net").createServer().listen(0,"127.0.0.1",()=>console.log(s.address().port))',
    ],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  reader.releaseLock();
  try {
    const holder = await findPortHolder(port);
    assert.equal(holder?.pid, child.pid);
    assert.equal(holder?.name, "node");
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel();
  }
  assert.equal(await findPortHolder(port), undefined, "nobody holds it any more");
});

/** Sends a raw HTTP request, so the Host header can be anything. */
async function rawGet(port: number, path: string, host: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`));
  const buffer = new Uint8Array(4096);
  const read = await conn.read(buffer);
  conn.close();
  return new TextDecoder().decode(buffer.subarray(0, read ?? 0));
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("callback listener: other paths, methods and hosts are refused; state is checked", async () => {
  const listener = new CallbackListener({ port: freePort() });
  await listener.start("notes");
  try {
    const base = `http://127.0.0.1:${listener.port}`;
    const expected = { server: "notes <b>", state: "s-123", issRequired: false };
    const login = listener.expect(expected, { timeoutMs: 5_000 });

    const post = await fetch(`${base}/callback`, { method: "POST" });
    assert.equal(post.status, 405);
    await post.body?.cancel();
    assert.match(
      await rawGet(listener.port, "/callback?state=s-123&code=c", "evil.example"),
      /^HTTP\/1\.1 400/,
    );
    const wrongState = await fetch(`${base}/callback?state=other&code=c`);
    assert.equal(wrongState.status, 400);
    await wrongState.body?.cancel();

    const done = await fetch(`${base}/callback?state=s-123&code=the-code`);
    const page = await done.text();
    assert.equal(done.status, 200);
    assert.equal(
      done.headers.get("content-security-policy"),
      "default-src 'none'; style-src 'unsafe-inline'",
    );
    assert.match(page, /authorized for notes &#60;b&#62;\. You can close this tab/);
    assert.deepEqual(await login, { code: "the-code", iss: undefined });

    const late = await fetch(`${base}/callback?state=s-123&code=again`);
    assert.equal(late.status, 400);
    assert.match(await late.text(), /No login in progress/);
  } finally {
    await listener.close();
  }
});

Deno.test("callback listener: issuer checks (RFC 9207), timeout and cancellation", async () => {
  const listener = new CallbackListener({ port: freePort() });
  await listener.start("notes");
  const base = `http://localhost:${listener.port}/callback`;
  try {
    const issuer = "https://auth.example";
    // Advertised iss support, iss missing: refused.
    const refused = listener.expect({ server: "notes", state: "a", issuer, issRequired: true })
      .then(() => undefined, (e) => e);
    let response = await fetch(`${base}?state=a&code=c`);
    await response.body?.cancel();
    const error = await refused;
    assert.ok(error instanceof OAuthFailedError && /RFC 9207/.test(error.reason), String(error));
    // iss present and right: accepted.
    const login = listener.expect({ server: "notes", state: "b", issuer, issRequired: true });
    response = await fetch(`${base}?state=b&code=c&iss=${encodeURIComponent(issuer)}`);
    await response.body?.cancel();
    assert.deepEqual(await login, { code: "c", iss: issuer });

    const slow = listener.expect({ server: "notes", state: "c", issRequired: false }, {
      timeoutMs: 50,
    });
    await assert.rejects(slow, (e) => e instanceof OAuthFailedError && /within 0 s/.test(e.reason));
    const controller = new AbortController();
    const cancelled = listener.expect({ server: "notes", state: "d", issRequired: false }, {
      signal: controller.signal,
    });
    controller.abort();
    await assert.rejects(cancelled, CancelledError);
  } finally {
    await listener.close();
  }
});

Deno.test("SDK warnings go to the log while patchbay runs the SDK's auth code", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "log");
  const logger = new Logger({ file });
  const printed: unknown[][] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => printed.push(args);
  try {
    await withSdkWarningsLogged(logger.child("oauth"), () => {
      console.warn('[mcp-sdk] OAuth "invalid_grant" — invalidating the stored tokens');
      console.warn("something else");
      return Promise.resolve();
    });
    console.warn("[mcp-sdk] after");
  } finally {
    console.warn = original;
    logger.close();
  }
  assert.deepEqual(printed, [["something else"], ["[mcp-sdk] after"]]);
  assert.match(
    await Deno.readTextFile(file),
    /WARN {2}\[oauth\] \[mcp-sdk\] OAuth "invalid_grant"/,
  );
});

Deno.test("messages: the URL is always shown, with what to do when no browser opens", () => {
  const started = describeOAuthEvent({
    type: "authorization_started",
    server: "notes",
    url: "https://auth.example/authorize?x=1",
    reason: "step_up",
    scope: "read admin",
  });
  assert.equal(
    started,
    "Authorize patchbay for 'notes' in your browser again: the server needs more permissions " +
      "for this request (scope: read admin).\nIf no browser opens, open this URL by hand:\n" +
      "  https://auth.example/authorize?x=1",
  );
  assert.match(
    describeOAuthEvent({
      type: "browser_failed",
      server: "notes",
      url: "u",
      reason: "xdg-open found no browser",
    })!,
    /No browser opened \(xdg-open found no browser\)\. Open the URL above by hand/,
  );
  assert.equal(
    describeOAuthEvent({ type: "authorized", server: "n", how: "refresh", issuer: "i" }),
    undefined,
  );
});
