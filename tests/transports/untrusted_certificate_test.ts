/**
 * Behind a TLS-inspecting proxy every HTTPS peer presents a certificate from a CA Deno does
 * not trust (`invalid peer certificate: UnknownIssuer`). A loopback HTTPS server whose
 * certificate a private CA signed fails the same way: as the model provider and as an HTTP MCP
 * server, the doctor, a `run` turn and `call` name the untrusted certificate and the remedy
 * (DENO_TLS_CA_STORE=system or DENO_CERT).
 *
 * @module
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { certificateFromPrivateCa } from "../support/tls.ts";
import { tempDir } from "../support/temp_dir.ts";

const REMEDY = /DENO_TLS_CA_STORE=system[\s\S]*DENO_CERT=/;

Deno.test("an HTTPS provider and server with an untrusted certificate: the doctor, run and call name it and the remedy", async () => {
  await using dir = await tempDir();
  const files = await certificateFromPrivateCa(dir.path);
  await using server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(files.cert),
    key: await Deno.readTextFile(files.key),
    onListen: () => {},
  }, () => new Response("{}", { headers: { "content-type": "application/json" } }));
  const base = `https://127.0.0.1:${server.addr.port}`;
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: `${base}/v1` },
    mcpServers: { remote: { url: `${base}/mcp`, timeout: 10 } },
  });

  const doctor = await runPatchbay(box, ["doctor"]);
  const doctorText = doctor.stdout + doctor.stderr;
  assert.notEqual(doctor.code, 0);
  assert.match(doctorText, /certificate of 127\.0\.0\.1:\d+ is not trusted/, doctorText);
  assert.match(doctorText, REMEDY, doctorText);
  assert.match(doctorText, /UnknownIssuer/, doctorText);
  const untrusted = doctorText.match(/is not trusted/g) ?? [];
  assert.ok(untrusted.length >= 2, `the provider and the server:\n${doctorText}`);

  const run = await runPatchbay(box, ["run", "hello"]);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /certificate of 127\.0\.0\.1(:\d+)? is not trusted/, run.stderr);
  assert.match(run.stderr, REMEDY, run.stderr);
  assert.match(run.stderr, /UnknownIssuer/, run.stderr);

  const call = await runPatchbay(box, ["call", "remote.anything", "{}"]);
  assert.notEqual(call.code, 0);
  assert.match(call.stderr, /certificate of 127\.0\.0\.1:\d+ is not trusted/, call.stderr);
  assert.match(call.stderr, REMEDY, call.stderr);
  assert.match(call.stderr, /UnknownIssuer/, call.stderr);

  // The remedy works: with the CA trusted, the server is reached (and fails for its own
  // reasons: it is no MCP server).
  const trusted = await runPatchbay(box, ["call", "remote.anything", "{}"], {
    env: { DENO_CERT: files.ca },
  });
  assert.doesNotMatch(trusted.stderr, /not trusted|certificate/, trusted.stderr);
});
