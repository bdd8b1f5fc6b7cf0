/**
 * The SDK's `console.warn("[mcp-sdk] …")` lines are routed to the log of the login that
 * runs the SDK's auth code, and only while it runs: with two logins overlapping, the one
 * that finished first no longer receives lines (it used to, until the last login ended).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../../lib/log/log.ts";
import { withSdkWarningsLogged } from "../../lib/oauth/sdk_warnings.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("SDK warnings: a finished login's log gets no more lines; the running one does", async () => {
  await using tmp = await tempDir("patchbay-sdk-warnings-");
  const dir = tmp.path;
  const first = new Logger({ file: join(dir, "first.log") });
  const second = new Logger({ file: join(dir, "second.log") });
  const printed: unknown[][] = [];
  const original = console.warn;
  const printer = (...args: unknown[]) => void printed.push(args);
  console.warn = printer;
  try {
    const secondEnds = Promise.withResolvers<void>();
    const secondRuns = withSdkWarningsLogged(second.child("oauth"), () => secondEnds.promise);
    // The first login starts after the second and ends before it.
    await withSdkWarningsLogged(first.child("oauth"), () => {
      console.warn("[mcp-sdk] during the first login");
      return Promise.resolve();
    });
    console.warn("[mcp-sdk] after the first login ended");
    secondEnds.resolve();
    await secondRuns;
    console.warn("[mcp-sdk] after both");
    assert.equal(console.warn, printer, "the console is given back once no login runs");
  } finally {
    console.warn = original;
    first.close();
    second.close();
  }
  const firstLog = await Deno.readTextFile(join(dir, "first.log"));
  const secondLog = await Deno.readTextFile(join(dir, "second.log"));
  assert.match(firstLog, /during the first login/);
  assert.doesNotMatch(firstLog, /after the first login ended/);
  assert.match(secondLog, /after the first login ended/);
  assert.doesNotMatch(secondLog, /during the first login/);
  // Once no login runs, the console is the caller's again.
  assert.deepEqual(printed, [["[mcp-sdk] after both"]]);
});
