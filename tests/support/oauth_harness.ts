/**
 * What OAuth tests share: a temporary token store and debug log, a headless browser, the
 * events shown to the person, a real SDK client connected through a provider, and the
 * check that the contract's callback port is free before any login is tried.
 *
 * @module
 */

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { join } from "node:path";
import type { HttpServerConfig, OAuthSettings } from "../../lib/config/types.ts";
import { Logger } from "../../lib/log/log.ts";
import type { OAuthEvent } from "../../lib/oauth/broker.ts";
import { CALLBACK_PORT } from "../../lib/oauth/callback.ts";
import { describeHolder, findPortHolder } from "../../lib/oauth/port_holder.ts";
import {
  createOAuthRuntime,
  FileTokenStore,
  type OAuthRuntime,
  type PatchbayOAuthProvider,
} from "../../lib/oauth/mod.ts";
import { type FakeBrowser, fakeBrowser, type FakeBrowserOptions } from "./fake_browser.ts";
import { eventually } from "./servers.ts";

/** Longest wait for a browser page or a login step in these tests. */
export const LOGIN_STEP_TIMEOUT_MS = 10_000;

/**
 * Throws, naming the process that holds it, when the OAuth callback port (3000, fixed:
 * docs/authentication.md) is taken on loopback: every browser login of these tests needs
 * it, and each would otherwise fail on its own, far from the cause. Call it at the top of a
 * test file.
 */
export async function requireFreeCallbackPort(): Promise<void> {
  for (const hostname of ["127.0.0.1", "::1"]) {
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ hostname, port: CALLBACK_PORT });
    } catch (error) {
      // A host without IPv6 cannot bind ::1; only a holder matters.
      if (!(error instanceof Deno.errors.AddrInUse)) continue;
      const holder = await findPortHolder(CALLBACK_PORT);
      const who = holder
        ? describeHolder(holder) + (holder.commandLine ? ` (${holder.commandLine})` : "")
        : "another program (its process could not be identified)";
      throw new Error(
        `port ${CALLBACK_PORT} on ${hostname}, the OAuth callback port these tests log in ` +
          `through, is in use by ${who}; stop it, then run the tests again`,
      );
    }
    listener.close();
  }
}

/**
 * Waits until `browser` has opened `count` pages. A login that ends first (failed, or
 * done without a browser) fails the wait at once with what it ended with; so does
 * `timeoutMs` passing.
 */
export async function browserOpened(
  browser: FakeBrowser,
  count: number,
  login?: Promise<unknown>,
  timeoutMs = LOGIN_STEP_TIMEOUT_MS,
): Promise<void> {
  let ended: { value: unknown } | undefined;
  login?.then((value) => ended = { value }, (value) => ended = { value });
  await eventually(
    () => browser.opened.length >= count || ended !== undefined,
    `the browser to open page ${count}`,
    timeoutMs,
  );
  if (browser.opened.length >= count) return;
  const value = ended!.value;
  throw new Error(
    `the login ended before the browser opened page ${count}: ` +
      (value instanceof Error ? value.message : `it resolved with ${String(value)}`),
    { cause: value },
  );
}

/** An HTTP server entry as the config loader produces it. */
export function httpEntry(
  name: string,
  url: string,
  auth?: Partial<OAuthSettings> | null,
  headers: Record<string, string> = {},
): HttpServerConfig {
  return {
    name,
    transport: "streamable_http",
    url,
    headers,
    auth: auth === null ? undefined : { method: "oauth", ...auth },
    timeoutSeconds: 30,
    sseReadTimeoutSeconds: 300,
    trusted: false,
    sampling: "ask",
    disabled: false,
    transportInferred: false,
  };
}

/** Options of {@linkcode oauthHarness}. */
export interface HarnessOptions {
  browser?: FakeBrowserOptions;
  /** Callback timeout. @default 10 s */
  timeoutMs?: number;
  /** Where runtimes read `$BROWSER` and the proxy variables. @default Deno.env.get */
  getEnv?: (name: string) => string | undefined;
}

/** A temporary OAuth environment; `await using` removes it. */
export interface Harness {
  dir: string;
  logFile: string;
  logger: Logger;
  store: FileTokenStore;
  browser: FakeBrowser;
  events: OAuthEvent[];
  /** A fresh runtime (a "restart" is a second call). Closed with the harness. */
  runtime(servers: HttpServerConfig[], browser?: FakeBrowser): OAuthRuntime;
  /**
   * Logs `entry` in through a fresh runtime; resolves to what the login rejected with, or
   * `undefined` when it succeeded, so a test asserts on the failure it expects.
   */
  loginError(entry: HttpServerConfig): Promise<unknown>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Creates a harness with its own store and log. */
export async function oauthHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "patchbay-oauth-" });
  const logFile = join(dir, "patchbay.log");
  const logger = new Logger({ file: logFile, level: "debug" });
  const store = new FileTokenStore({ dir: join(dir, "oauth") });
  const browser = fakeBrowser(options.browser);
  const events: OAuthEvent[] = [];
  const runtimes: OAuthRuntime[] = [];
  const runtime = (servers: HttpServerConfig[], other = browser): OAuthRuntime => {
    const created = createOAuthRuntime(servers, {
      log: logger.child("test"),
      redactor: logger.redactor,
      onEvent: (event) => events.push(event),
      store,
      opener: other.opener,
      timeoutMs: options.timeoutMs ?? 10_000,
      getEnv: options.getEnv,
    });
    if (!created) throw new Error("no server uses OAuth");
    runtimes.push(created);
    return created;
  };
  return {
    dir,
    logFile,
    logger,
    store,
    browser,
    events,
    runtime,
    loginError(entry) {
      return runtime([entry]).providerFor(entry)!.ensureLogin().then(
        () => undefined,
        (error: unknown) => error,
      );
    },
    async [Symbol.asyncDispose]() {
      await browser.settled();
      for (const runtime of runtimes) await runtime.close();
      logger.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A connected SDK client whose transport authenticates through `provider`. */
export interface Connection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Calls a tool and returns its first text. */
  call(name: string, args?: Record<string, unknown>): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Connects the official client to `url` with `provider` wired as the manager will. */
export async function connectWith(
  url: string,
  provider: PatchbayOAuthProvider,
): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    authProvider: provider,
    fetch: provider.wrapFetch(fetch),
  });
  const client = new Client({ name: "patchbay-test", version: "0.0.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const first = (result.content as Array<{ type: string; text?: string }>)[0];
      return first?.text ?? "";
    },
    async [Symbol.asyncDispose]() {
      // Terminating the session first lets Deno exit cleanly (no request left open).
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
