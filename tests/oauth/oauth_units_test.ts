/**
 * The OAuth pieces on their own: the browser opener (real subprocesses, never a shell),
 * finding the process that holds a port, the callback listener's edges (on a random
 * port: the contract's port 3000 is exercised in oauth/oauth_flow_test.ts), the SDK-warning
 * diversion and the messages shown to the person.
 *
 * @module
 */

import assert from "node:assert/strict";
import { bounded } from "../support/bounded.ts";
import { join } from "node:path";
import { CancelledError, OAuthFailedError, remedyFor } from "../../lib/errors.ts";
import { Logger, silentLog } from "../../lib/log/log.ts";
import { browserCommands, openBrowser, splitWords } from "../../lib/oauth/browser.ts";
import { AuthorizationBroker, type OAuthEvent } from "../../lib/oauth/broker.ts";
import { type BrowserOpener } from "../../lib/oauth/browser.ts";
import { CallbackListener } from "../../lib/oauth/callback.ts";
import { describeOAuthEvent } from "../../lib/oauth/messages.ts";
import { findPortHolder, listeningInodes } from "../../lib/oauth/port_holder.ts";
import { FileTokenStore, PatchbayOAuthProvider } from "../../lib/oauth/mod.ts";
import { withSdkWarningsLogged } from "../../lib/oauth/sdk_warnings.ts";
import { DENO } from "../support/deps.ts";
import { httpEntry } from "../support/oauth_harness.ts";
import { freePort } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

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

/** Ports tried for a listener when another program takes the first one meanwhile. */
const LISTEN_ATTEMPTS = 5;

/**
 * A started callback listener on a free port. It binds one port on two addresses (127.0.0.1
 * and ::1), so it cannot ask the system for one (port 0); a port another program takes
 * between the choice and the bind is given up for another.
 */
async function startedListener(): Promise<CallbackListener> {
  for (let attempt = 1;; attempt++) {
    const listener = new CallbackListener({ port: freePort() });
    try {
      await listener.start("notes");
      return listener;
    } catch (error) {
      const taken = error instanceof OAuthFailedError && /in use/.test(error.reason);
      if (!taken || attempt >= LISTEN_ATTEMPTS) throw error;
    }
  }
}

Deno.test("callback listener: other paths, methods and hosts are refused; state is checked", async () => {
  const listener = await startedListener();
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

    // The page answers once the login has ended (the code exchanged), saying how.
    const answering = fetch(`${base}/callback?state=s-123&code=the-code`);
    assert.deepEqual(await login, { code: "the-code", iss: undefined });
    listener.ended(expected, { ok: true });
    const done = await answering;
    const page = await done.text();
    assert.equal(done.status, 200);
    assert.equal(
      done.headers.get("content-security-policy"),
      "default-src 'none'; style-src 'unsafe-inline'",
    );
    assert.match(page, /Login complete/);
    assert.match(page, /authorized for notes &#60;b&#62;\. You can close this tab/);

    const late = await fetch(`${base}/callback?state=s-123&code=again`);
    assert.equal(late.status, 400);
    assert.match(await late.text(), /No login in progress/);
  } finally {
    await listener.close();
  }
});

