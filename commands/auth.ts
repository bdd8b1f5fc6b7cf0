/**
 * `patchbay auth list | login <server> | logout <server>`: the OAuth logins patchbay keeps.
 * Token values are never shown.
 *
 * @module
 */

import type { Config } from "../lib/config/types.ts";
import { EXIT, OAuthFailedError, UsageError } from "../lib/errors.ts";
import {
  describeGrant,
  describeOAuthEvent,
  type LoginSummary,
  relativeTime,
  summarizeLogin,
} from "../lib/oauth/messages.ts";
import {
  createOAuthRuntime,
  logout,
  type OAuthEvent,
  type OAuthServerConfig,
  type TokenStore,
  tokenStoreFor,
  usesOAuth,
} from "../lib/oauth/mod.ts";
import { type GlobalOptions, type Runtime, startUp } from "../lib/cli/startup.ts";
import { stderrStyle, stdoutStyle } from "../lib/terminal/style.ts";
import { didYouMean } from "../lib/text/text.ts";

/** Options of `auth list`. */
export interface AuthListOptions extends GlobalOptions {
  /** Print JSON instead of a table. @default false */
  json?: boolean;
}

/** `patchbay auth list`: stored logins and configured OAuth servers. */
export async function authList(options: AuthListOptions): Promise<number> {
  const runtime = await startUp(options);
  const store = loginStore(runtime);
  try {
    const summaries = await loginSummaries(runtime.config, store, Date.now());
    if (options.json) {
      console.log(JSON.stringify({ store: store.location, logins: summaries }, null, 2));
      return EXIT.ok;
    }
    console.log(renderSummaries(summaries, store.location, Date.now()));
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/**
 * Where this configuration keeps its logins: files, or Redis (`Memory.backend`). What the
 * store reports (a login kept locally, logins read from there while Redis is away) is
 * shown: a listing or a login the person is not told about would mislead.
 */
function loginStore(runtime: Runtime): TokenStore {
  return tokenStoreFor(runtime.config.memory, runtime.env, {
    log: runtime.logger.child("auth"),
    redactor: runtime.logger.redactor,
    onEvent: showEvent,
  });
}

/** An OAuth event, worded for the person, on stderr (stdout carries the command's output). */
function showEvent(event: OAuthEvent): void {
  const text = describeOAuthEvent(event);
  if (text) console.error(text);
}

/** Every OAuth server in the configuration and every stored login, by server name. */
export async function loginSummaries(
  config: Config,
  store: TokenStore,
  now: number,
): Promise<LoginSummary[]> {
  const stored = new Map((await store.list()).map((record) => [record.server, record]));
  const configured = new Map(
    config.servers.filter(usesOAuth).map((server) => [server.name, server]),
  );
  const names = [...new Set([...configured.keys(), ...stored.keys()])].sort();
  return names.map((name) =>
    summarizeLogin(
      name,
      configured.get(name)?.url,
      stored.get(name),
      now,
      configured.get(name)?.auth,
    )
  );
}

const STATE_TEXT: Record<LoginSummary["state"], string> = {
  logged_in: "logged in",
  expired_refreshable: "expired (refreshes on use)",
  expired: "expired (log in again)",
  not_logged_in: "not logged in",
  url_changed: "stored for another URL",
};

function renderSummaries(summaries: LoginSummary[], location: string, now: number): string {
  const style = stdoutStyle();
  if (summaries.length === 0) {
    return 'No server uses OAuth and no login is stored. Add "auth": {"method": "oauth"} to ' +
      "a server entry to use it.";
  }
  const rows = summaries.map((s) => [
    s.server + (s.configured ? "" : " (not configured)"),
    STATE_TEXT[s.state],
    s.issuer ?? "-",
    s.expiresAt
      ? relativeTime(Date.parse(s.expiresAt), now) + (s.refreshable ? ", refreshable" : "")
      : s.state === "logged_in"
      ? "no expiry given"
      : "-",
    s.scopes.join(" ") || "-",
    describeGrant(s),
  ]);
  const header = ["SERVER", "STATUS", "ISSUER", "EXPIRES", "SCOPES", "GRANT"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    "  " +
    cells.map((cell, i) => i === cells.length - 1 ? cell : cell.padEnd(widths[i])).join("  ");
  return [
    `OAuth logins ${style.dim(`(stored in ${location})`)}`,
    "",
    style.bold(line(header)),
    ...rows.map(line),
  ].join("\n");
}

/** Options of `auth login`. */
export interface AuthLoginOptions extends GlobalOptions {
  /** Log in again even when a valid login is stored. @default false */
  force?: boolean;
}

/** `patchbay auth login <server>`: logs in now, in the browser, instead of on first use. */
export async function authLogin(name: string, options: AuthLoginOptions): Promise<number> {
  const runtime = await startUp(options);
  const { config, logger, env } = runtime;
  const style = stderrStyle();
  const store = loginStore(runtime);
  const oauth = createOAuthRuntime(config.servers, {
    log: logger.child("auth"),
    redactor: logger.redactor,
    getEnv: (variable) => env.get(variable),
    onEvent: showEvent,
    store,
    // A failed login reads on the browser's page as it does here.
    surface: "script",
  });
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  Deno.addSignalListener("SIGINT", onInterrupt);
  try {
    const server = oauthServer(config, name);
    const provider = oauth!.providerFor(server)!;
    const outcome = await provider.ensureLogin({ force: options.force, signal: controller.signal });
    const stored = summarizeLogin(
      name,
      server.url,
      await store.load(name),
      Date.now(),
      server.auth,
    );
    const grant = (stored.grant && stored.grant !== "authorization_code") || stored.dpop
      ? `, grant ${describeGrant(stored)}`
      : "";
    const expiry = stored.expiresAt
      ? `, token expires ${relativeTime(Date.parse(stored.expiresAt), Date.now())}`
      : "";
    switch (outcome) {
      case "stored":
        console.log(
          `Already logged in to '${name}' (issuer ${stored.issuer}${expiry}). ` +
            "Use --force to log in again.",
        );
        break;
      case "refreshed":
        console.log(`Refreshed the login to '${name}' (issuer ${stored.issuer}${expiry}).`);
        break;
      case "authorized":
        console.log(
          `${style.green("✓")} Logged in to '${name}' (issuer ${stored.issuer}${grant}${expiry}).`,
        );
        break;
      case "not_required":
        console.log(
          `'${name}' answered without asking for authorization: no login is needed now ` +
            "(it publishes OAuth metadata, so patchbay logs in whenever it asks).",
        );
        break;
    }
    return EXIT.ok;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await oauth?.close();
  }
}

/** Options of `auth logout`. */
export interface AuthLogoutOptions extends GlobalOptions {
  /** Log out of every stored login. @default false */
  all?: boolean;
}

/** `patchbay auth logout <server>`: revokes (where offered) and deletes a login. */
export async function authLogout(
  name: string | undefined,
  options: AuthLogoutOptions,
): Promise<number> {
  const runtime = await startUp(options);
  if (options.all && name !== undefined) {
    throw new UsageError("give a server name or --all, not both");
  }
  const store = loginStore(runtime);
  try {
    return await logoutOf(name, options, runtime, store);
  } finally {
    await store.close();
  }
}

async function logoutOf(
  name: string | undefined,
  options: AuthLogoutOptions,
  { config, logger, env }: Runtime,
  store: TokenStore,
): Promise<number> {
  const stored = (await store.list()).map((record) => record.server);
  const names = options.all ? stored : [requireKnown(config, stored, name)];
  if (names.length === 0) {
    console.log("No login is stored.");
    return EXIT.ok;
  }
  const style = stdoutStyle();
  for (const server of names) {
    const entry = config.servers.find((s) => s.name === server);
    const result = await logout(store, server, {
      auth: entry && usesOAuth(entry) ? entry.auth : undefined,
      log: logger.child("auth"),
      // Revocation goes through the proxy .env names, like every other request.
      getEnv: (name) => env.get(name),
    });
    if (!result.deleted) {
      console.log(`Not logged in to '${server}': nothing to delete.`);
      continue;
    }
    if (result.revocationProblem) {
      console.log(
        `${style.yellow("warning:")} could not revoke the tokens of '${server}' at its ` +
          `authorization server (${result.revocationProblem}); they stay valid there until ` +
          "they expire.",
      );
    }
    const how = result.revoked.length > 0
      ? "tokens revoked at the authorization server and deleted"
      : result.revocationSupported
      ? "stored login deleted"
      : "stored login deleted (the authorization server offers no revocation, so the " +
        "tokens stay valid there until they expire)";
    console.log(`${style.green("✓")} Logged out of '${server}': ${how}.`);
  }
  return EXIT.ok;
}

/** The named server, which must be configured with OAuth. */
function oauthServer(config: Config, name: string): OAuthServerConfig {
  const server = config.servers.find((s) => s.name === name);
  if (!server) {
    const names = config.servers.filter(usesOAuth).map((s) => s.name);
    throw unknownServer(name, names);
  }
  if (!usesOAuth(server)) {
    throw new OAuthFailedError(name, {
      reason: `'${name}' does not use OAuth (its entry has no "auth": {"method": "oauth"})`,
      remedy: server.transport === "stdio"
        ? "OAuth applies to HTTP servers only; stdio servers authenticate through their env"
        : 'add "auth": {"method": "oauth"} to the entry if the server supports OAuth',
    });
  }
  return server;
}

function requireKnown(config: Config, stored: string[], name: string | undefined): string {
  if (name === undefined) throw new UsageError("auth logout needs a server name (or --all)");
  const configured = config.servers.filter(usesOAuth).map((s) => s.name);
  if (stored.includes(name) || configured.includes(name)) return name;
  throw unknownServer(name, [...new Set([...configured, ...stored])]);
}

function unknownServer(name: string, candidates: string[]): UsageError {
  const suggestion = didYouMean(name, candidates);
  return new UsageError(
    `no OAuth server named '${name}'${suggestion ? ` (did you mean '${suggestion}'?)` : ""}`,
    candidates.length > 0
      ? `OAuth servers: ${candidates.join(", ")}; \`patchbay auth list\` shows them`
      : 'no server uses OAuth: add "auth": {"method": "oauth"} to an HTTP server entry',
  );
}
