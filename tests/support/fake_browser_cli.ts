/**
 * `$BROWSER` for tests: `deno run --allow-net fake_browser_cli.ts <url>` follows the
 * authorization URL to the callback and exits 0 when the callback page says the login is
 * complete, 1 otherwise.
 *
 * @module
 */

import { followRedirects } from "./fake_browser.ts";

const visit = await followRedirects(Deno.args[0]);
Deno.exit(visit.status === 200 && visit.body.includes("Login complete") ? 0 : 1);