Deno.test("callback listener: a login that fails after the code arrived is a failure page in the terminal's words", async () => {
  const listener = await startedListener();
  try {
    const expected = { server: "notes", state: "f-1", issRequired: false };
    const login = listener.expect(expected, { timeoutMs: 5_000 });
    const answering = fetch(`http://127.0.0.1:${listener.port}/callback?state=f-1&code=bad`);
    await login;
    listener.ended(expected, {
      ok: false,
      error: new OAuthFailedError("notes", {
        reason: "the authorization server answered invalid_grant: <script>alert(1)</script>",
        remedy: "retry the login",
      }),
    });
    const response = await answering;
    const page = await response.text();
    assert.equal(response.status, 400);
    assert.doesNotMatch(page, /Login complete|<script>/);
    assert.match(page, /<h1>Login failed<\/h1>/);
    assert.match(page, /OAuth authentication failed for server &#39;notes&#39;/);
    assert.match(page, /Cause: the authorization server answered invalid_grant: &#60;script&#62;/);
    assert.match(page, /Remedy: retry the login/);
  } finally {
    await listener.close();
  }
});

Deno.test("callback listener: a page still waiting for its login answers when patchbay closes", async () => {
  const listener = await startedListener();
  const expected = { server: "notes", state: "w-1", issRequired: false };
  const login = listener.expect(expected, { timeoutMs: 5_000 });
  const answering = fetch(`http://127.0.0.1:${listener.port}/callback?state=w-1&code=c`);
  await login;
  // Never ended: closing answers the page (shutting down waits for it) instead of holding
  // the tab and the exit for the exchange's whole bound.
  await bounded(listener.close(), "the listener to close");
  const response = await answering;
  const page = await response.text();
  assert.doesNotMatch(page, /Login complete/);
  assert.match(page, /Login failed/);
  assert.match(page, /patchbay is closing/);
});

Deno.test("callback listener: issuer checks (RFC 9207), timeout and cancellation", async () => {
  const listener = await startedListener();
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
    const expected = { server: "notes", state: "b", issuer, issRequired: true };
    const login = listener.expect(expected);
    const answering = fetch(`${base}?state=b&code=c&iss=${encodeURIComponent(issuer)}`);
    assert.deepEqual(await login, { code: "c", iss: issuer });
    listener.ended(expected, { ok: true });
    response = await answering;
    await response.body?.cancel();

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

Deno.test("callback listener: a timeout's and a denial's remedies name /refresh only in the REPL", async () => {
  const listener = await startedListener();
  try {
    const slow = listener.expect({ server: "notes", state: "s", issRequired: false }, {
      timeoutMs: 50,
    }).then(() => undefined, (e) => e);
    const timedOut = await slow;
    assert.ok(timedOut instanceof OAuthFailedError, String(timedOut));
    const denied = listener.expect({ server: "notes", state: "t", issRequired: false })
      .then(() => undefined, (e) => e);
    const response = await fetch(
      `http://localhost:${listener.port}/callback?state=t&error=access_denied`,
    );
    await response.body?.cancel();
    const refused = await denied;
    assert.ok(refused instanceof OAuthFailedError, String(refused));
    for (const error of [timedOut, refused]) {
      assert.match(
        remedyFor(error, "repl"),
        /\/refresh or|\(\/refresh, or patchbay auth login notes\)/,
      );
      const script = remedyFor(error, "script");
      assert.doesNotMatch(script, /\/refresh/);
      assert.match(script, /patchbay auth login notes\)/);
    }
    assert.match(
      remedyFor(timedOut, "script"),
      new RegExp(`localhost:${listener.port}; then retry \\(patchbay auth login notes\\)$`),
    );
  } finally {
    await listener.close();
  }
});

/**
 * A broker on a random port whose "browser" only records the URLs it was given. (A port
 * another program takes before a login binds it fails that login with patchbay's own
 * "port N ... in use by <process>", which says what happened.)
 */
function quietBroker(
  opener: BrowserOpener = () => Promise.resolve({ opened: true, command: "x" }),
) {
  const events: OAuthEvent[] = [];
  const broker = new AuthorizationBroker({
    port: freePort(),
    onEvent: (event) => events.push(event),
    opener,
    timeoutMs: 5_000,
  });
  const login = (server: string, signal?: AbortSignal) =>
    broker.authorize({
      server,
      url: new URL(`http://127.0.0.1:9/authorize?state=${server}`),
      state: server,
      issRequired: false,
      reason: "login",
      signal,
    }, (callback) => Promise.resolve(callback.code));
  const answer = async (state: string) => {
    const response = await fetch(`${broker.redirectUri}?state=${state}&code=code-${state}`);
    await response.body?.cancel();
  };
  const started = () =>
    events.filter((e) => e.type === "authorization_started").map((e) => e.server);
  return { broker, events, login, answer, started };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

Deno.test("broker: a login requested before the one ahead has started is still queued behind it", async () => {
  const t = quietBroker();
  // Requested in the same tick: the first has not reached its browser yet. The second
  // must say it waits (the person sees why nothing opens) and take its turn after.
  const first = t.login("alpha");
  const second = t.login("beta");
  const both = Promise.allSettled([first, second]);
  try {
    assert.deepEqual(t.events.filter((e) => e.type === "queued"), [
      { type: "queued", server: "beta", behind: "alpha" },
    ]);
    await until(() => t.started().length === 1);
    assert.deepEqual(t.started(), ["alpha"]);
    await t.answer("alpha");
    assert.equal(await first, "code-alpha");
    await until(() => t.started().length === 2);
    await t.answer("beta");
    assert.equal(await second, "code-beta");
    assert.deepEqual(t.started(), ["alpha", "beta"]);
  } finally {
    await t.broker.close();
    await both;
  }
});

Deno.test("broker: a login cancelled while the browser opener still runs fails that login only", async () => {
  let openerDone!: () => void;
  const openerFinished = new Promise<void>((resolve) => openerDone = resolve);
  // A slow opener that then reports no browser, as xdg-open can after its grace period.
  const t = quietBroker(async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    openerDone();
    return { opened: false, reason: "no browser" };
  });
  try {
    const controller = new AbortController();
    const login = t.login("alpha", controller.signal);
    await until(() => t.started().length === 1);
    controller.abort();
    // Before the fix the callback was awaited only after the opener returned: this
    // cancellation was an unhandled rejection, which ends a Deno process (and this file).
    await assert.rejects(login, CancelledError);
    await openerFinished;
    assert.ok(
      !t.events.some((e) => e.type === "browser_failed"),
      "no 'open the URL by hand' once the login is over",
    );
    // The port is free again.
    Deno.listen({ hostname: "127.0.0.1", port: t.broker.listener.port }).close();
  } finally {
    await t.broker.close();
  }
});

Deno.test("provider: a request already cancelled when refused starts no login", async () => {
  await using dir = await tempDir();
  const opened: string[] = [];
  let oauthRequests = 0;
  const provider = new PatchbayOAuthProvider({
    server: httpEntry("notes", "http://127.0.0.1:9/mcp"),
    store: new FileTokenStore({ dir: join(dir.path, "oauth") }),
    broker: new AuthorizationBroker({
      port: freePort(),
      opener: (url) => {
        opened.push(url.href);
        return Promise.resolve({ opened: true, command: "x" });
      },
    }),
    log: silentLog,
    fetch: () => {
      oauthRequests++;
      return Promise.reject(new TypeError("no network in this test"));
    },
  });
  const refusing = provider.wrapFetch(() => Promise.resolve(new Response("", { status: 401 })));
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(
    refusing("http://127.0.0.1:9/mcp", { method: "POST", signal: controller.signal }),
    CancelledError,
  );
  // Nobody would have awaited that login: its failure would have gone unheard (or, once
  // it timed out, unhandled).
  assert.equal(oauthRequests, 0, "no discovery");
  assert.deepEqual(opened, []);
  assert.equal(provider.loginInProgress, undefined);
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
