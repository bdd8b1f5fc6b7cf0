/**
 * The hand-over (`lib/transports/handoff.ts`, `handoff_relay.ts`, `lib/permissions/
 * handoff_start.ts`): the launcher starts the servers of `tools`, `prompts` and `resources`
 * before the client, and the client takes them over a loopback port only with the launch's
 * token. Real processes throughout: `cat` for the relay's bytes, server-everything through
 * `deno task start`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parseLaunchArgs } from "../../lib/permissions/launch_args.ts";
import { plainLaunchArgs } from "../../lib/permissions/launcher.ts";
import { ROOT } from "../../commands/_declarations.ts";
import {
  handedOffProcess,
  HANDOFF_VARIABLE,
  header,
  readHandoff,
  STREAM,
  TOKEN_BYTES,
} from "../../lib/transports/handoff.ts";
import { startRelay } from "../../lib/transports/handoff_relay.ts";
import { childEnvironment } from "../../lib/transports/process.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { eventually, FIXTURE_SERVER, processAlive, processesWith } from "../support/servers.ts";

const cat = () => ({
  command: "cat",
  args: [],
  env: childEnvironment({}, (name) => Deno.env.get(name)),
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

Deno.test("hand-over: the client's stdin, stdout and exit status pass through the relay", async () => {
  const relay = await startRelay([cat()]);
  assert.ok(relay, "the relay started (the test runs with every grant)");
  try {
    const [server] = relay.handoff.servers;
    assert.ok(processAlive(server.pid), "cat runs before any client connects");
    const child = handedOffProcess(relay.handoff, server);
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":1}\n'));
    await writer.close();
    // cat echoes its stdin, then ends on its end: stdout closes and the status follows.
    assert.equal(await readAll(child.stdout), '{"jsonrpc":"2.0","id":1}\n');
    assert.deepEqual(await child.status, { success: true, code: 0, signal: null });
    assert.equal(await readAll(child.stderr), "");
  } finally {
    await relay.close();
  }
});

Deno.test("hand-over: a connection without the launch's token takes no stream", async () => {
  const relay = await startRelay([cat()]);
  assert.ok(relay);
  try {
    const { port, token, servers } = relay.handoff;
    // Another local account can reach the port, but not guess the token.
    const wrong = "00".repeat(TOKEN_BYTES) === token ? "11".repeat(TOKEN_BYTES) : "00".repeat(
      TOKEN_BYTES,
    );
    const stranger = await Deno.connect({ hostname: "127.0.0.1", port });
    await stranger.write(header(wrong, STREAM.io, 0));
    await stranger.write(new TextEncoder().encode("injected\n"));
    const buffer = new Uint8Array(64);
    assert.equal(await stranger.read(buffer), null, "closed unread");
    stranger.close();
    // A header naming no stream, or a server that is not there, is refused the same way.
    for (const bad of [header(token, 0x41, 0), header(token, STREAM.io, 7)]) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(bad);
      assert.equal(await conn.read(buffer), null);
      conn.close();
    }
    // Connections that send nothing hold no stream, and past a bound the oldest are closed.
    const silent = await Promise.all(
      Array.from({ length: 20 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    const refused = await Promise.all(silent.map(async (conn) => {
      const closed = await Promise.race([
        conn.read(buffer).then((read) => read === null, () => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000)),
      ]);
      conn.close();
      return closed;
    }));
    assert.ok(refused.slice(0, 4).every(Boolean), `the oldest closed: ${refused}`);
    // The client still gets the stream, and cat saw nothing of the stranger's bytes.
    const child = handedOffProcess(relay.handoff, servers[0]);
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("mine\n"));
    await writer.close();
    assert.equal(await readAll(child.stdout), "mine\n");
    await child.status;
    await readAll(child.stderr);
  } finally {
    await relay.close();
  }
});

Deno.test("hand-over: what the client leaves running ends with the relay", async () => {
  const tag = `patchbay-handoff-${crypto.randomUUID()}`;
  const relay = await startRelay([{
    command: DENO,
    args: ["run", "--quiet", "--no-config", FIXTURE_SERVER, "--ignore-eof", `--tag=${tag}`],
    env: childEnvironment({}, (name) => Deno.env.get(name)),
  }]);
  assert.ok(relay);
  await eventually(() => processesWith(tag).length === 1, "the server to run");
  // No client ever connected: closing ends the process group and waits for it.
  await relay.close();
  assert.deepEqual(processesWith(tag), []);
  await relay.close(); // A second close waits for the first.
});

Deno.test("hand-over: only a well-formed variable is read", () => {
  const token = "ab".repeat(TOKEN_BYTES);
  const servers = [{ digest: "d", pid: 42, index: 0 }];
  const read = (value: unknown) =>
    readHandoff((name) => name === HANDOFF_VARIABLE ? JSON.stringify(value) : undefined);
  assert.deepEqual(read({ port: 4000, token, servers }), { port: 4000, token, servers });
  assert.equal(readHandoff(() => undefined), undefined);
  assert.equal(readHandoff(() => "{not json"), undefined);
  assert.equal(read({ port: 0, token, servers }), undefined);
  assert.equal(read({ port: 70000, token, servers }), undefined);
  assert.equal(read({ port: 4000, token: "ab", servers }), undefined);
  assert.equal(read({ port: 4000, token: "zz".repeat(TOKEN_BYTES), servers }), undefined);
  // A malformed server is dropped, not guessed at.
  assert.deepEqual(
    read({ port: 4000, token, servers: [...servers, { digest: 1, pid: -1, index: 300 }] })
      ?.servers,
    servers,
  );
});

Deno.test("hand-over: the launcher reads a plain command line as its declarations do", () => {
  for (
    const line of [
      ["tools"],
      ["tools", "--json"],
      ["--config", "c.json", "prompts", "everything"],
      ["--env-file", ".env.test", "--config", "c.json", "--debug", "resources", "--json"],
      ["--log-file", "l.log", "--trace", "t.jsonl", "tools", "srv", "--json"],
    ]
  ) {
    assert.deepEqual(plainLaunchArgs(line), parseLaunchArgs(line, ROOT), line.join(" "));
  }
  for (const line of [["run", "hi"], ["tools", "--help"], ["--unrestricted", "tools"], []]) {
    assert.equal(plainLaunchArgs(line), undefined, line.join(" "));
  }
});

Deno.test("deno task start: tools lists servers the launcher started, and leaves none running", async () => {
  await using box = await sandbox();
  const tag = `patchbay-handoff-${crypto.randomUUID()}`;
  const config = await writeConfig(
    box,
    configWith({
      fixture: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", FIXTURE_SERVER, "--ignore-eof", `--tag=${tag}`],
      },
    }),
  );
  // The first start computes the plan, the second uses the remembered one: both hand over.
  for (const start of ["plan computed", "plan remembered"]) {
    const listed = await runPatchbay(box, ["--config", config, "--debug", "tools", "--json"]);
    assert.equal(listed.code, 0, `${start}: ${listed.stderr}`);
    assert.ok(
      JSON.parse(listed.stdout).tools.some((t: { tool: string }) => t.tool === "echo"),
      listed.stdout,
    );
    const starts = listed.stderr.match(/started pid \d+[^:\n]*:/g) ?? [];
    assert.equal(starts.length, 1, listed.stderr);
    assert.match(starts[0], /ahead \(by the launcher, before the client started\)/, start);
    assert.deepEqual(processesWith(tag), [], `${start}: a server outlived patchbay`);
  }
});
