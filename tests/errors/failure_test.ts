/**
 * The one classifier (lib/failure.ts) on real failures: a refused port, a name that does
 * not resolve, a Deno sandbox refusal, an HTTP answer, a JSON-RPC error, a process exit,
 * the operating system refusing a file; and the one cause-chain walker on cycles.
 *
 * @module
 */

import assert from "node:assert/strict";
import { toPatchbayError } from "../../commands/_boundary.ts";
import { CancelledError } from "../../lib/errors.ts";
import { causeChain } from "../../lib/cause_chain.ts";
import { classify, errorChain, netProblem, netReason } from "../../lib/errors/failure.ts";
import { assumingClosed, freePort } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

Deno.test("a refused port is 'refused' whether fetch or Deno.connect met it", async () => {
  const port = freePort();
  await assumingClosed(port, async () => {
    const viaFetch = await thrown(() => fetch(`http://127.0.0.1:${port}/`));
    const viaConnect = await thrown(() => Deno.connect({ hostname: "127.0.0.1", port }));
    assert.deepEqual(classify(viaFetch), { kind: "network", problem: "refused" });
    assert.deepEqual(classify(viaConnect), { kind: "network", problem: "refused" });
    assert.equal(
      netReason("refused", { address: `127.0.0.1:${port}`, host: "127.0.0.1" }),
      `nothing is listening at 127.0.0.1:${port}`,
    );
  });
});

Deno.test("a name under .invalid is a DNS failure", async () => {
  const error = await thrown(() => fetch("http://patchbay-test.invalid/"));
  assert.equal(netProblem(error), "dns", errorChain(error));
});

Deno.test("node-style codes classify like the runtime's words (ioredis, node:net)", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6390"), {
    code: "ECONNREFUSED",
  });
  const dns = Object.assign(new Error("getaddrinfo ENOTFOUND redis.invalid"), {
    code: "ENOTFOUND",
  });
  assert.equal(netProblem(new Error("Connection is closed.", { cause: refused })), "refused");
  assert.equal(netProblem(dns), "dns");
  assert.equal(netProblem(new Error("quota exceeded")), undefined);
});

Deno.test("HTTP answers, JSON-RPC errors, process exits and file permissions", async () => {
  assert.deepEqual(classify(new Response("no", { status: 429 })), { kind: "http", status: 429 });
  assert.deepEqual(classify({ code: -32602, message: "Invalid params" }), {
    kind: "jsonrpc",
    code: -32602,
  });
  const status = await new Deno.Command("sh", { args: ["-c", "exit 3"] }).output();
  assert.deepEqual(classify(status), { kind: "exit", code: 3 });
  assert.deepEqual(classify(new Error("EACCES: permission denied, open '/x'")), {
    kind: "file_permission",
  });
  assert.deepEqual(classify(new DOMException("stop", "AbortError")), { kind: "cancelled" });
});

Deno.test("a Deno sandbox refusal names its flag", async () => {
  // A real refusal: a program run without --allow-net classifies its own failed fetch.
  await using tmp = await tempDir("patchbay-failure-");
  const dir = tmp.path;
  const script = `${dir}/denied.ts`;
  const failure = new URL("../../lib/errors/failure.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { classify } from "${failure}";\n` +
      'try { await fetch("http://127.0.0.1:9999/"); } catch (e) { console.log(JSON.stringify(classify(e))); }\n',
  );
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(child.stdout).trim();
  assert.deepEqual(JSON.parse(said), {
    kind: "deno_permission",
    flag: "--allow-net=127.0.0.1:9999",
  });
});

Deno.test("the cause-chain walker follows causes and aggregates, and stops on a cycle", () => {
  const inner = new Error("inner");
  const aggregate = new AggregateError([new Error("a"), inner], "both");
  const outer = new Error("outer", { cause: aggregate });
  assert.deepEqual(
    causeChain(outer).map((e) => (e as Error).message),
    ["outer", "both", "a", "inner"],
  );
  const cyclic = new Error("one") as Error & { cause?: unknown };
  cyclic.cause = new Error("two", { cause: cyclic });
  assert.deepEqual(causeChain(cyclic).map((e) => (e as Error).message), ["one", "two"]);
});

Deno.test("the error boundary names what the classifier knows; only the unknown is a bug", async () => {
  const port = freePort();
  await assumingClosed(port, async () => {
    const refused = toPatchbayError(await thrown(() => fetch(`http://127.0.0.1:${port}/`)));
    assert.equal(refused.message, "Connection refused");
    assert.equal(refused.code, "network");
  });
  // The words Node-based servers and libraries use when the operating system refuses a
  // file (root reads every file here, so the text stands for the refusal itself).
  const eacces = Object.assign(new Error("EACCES: permission denied, open '/srv/secret.txt'"), {
    code: "EACCES",
  });
  const denied = toPatchbayError(eacces);
  assert.equal(denied.code, "permission_denied");
  assert.match(denied.reason, /EACCES/);
  const aborted = new AbortController();
  aborted.abort();
  const wrapped = new Error("the request ended", { cause: aborted.signal.reason });
  assert.ok(toPatchbayError(wrapped) instanceof CancelledError);
  const unknown = toPatchbayError(new TypeError("x is not a function"));
  assert.equal(unknown.code, "internal");
  assert.match(unknown.message, /^Internal error: x is not a function/);
});
