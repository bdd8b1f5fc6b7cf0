/**
 * `$BROWSER` for tests that read the callback page: `deno run --allow-net
 * --allow-write=FILE page_browser_cli.ts FILE <url>` follows the authorization URL to the
 * callback, as a person's browser would, and writes what the page said to FILE as JSON
 * (`status`, `body`). It exits 0 either way: the browser did open.
 *
 * @module
 */

import { followRedirects } from "./fake_browser.ts";

const [file, url] = Deno.args;
const visit = await followRedirects(url);
await Deno.writeTextFile(file, JSON.stringify({ status: visit.status, body: visit.body }));
