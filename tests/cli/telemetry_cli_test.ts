/**
 * Telemetry through `deno task start`, as a person sees it: `patchbay permissions` names what
 * the client is granted for it and where it goes; the plan the launcher remembers holds the
 * collector's header as written, never its credential; and with telemetry off, every
 * request to a server still carries a valid `traceparent`, recorded by the wire trace.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";

const COLLECTOR_KEY = "collector-secret-a1b2c3d4";
const LLM = { provider: "openai", model: "gpt-4o-mini" };

Deno.test("permissions: telemetry's grant and where it goes; the remembered plan keeps no credential", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test0123456789abcdefghij" });
  await Deno.writeTextFile(join(box.cwd, ".env"), `COLLECTOR_KEY=${COLLECTOR_KEY}\n`);
  await writeConfig(box, {
    LLM,
    mcpServers: {},
    Telemetry: {
      // Nothing listens there: exporting fails quietly, the session is not held up.
      endpoint: "http://127.0.0.1:9/",
      headers: { "x-collector-key": "${COLLECTOR_KEY}" },
    },
  });
  const listing = await runPatchbay(box, ["permissions"]);
  assert.equal(listing.code, 0, listing.stderr);
  assert.match(listing.stdout, /#\s+env\s+OTEL_DENO\s+whether Deno exports telemetry/);
  assert.match(listing.stdout, /Telemetry \(Telemetry in .*servers_config\.json\): Deno exports/);
  assert.match(listing.stdout, /http:\/\/127\.0\.0\.1:9\/ \(http\/protobuf, service patchbay\)/);
  assert.match(listing.stdout, /--allow-env=[^ ]*OTEL_DENO/);
  assert.ok(!listing.stdout.includes("--allow-net=127.0.0.1:9"), "no net grant for the collector");
  const json = JSON.parse((await runPatchbay(box, ["permissions", "--json"])).stdout);
  assert.deepEqual(json.telemetry.headers, { "x-collector-key": "${COLLECTOR_KEY}" });
  assert.equal(json.telemetry.env_file, join(box.cwd, ".env"));
  // A session under the launcher: its remembered plan is written, without the credential.
  const tools = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(tools.code, 0, tools.stderr);
  const plans = join(box.home, ".local", "state", "patchbay", "launch");
  const remembered = [];
  for await (const entry of Deno.readDir(plans)) {
    if (entry.name.endsWith(".json")) {
      remembered.push(await Deno.readTextFile(join(plans, entry.name)));
    }
  }
  assert.ok(remembered.some((text) => text.includes("${COLLECTOR_KEY}")));
  assert.ok(remembered.every((text) => !text.includes(COLLECTOR_KEY)));
  // Without the section, nothing of it: no grant, no note.
  await writeConfig(box, { LLM, mcpServers: {} });
  const off = await runPatchbay(box, ["permissions"]);
  assert.ok(!off.stdout.includes("OTEL_DENO") && !off.stdout.includes("Telemetry ("));
});

Deno.test("telemetry off: every request to a server carries a valid traceparent, recorded in the trace", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test0123456789abcdefghij" });
  await writeConfig(box, {
    LLM,
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  });
  const result = await runPatchbay(box, [
    "--trace",
    "trace.jsonl",
    "call",
    "everything.echo",
    '{"message":"hi"}',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const lines = (await Deno.readTextFile(join(box.cwd, "trace.jsonl"))).trim().split("\n")
    .map((line) => JSON.parse(line));
  const requests = lines.filter((l) =>
    l.kind === "message" && l.dir === "out" && l.type === "request"
  );
  assert.ok(requests.length >= 3, "the probe or initialize, the lists and the call");
  for (const line of requests) {
    const traceparent = line.message.params?._meta?.traceparent;
    assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, line.method);
    assert.equal(traceparent, `00-${line.trace_id}-${line.span_id}-01`);
  }
  const [init] = requests.filter((l) => l.method === "initialize");
  const [call] = requests.filter((l) => l.method === "tools/call");
  assert.ok(init && call);
  // The connection attempt is one trace; the call, outside any turn, starts its own.
  const attempt = requests.filter((l) => l.trace_id === init.trace_id);
  assert.ok(attempt.some((l) => l.method === "tools/list"));
  assert.notEqual(call.trace_id, init.trace_id);
  const answer = lines.find((l) => l.kind === "message" && l.dir === "in" && l.id === call.id);
  assert.equal(answer.span_id, call.span_id);
});
