/**
 * A headless "browser" for OAuth tests: it follows the authorization URL with `fetch` and
 * manual redirects (the test authorization server consents at once and redirects to the
 * callback), as a person clicking "Allow" would. Use {@linkcode fakeBrowser} in process,
 * or `fake_browser_cli.ts` as `$BROWSER` to exercise the real opener.
 *
 * @module
 */

import type { BrowserOpener } from "../../lib/oauth/browser.ts";

/** Where a visit ended. */
export interface Visit {
  /** The URL the browser was asked to open. */
  start: string;
  /** Every URL requested, in order. */
  hops: string[];
  status: number;
  body: string;
}

/** Follows redirects by hand; `tamper` may rewrite each hop before it is requested. */
export async function followRedirects(
  start: string,
  tamper: (url: URL) => URL = (url) => url,
  maxHops = 10,
  fetchFn: (url: URL, init: RequestInit) => Promise<Response> = fetch,
): Promise<Visit> {
  const hops: string[] = [];
  let url = new URL(start);
  for (let hop = 0; hop < maxHops; hop++) {
    url = tamper(url);
    hops.push(url.href);
    const response = await fetchFn(url, { redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      continue;
    }
    return { start, hops, status: response.status, body: await response.text() };
  }
  throw new Error(`too many redirects from ${start}`);
}

/** An in-process browser and what it saw. */
export interface FakeBrowser {
  opener: BrowserOpener;
  /** URLs it was asked to open. */
  opened: string[];
  visits: Visit[];
  /** Waits for every visit started so far. */
  settled(): Promise<void>;
}

/** Options of {@linkcode fakeBrowser}. */
export interface FakeBrowserOptions {
  /** Rewrites hops (e.g. the callback's state) before they are requested. */
  tamper?: (url: URL) => URL;
  /** Pretend no browser could be opened (the person opens the URL by hand). */
  fail?: string;
  /** Do not visit at all (the person never finishes the login). */
  idle?: boolean;
  /** Awaited before each visit (the person takes their time). */
  before?: () => Promise<void>;
  /** How pages are requested (a proxy, a test CA). @default fetch */
  fetch?: (url: URL, init: RequestInit) => Promise<Response>;
}

/** A browser opener that completes logins headlessly. */
export function fakeBrowser(options: FakeBrowserOptions = {}): FakeBrowser {
  const opened: string[] = [];
  const visits: Visit[] = [];
  const running: Promise<unknown>[] = [];
  const opener: BrowserOpener = (url) => {
    opened.push(url.href);
    if (!options.idle) {
      // Like a real browser, the visit happens after the opener has returned.
      running.push(
        (options.before?.() ?? Promise.resolve())
          .then(() => followRedirects(url.href, options.tamper, undefined, options.fetch))
          .then((visit) => visits.push(visit)),
      );
    }
    return Promise.resolve(
      options.fail
        ? { opened: false, reason: options.fail }
        : { opened: true, command: "fake-browser" },
    );
  };
  return {
    opener,
    opened,
    visits,
    async settled() {
      await Promise.allSettled(running);
    },
  };
}
