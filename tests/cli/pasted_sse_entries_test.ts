/**
 * Entries pasted from other clients that give a bare `url` of a legacy SSE server, as a
 * person runs them: server-everything in `sse` mode, `deno task start config check`,
 * `tools` and `call`, and `/connections` in the interactive client (tmux).
 *
 * - a url ending in /sse is read as SSE, and `config check` says so and why;
 * - any other url of that server (here `/sse/`) is tried as streamable HTTP, answered the
 *   legacy way (404 to the POST, an `endpoint` event to the GET) and reached over SSE;
 * - `transport_type` written in the entry is obeyed exactly: the same url as
 *   streamable_http fails, naming the transport to set;
 * - `mcp add` of a url ending in /sse writes `"transport_type": "sse"`;
 * - the doctor says the transport it connected over, and why.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startEverythingHttp } from "../support/servers.ts";

Deno.test("a bare url of an SSE server connects over SSE; config check says which and why", async () => {
  await using sse = await startEverythingHttp("sse");
  await using box = await sandbox();
  await writeConfig(
    box,
    configWith({
      bySuffix: { url: `${sse.origin}/sse` },
      byAnswer: { url: `${sse.origin}/sse/` },
      written: { transport_type: "streamable_http", url: `${sse.origin}/sse`, timeout: 5 },
    }),
  );

  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /bySuffix +sse +http:\/\/127\.0\.0\.1:\d+\/sse \(/);
  assert.match(
    check.stdout,
    /^ +transport sse, chosen as no transport_type is written: a url ending in \/sse is the legacy SSE transport$/m,
  );
  assert.match(check.stdout, /byAnswer +streamable_http +http:\/\/127\.0\.0\.1:\d+\/sse\/ \(/);
  assert.match(check.stdout, /streamable HTTP, or SSE when the server answers the legacy way$/m);
  // Written: no reason line for it.
  assert.equal(check.stdout.match(/chosen as no transport_type/g)?.length, 2, check.stdout);

  // mcp add reads a URL the same way, and writes what it read.
  const added = await runPatchbay(box, ["mcp", "add", "added", `${sse.origin}/sse`]);
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /^Added sse server 'added' to/m);

  const tools = await runPatchbay(box, ["tools"]);
  assert.match(tools.stdout, /^added \(\d+ tools\)$/m, tools.stdout + tools.stderr);
  assert.match(tools.stdout, /^bySuffix \(\d+ tools\)$/m, tools.stdout + tools.stderr);
  assert.match(tools.stdout, /^byAnswer \(\d+ tools\)$/m, tools.stdout + tools.stderr);
  // transport_type written is obeyed: the same server over streamable HTTP fails, saying so.
  const failed = tools.stdout + tools.stderr;
  assert.match(failed, /✗ written +failed +streamable_http/);
  assert.match(
    failed,
    /wrong transport_type: .* speaks the legacy SSE transport, not streamable_http/,
  );
  assert.match(failed, /set "transport_type": "sse"/);

  const call = await runPatchbay(box, ["call", "byAnswer.echo", '{"message":"over sse"}']);
  assert.equal(call.code, 0, call.stderr);
  assert.match(call.stdout, /Echo: over sse/);

  // The doctor says the transport it connected over, and why.
  const doctor = await runPatchbay(box, ["doctor"]);
  assert.match(
    doctor.stdout,
    /server:byAnswer +connected over sse in [\d.]+ ms: .*; the server answered streamable HTTP the legacy way, HTTP 404 to the POST/,
  );
  assert.match(doctor.stdout, /server:bySuffix +connected over sse in [\d.]+ ms: [^;]*$/m);
});

Deno.test("/connections names the transport a bare url fell back to, and why", async () => {
  await using sse = await startEverythingHttp("sse");
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: { legacy: { url: `${sse.origin}/sse/` } },
  });
  await using repl = await startRepl(box);
  const shown = await repl.send(
    "/connections",
    /legacy: sse .* · connected since[^\n]*\n.*VS Code/s,
  );
  assert.match(shown, /✓ legacy +connected +sse +\d+ tools/);
  assert.match(
    shown.replace(/\s+/g, " "),
    /transport sse, chosen as no transport_type is written: the server answered streamable HTTP the legacy way, HTTP 404 to the POST and an "endpoint" event to the GET, so SSE, as VS Code falls back/,
  );
});

Deno.test("the trace of a fallback: the refusals that led to it are expected, the fallback an event", async () => {
  await using sse = await startEverythingHttp("sse");
  await using box = await sandbox();
  await writeConfig(box, configWith({ legacy: { url: `${sse.origin}/sse/` } }));
  const file = join(box.cwd, "wire.jsonl");
  const call = await runPatchbay(box, ["--trace", file, "call", "legacy.echo", '{"message":"x"}']);
  assert.equal(call.code, 0, call.stderr);

  const all = await runPatchbay(box, ["trace", "show", file]);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /legacy +· +fallback transport=sse reason=the server answered/);
  assert.match(
    all.stdout,
    /⇄ +POST \S+\/sse\/ 404 .*expected: a legacy SSE server; patchbay falls back to SSE$/m,
  );
  assert.match(all.stdout, /⇄ +GET \S+\/sse\/ 200 /);
  const errors = await runPatchbay(box, ["trace", "show", file, "--errors"]);
  assert.equal(errors.code, 0, errors.stderr);
  assert.doesNotMatch(errors.stdout, /ERROR/);
  assert.match(
    errors.stderr,
    /^\(not shown: 1 expected refusal of the version probe: .*; 1 expected refusal of streamable HTTP: a legacy SSE server refuses it, and patchbay falls back to SSE\)$/m,
  );
});
