/**
 * Protocol revisions: what `"protocol"` makes patchbay speak, against real servers of
 * both eras. server-everything and server-filesystem speak the 2025 protocol; the fixture
 * of `tests/fixtures/protocol_server.ts` is a 2025 server that exits or stays silent when
 * probed, a 2026-07-28-only server, or both. Negotiation that fails names what each side
 * offered; `input_required` forms are answered by patchbay's own handlers.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { ServerRequestHandlers } from "../../lib/connections/types.ts";
import type { ServerConfig, StdioServerConfig } from "../../lib/config/types.ts";
import { ServerConnectError } from "../../lib/errors.ts";
import { formDefaultsAnswer } from "../../lib/ui/elicitation.ts";
import { LEGACY_REVISIONS, MODERN_REVISION } from "../../lib/protocol.ts";
import { DENO, everythingEntry, filesystemEntry, NODE } from "../support/deps.ts";
import {
  eventually,
  everythingStdio,
  firstText,
  httpEntry,
  processesWith,
  startManager,
  stdioEntry,
} from "../support/servers.ts";
import { createMcpHandler, McpServer } from "../support/mcp_server_sdk.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { SCHEMA_2020_12 } from "../fixtures/protocol_server.ts";

const PROTOCOL_SERVER = fileURLToPath(new URL("../fixtures/protocol_server.ts", import.meta.url));

const text = (result: { content?: unknown }) => firstText(result) ?? "";

const newTag = () => `patchbay-test-${crypto.randomUUID()}`;

/** The protocol fixture as a stdio entry. */
function fixture(
  name: string,
  tag: string,
  flags: string[],
  extra: Partial<StdioServerConfig> = {},
): StdioServerConfig {
  return stdioEntry(
    name,
    DENO,
    ["run", "--quiet", "--no-config", PROTOCOL_SERVER, ...flags, `--tag=${tag}`],
    extra,
  );
}

const managed = (servers: ServerConfig[], handlers?: ServerRequestHandlers) =>
  startManager({ servers, handlers });

Deno.test("auto: 2025-era stdio servers keep speaking 2025; a 2026-only server speaks 2026-07-28", async () => {
  const tag = newTag();
  {
    await using session = await managed([
      everythingStdio("everything"),
      stdioEntry("filesystem", NODE, [filesystemEntry(), Deno.cwd()]),
      fixture("modern", tag, ["--era=modern"]),
      fixture("both", tag, ["--era=both"]),
    ]);
    const byName = Object.fromEntries(session.states.map((s) => [s.name, s]));
    for (const state of session.states) {
      assert.equal(state.state, "connected", `${state.name}: ${state.error?.reason}`);
    }
    assert.equal(byName.everything.protocolVersion, LEGACY_REVISIONS[0]);
    assert.equal(byName.filesystem.protocolVersion, LEGACY_REVISIONS[0]);
    assert.equal(byName.modern.protocolVersion, MODERN_REVISION);
    assert.equal(byName.both.protocolVersion, MODERN_REVISION, "a server of both eras gets 2026");

    // Every request of the 2026 session carries the _meta envelope.
    const called = JSON.parse(text(await session.manager.callTool("modern__meta", {})));
    assert.equal(called.meta["io.modelcontextprotocol/protocolVersion"], MODERN_REVISION);
    assert.equal(called.meta["io.modelcontextprotocol/clientInfo"].name, "patchbay");
    assert.ok(called.meta["io.modelcontextprotocol/clientCapabilities"]);

    // The log names the revision each server speaks and how it was chosen.
    const connected = session.log.matching(/^connected in/);
    assert.ok(
      connected.some((l) =>
        l.fields?.protocol === MODERN_REVISION && l.fields?.negotiation === "auto"
      ),
      JSON.stringify(connected.map((l) => l.fields)),
    );
  }
  assert.deepEqual(processesWith(tag), []);
});

/** The official SDK's server (it speaks 2026-07-28) over streamable HTTP; records methods. */
function startModernHttpServer() {
  const methods: string[] = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "modern-http", version: "1.0.0" });
    server.registerTool("echo", { description: "Echoes", inputSchema: {} }, () => ({
      content: [{ type: "text" as const, text: "here" }],
    }));
    return server;
  });
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    const method = r.headers.get("mcp-method");
    if (method) methods.push(method);
    // Without Deno.serve's signal (see protected_mcp_server.ts).
    const copy = new Request(r.url, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      duplex: "half",
    } as RequestInit);
    return await handler.fetch(copy);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    methods,
    async [Symbol.asyncDispose]() {
      await handler.close();
      await http.shutdown();
    },
  };
}

