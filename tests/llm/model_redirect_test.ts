/**
 * A model endpoint that redirects to another origin: `fetch` followed it by default and
 * re-POSTed the whole conversation (and the key) to the new origin. Model requests now
 * follow redirects within the endpoint's own origin only; one to another origin fails
 * with its target named and the remedy, and the other origin receives nothing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type CliResult, configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

/** Every request a server on loopback received: method, path, whether it had a body. */
interface Seen {
  method: string;
  path: string;
  authorization: string | null;
  body: string;
}

/** A loopback server that records requests and answers with `handler`. */
function recordingServer(handler: (request: Request, url: URL) => Promise<Response> | Response) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const url = new URL(request.url);
    const body = await request.clone().text();
    seen.push({
      method: request.method,
      path: url.pathname,
      authorization: request.headers.get("authorization"),
      body,
    });
    return await handler(request, url);
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Runs `patchbay run <prompt>` with the model at `${origin}/v1` and the API key `key`. */
async function runAgainst(origin: string, key: string, prompt: string): Promise<CliResult> {
  await using box = await sandbox({ LLM_API_KEY: key });
  await writeConfig(
    box,
    configWith({}, {
      LLM: { provider: "openai-compatible", model: "m", base_url: `${origin}/v1` },
    }),
  );
  return await runPatchbay(box, ["run", prompt]);
}

Deno.test("a redirect to another origin is refused and reported; nothing reaches that origin", async () => {
  await using elsewhere = recordingServer(() => new Response("{}", { status: 200 }));
  await using endpoint = recordingServer(() =>
    new Response(null, {
      status: 307,
      headers: { location: `${elsewhere.origin}/v1/chat/completions?token=abc` },
    })
  );
  const result = await runAgainst(
    endpoint.origin,
    "sk-secret-key-for-the-test",
    "my private conversation",
  );
  assert.equal(result.code, 1, result.stdout);
  assert.deepEqual(elsewhere.seen, [], "the conversation went to the other origin");
  assert.equal(endpoint.seen.length, 1, "a redirect is not retried");
  assert.match(
    result.stderr,
    /error: Model request failed: .* redirected the request to another address/,
  );
  assert.ok(
    result.stderr.includes(
      `answered HTTP 307 Temporary Redirect with Location ${elsewhere.origin}/v1/chat/completions; ` +
        "patchbay does not follow a model request to another origin",
    ),
    result.stderr,
  );
  assert.doesNotMatch(result.stderr, /token=abc/, "the query of the target is not shown");
  assert.match(
    result.stderr,
    new RegExp(
      `remedy: if ${elsewhere.origin} is really your provider's address, set LLM.base_url to it`,
    ),
  );
});

Deno.test("a redirect within the endpoint's own origin is followed", async () => {
  await using llm = await startScriptedLlm({ replies: [{ text: "Answered after a redirect." }] });
  await using endpoint = recordingServer(async (request, url) => {
    if (url.pathname.startsWith("/v1/")) {
      return new Response(null, {
        status: 308,
        headers: { location: url.pathname.replace("/v1/", "/moved/v1/") },
      });
    }
    // The moved path is served by the scripted model, behind this origin.
    const target = new URL(url.pathname.replace("/moved/v1/", "/v1/"), llm.baseUrl);
    return await fetch(target, {
      method: request.method,
      headers: request.headers,
      body: await request.text(),
    });
  });
  const result = await runAgainst(endpoint.origin, "test-key", "hello");
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "Answered after a redirect.\n");
  assert.deepEqual(endpoint.seen.map((s) => `${s.method} ${s.path}`), [
    "POST /v1/chat/completions",
    "POST /moved/v1/chat/completions",
  ]);
  assert.equal(endpoint.seen[1].body, endpoint.seen[0].body, "308 keeps the body");
});

Deno.test("a redirect loop within the endpoint's origin is named a loop, not another address", async () => {
  // Two hostile shapes of one class: a path that redirects to itself, and two paths that
  // send the request to each other.
  for (
    const [shape, next] of [
      ["to itself", (path: string) => path],
      ["between two paths", (path: string) => path.startsWith("/a/") ? path.slice(2) : `/a${path}`],
    ] as const
  ) {
    await using endpoint = recordingServer((_request, url) =>
      new Response(null, {
        status: 307,
        headers: { location: `${next(url.pathname)}?sig=secret` },
      })
    );
    const result = await runAgainst(endpoint.origin, "test-key", "hello");
    assert.equal(result.code, 1, `${shape}: ${result.stdout}`);
    assert.match(
      result.stderr,
      /error: Model request failed: .* redirects the request in a loop/,
      `${shape}: ${result.stderr}`,
    );
    assert.ok(
      result.stderr.includes(`${endpoint.origin}/v1/chat/completions -> `),
      `${shape}: the loop's addresses are named: ${result.stderr}`,
    );
    assert.doesNotMatch(result.stderr, /another address|set LLM\.base_url to it/, shape);
    assert.doesNotMatch(result.stderr, /sig=secret/, shape);
    assert.match(result.stderr, /remedy: the loop is in the server or in a gateway/, shape);
    assert.ok(
      endpoint.seen.length <= 6,
      `${shape}: a loop is left at once: ${endpoint.seen.length}`,
    );
  }
});

Deno.test("a same-origin redirect chain longer than patchbay follows is named as such", async () => {
  await using endpoint = recordingServer((_request, url) => {
    const step = Number(url.searchParams.get("step") ?? "0");
    return new Response(null, {
      status: 308,
      headers: { location: `/hop${step + 1}/v1/chat/completions?step=${step + 1}` },
    });
  });
  const result = await runAgainst(endpoint.origin, "test-key", "hello");
  assert.equal(result.code, 1, result.stdout);
  assert.match(result.stderr, /redirected the request too many times/, result.stderr);
  assert.match(result.stderr, /more than the 5 patchbay follows/, result.stderr);
  assert.doesNotMatch(result.stderr, /another address/);
  assert.equal(endpoint.seen.length, 6, "the first request and five redirects followed");
});