Deno.test("2026-07-28 over HTTP: keep-alive checks use server/discover (there is no ping) and the session stays", async () => {
  await using server = startModernHttpServer();
  await using session = await managed([
    httpEntry("modern", server.url, { pingIntervalSeconds: 0.4 }),
  ]);
  const [state] = session.states;
  assert.equal(state.state, "connected", state.error?.reason);
  assert.equal(state.protocolVersion, MODERN_REVISION);
  const discovers = () => server.methods.filter((m) => m === "server/discover").length;
  // One at connect; then the keep-alive checks, answered, so no reconnect.
  await eventually(() => discovers() >= 4, "three keep-alive checks", 20_000);
  assert.equal(session.manager.status("modern")?.state, "connected");
  assert.equal(session.log.matching(/connection lost/).length, 0, "never lost");
  assert.equal(text(await session.manager.callTool("modern__echo", {})), "here");
});

Deno.test("auto: a stdio server that exits on the probe is started again for initialize", async () => {
  const tag = newTag();
  {
    await using session = await managed([fixture("strict", tag, ["--early=exit"])]);
    const [state] = session.states;
    assert.equal(state.state, "connected", state.error?.reason);
    assert.equal(state.protocolVersion, LEGACY_REVISIONS[0]);
    assert.equal(
      session.log.matching(/ended on the version probe .*starting it again/).length,
      1,
      "the respawn is logged once",
    );
    assert.match(text(await session.manager.callTool("strict__meta", {})), /2025-11-25/);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("auto: a stdio server silent on the probe is spoken to with initialize", async () => {
  const tag = newTag();
  {
    // A 2 s timeout: the probe waits at most half of it, so initialize still has time.
    await using session = await managed([
      fixture("quiet", tag, ["--early=silent"], { timeoutSeconds: 2 }),
    ]);
    const [state] = session.states;
    assert.equal(state.state, "connected", state.error?.reason);
    assert.equal(state.protocolVersion, LEGACY_REVISIONS[0]);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("protocol legacy against a 2026-only server: the diagnosis names both sides' revisions", async () => {
  const tag = newTag();
  {
    await using session = await managed([
      fixture("modern", tag, ["--era=modern"], { protocol: "legacy" }),
    ]);
    const [state] = session.states;
    assert.equal(state.state, "failed");
    const error = state.error!;
    assert.ok(error instanceof ServerConnectError);
    assert.equal(error.message, "Failed to connect to server 'modern': Session terminated");
    assert.match(
      error.reason,
      /^the server answered initialize with protocol revision 2026-07-28, which patchbay does not accept with "protocol": "legacy": patchbay offered 2025-11-25, 2025-06-18, .*, 2024-10-07 by initialize$/,
    );
    assert.match(error.remedy, /set "protocol": "auto" \(or remove it\)/);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("auto against a server of a future revision only: no revision in common, both sides named", async () => {
  const tag = newTag();
  {
    await using session = await managed([fixture("future", tag, ["--era=future"])]);
    const [state] = session.states;
    assert.equal(state.state, "failed");
    assert.equal(
      state.error!.reason,
      "no protocol revision in common: the server supports 2099-01-01 and refused 2026-07-28; " +
        "patchbay offered 2026-07-28 by server/discover, then 2025-11-25, 2025-06-18, " +
        "2025-03-26, 2024-11-05, 2024-10-07 by initialize",
    );
    assert.match(state.error!.remedy, /update patchbay/);
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("protocol pinned to 2026-07-28 against a 2025 server: says the server did not offer it", async () => {
  await using session = await managed([everythingStdio("old", { protocol: MODERN_REVISION })]);
  const [state] = session.states;
  assert.equal(state.state, "failed");
  assert.match(
    state.error!.reason,
    /the server did not offer 2026-07-28 in answer to server\/discover .*patchbay offered 2026-07-28 only, by server\/discover$/,
  );
  assert.match(state.error!.remedy, /"protocol": "auto"/);
});

Deno.test("protocol pinned to a 2025 revision: offered and accepted alone", async () => {
  const tag = newTag();
  {
    await using session = await managed([fixture("pinned", tag, [], { protocol: "2025-06-18" })]);
    const [state] = session.states;
    assert.equal(state.state, "connected", state.error?.reason);
    assert.equal(state.protocolVersion, "2025-06-18");
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("2026-07-28: an input_required form is answered by patchbay's elicitation handler", async () => {
  const tag = newTag();
  const asked: unknown[] = [];
  {
    await using session = await managed([fixture("modern", tag, ["--era=modern"])], {
      elicitation: (_server, params) => {
        asked.push(params.message);
        return Promise.resolve({ action: "accept", content: { region: "us-east", replicas: 2 } });
      },
    });
    const answer = JSON.parse(text(await session.manager.callTool("modern__form", {})));
    assert.deepEqual(asked, ["Which region?"]);
    assert.deepEqual(answer, {
      answer: { action: "accept", content: { region: "us-east", replicas: 2 } },
      requestState: "state-1",
    });
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("nobody to answer forms: the elicitation capability is not declared (both eras)", async () => {
  const tag = newTag();
  {
    await using session = await managed([
      fixture("modern", tag, ["--era=modern"]),
      fixture("legacy", tag, []),
    ], { withoutElicitation: true });
    for (const name of ["modern", "legacy"]) {
      const result = await session.manager.callTool(`${name}__form`, {});
      assert.equal(result.isError, true, name);
      assert.equal(text(result), "the client does not take forms", name);
    }
  }
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("--accept-form-defaults: the defaults when every required field has one, else decline", () => {
  const form = (required: string[], properties: Record<string, unknown>) => ({
    message: "m",
    requestedSchema: { type: "object" as const, properties, required },
  });
  assert.deepEqual(
    formDefaultsAnswer(
      form(["region"], {
        region: { type: "string", default: "eu" },
        size: { type: "integer", default: 3 },
        note: { type: "string" },
      }) as never,
    ).result,
    { action: "accept", content: { region: "eu", size: 3 } },
  );
  const declined = formDefaultsAnswer(
    form(["region", "name"], {
      region: { type: "string", default: "eu" },
      name: { type: "string" },
    }) as never,
  );
  assert.deepEqual(declined.result, { action: "decline" });
  assert.match(declined.why, /required field "name" has no default/);
  assert.deepEqual(
    formDefaultsAnswer({ mode: "url", message: "m", url: "https://x", elicitationId: "1" } as never)
      .result,
    { action: "decline" },
  );
  assert.deepEqual(formDefaultsAnswer(form([], { ok: { type: "boolean" } }) as never).result, {
    action: "accept",
    content: {},
  });
});

// ── the entry point ───────────────────────────────────────────────────────────────────

Deno.test("entry point: tools --json shows each server's negotiated revision", async () => {
  await using box = await sandbox();
  const tag = newTag();
  await writeConfig(
    box,
    configWith({
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      modern: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", PROTOCOL_SERVER, "--era=modern", `--tag=${tag}`],
      },
    }),
  );
  const result = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const servers = JSON.parse(result.stdout).servers as { name: string; protocol: string }[];
  assert.deepEqual(
    servers.map((s) => [s.name, s.protocol]),
    [["everything", LEGACY_REVISIONS[0]], ["modern", MODERN_REVISION]],
  );
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("entry point: an invalid protocol names the server and the field", async () => {
  await using box = await sandbox();
  await writeConfig(
    box,
    configWith({
      typo: { command: NODE, args: ["x"], protocol: "2026-07-82" },
      sse: { transport_type: "sse", url: "http://127.0.0.1:1/sse", protocol: MODERN_REVISION },
    }),
  );
  const result = await runPatchbay(box, ["config", "check"]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /mcpServers\.typo\.protocol: expected one of "auto", "legacy", "2026-07-28", .*got the string "2026-07-82" — did you mean "2026-07-28"\?/,
  );
  assert.match(
    result.stderr,
    /mcpServers\.sse\.protocol: protocol revision 2026-07-28 has no legacy SSE transport/,
  );
});

Deno.test("entry point: the model sees each tool's JSON Schema 2020-12 exactly as the server sent it", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm();
  const tag = newTag();
  for (const era of ["legacy", "modern"]) {
    await writeConfig(box, {
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
      mcpServers: {
        fixture: {
          command: DENO,
          args: ["run", "--quiet", "--no-config", PROTOCOL_SERVER, `--era=${era}`, `--tag=${tag}`],
        },
      },
    });
    llm.enqueue({ text: "Noted." });
    const result = await runPatchbay(box, ["run", "what", "can", "you", "do?"]);
    assert.equal(result.code, 0, result.stderr);
    const tools = llm.requests.at(-1)!.body.tools as {
      function: { name: string; parameters: unknown };
    }[];
    const sent = tools.find((t) => t.function.name === "fixture__schema")!.function.parameters;
    assert.equal(JSON.stringify(sent), JSON.stringify(SCHEMA_2020_12), era);
  }
  assert.deepEqual(processesWith(tag), []);
});
