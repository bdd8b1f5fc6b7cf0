/**
 * The connection manager against the reference servers: server-everything over stdio,
 * streamable HTTP and SSE, and server-filesystem over stdio.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { ConnectionManager } from "../../lib/connections/manager.ts";
import type { ProgressUpdate } from "../../lib/connections/types.ts";
import type { ServerConfig } from "../../lib/config/types.ts";
import { CancelledError, ToolTimeoutError } from "../../lib/errors.ts";
import { filesystemEntry, NODE } from "../support/deps.ts";
import {
  eventually,
  everythingStdio,
  firstText,
  httpEntry,
  startEverythingHttp,
  startManager,
  stdioEntry,
} from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

/** A started manager with its events recorded; `await using` closes it. */
const managed = (servers: ServerConfig[]) => startManager({ servers });

/** Everything the issue asks of server-everything, on whichever transport `entry` uses. */
async function exerciseEverything(entry: ServerConfig): Promise<void> {
  await using session = await managed([entry]);
  const { manager, events } = session;
  const [status] = session.states;
  assert.equal(status.state, "connected", status.error?.reason);
  assert.equal(status.serverInfo?.name, "mcp-servers/everything");
  assert.ok(status.protocolVersion);
  assert.ok(
    status.counts.tools >= 10 && status.counts.prompts >= 4 && status.counts.resources >= 5,
  );

  // Tools, called by their catalogue names.
  const names = manager.tools().map((t) => t.name);
  assert.ok(names.includes("everything__echo"), names.join(" "));
  assert.equal(
    firstText(await manager.callTool("everything__echo", { message: "hello" })),
    "Echo: hello",
  );
  assert.match(firstText(await manager.callTool("everything__get-sum", { a: 2, b: 3 }))!, /\b5\b/);

  // Prompts.
  assert.ok(manager.prompts().some((p) => p.name === "args-prompt" && p.server === "everything"));
  const prompt = await manager.getPrompt("everything", "args-prompt", { city: "Paris" });
  assert.match(JSON.stringify(prompt.messages), /Paris/);

  // Resources and templates.
  const [resource] = manager.resources();
  const read = await manager.readResource("everything", resource.uri);
  assert.equal(read.contents[0].uri, resource.uri);
  assert.ok(manager.resourceTemplates().some((t) => t.uriTemplate.includes("{resourceId}")));

  // Completions (tab completion in the REPL).
  const completion = await manager.complete("everything", {
    ref: { type: "ref/prompt", name: "completable-prompt" },
    argument: { name: "department", value: "E" },
  });
  assert.ok(completion.values.includes("Engineering"), completion.values.join(", "));

  // A resource added by a tool: resources/list_changed, re-listed.
  await manager.callTool("everything__gzip-file-as-resource", {
    name: "note.txt.gz",
    data: "data:text/plain;base64,aGVsbG8gd29ybGQ=",
    outputType: "resourceLink",
  });
  await eventually(
    () => events.some((e) => e.type === "list_changed" && e.list === "resources"),
    "resources list_changed",
  );
  await eventually(
    () => manager.resources().some((r) => r.name === "note.txt.gz"),
    "new resource listed",
  );

  // Server log notifications.
  await manager.callTool("everything__toggle-simulated-logging", {});
  await eventually(() => events.some((e) => e.type === "log"), "a log notification", 15_000);
  const log = events.find((e) => e.type === "log")!;
  assert.equal(log.server, "everything");
  assert.ok(session.log.lines.some((l) => l.component.endsWith("server:everything:log")));

  // Progress on a long-running tool.
  const progress: ProgressUpdate[] = [];
  const done = await manager.callTool(
    "everything__trigger-long-running-operation",
    { duration: 0.5, steps: 5 },
    { onProgress: (update) => progress.push(update) },
  );
  assert.match(firstText(done)!, /completed/);
  // The last notification may trail the result (the SDK then drops it).
  const steps = progress.map((p) => p.progress);
  assert.deepEqual(steps, [1, 2, 3, 4, 5].slice(0, steps.length));
  assert.ok(steps.length >= 4, `progress: ${steps.join(", ")}`);
  assert.ok(progress.every((p) => p.total === 5));

  // Cancelling a call.
  // Cancelled, not timed out: a call left to run would end in a ToolTimeoutError.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(
    () =>
      manager.callTool("everything__trigger-long-running-operation", { duration: 20, steps: 20 }, {
        signal: controller.signal,
      }),
    CancelledError,
  );

  // A call that outlives its bound.
  await assert.rejects(
    () =>
      manager.callTool("everything__trigger-long-running-operation", { duration: 20, steps: 40 }, {
        toolCallTimeoutSeconds: 0.6,
        onProgress: () => {},
      }),
    (error) => error instanceof ToolTimeoutError && /within 0.6 s/.test(error.message),
  );

  // The connection is still healthy after all that.
  assert.equal(
    firstText(await manager.callTool("everything__echo", { message: "ok" })),
    "Echo: ok",
  );
  await manager.callTool("everything__toggle-simulated-logging", {});
}

Deno.test("server-everything over stdio", async () => {
  await exerciseEverything(everythingStdio());
});

Deno.test("server-everything over streamable HTTP", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  await exerciseEverything(httpEntry("everything", `${server.origin}/mcp`));
});

Deno.test("server-everything over SSE", async () => {
  await using server = await startEverythingHttp("sse");
  await exerciseEverything(httpEntry("everything", `${server.origin}/sse`, { transport: "sse" }));
});

/** A temporary folder per name, removed by `await using`. */
async function folders(...names: string[]) {
  const folder = await tempDir("patchbay-roots-");
  const base = await Deno.realPath(folder.path);
  const paths = names.map((name) => join(base, name));
  for (const path of paths) await Deno.mkdir(path);
  return {
    paths,
    [Symbol.asyncDispose]: () => folder[Symbol.asyncDispose](),
  };
}

/** The folders server-filesystem says it may use. */
async function allowedDirectories(manager: ConnectionManager, server: string): Promise<string[]> {
  const result = await manager.callTool(`${server}__list_allowed_directories`, {});
  return firstText(result)!.split("\n").slice(1).filter(Boolean);
}

Deno.test("roots: a server whose entry has none is offered none (no capability)", async () => {
  await using session = await managed([everythingStdio()]);
  const names = session.manager.tools().map((t) => t.name);
  assert.ok(names.includes("everything__echo"), names.join(" "));
  // server-everything registers get-roots-list only for clients declaring roots.
  assert.ok(!names.includes("everything__get-roots-list"), names.join(" "));
});

Deno.test("roots: the entry's folders reach the server as file:// URLs", async () => {
  await using dirs = await folders("one", "two words");
  await using session = await managed([everythingStdio("everything", { roots: dirs.paths })]);
  const result = JSON.stringify(await session.manager.callTool("everything__get-roots-list", {}));
  assert.ok(result.includes(`file://${dirs.paths[0]}`), result);
  assert.ok(result.includes(`file://${dirs.paths[1].replace(" ", "%20")}`), result);
  assert.ok(!result.includes(`file://${Deno.cwd()}"`), result);
});

Deno.test("roots: server-filesystem keeps its folder without roots, uses the entry's roots with them", async () => {
  await using dirs = await folders("given", "rooted", "later");
  const [given, rooted, later] = dirs.paths;
  const files = (name: string, extra: Partial<ServerConfig> = {}) =>
    stdioEntry(name, NODE, [filesystemEntry(), given], extra as never);
  await using session = await managed([files("plain"), files("rooted", { roots: [rooted] })]);
  const { manager } = session;
  assert.deepEqual(await allowedDirectories(manager, "plain"), [given]);
  // The server asks for roots after initialization, and then replaces its folders.
  await eventually(
    async () => (await allowedDirectories(manager, "rooted")).join() === rooted,
    "server-filesystem adopting the configured root",
  );
  // The working directory is never offered.
  const outside = await manager.callTool("plain__list_directory", { path: Deno.cwd() });
  assert.equal(outside.isError, true);

  // Roots changed mid-session: roots/list_changed, and the server asks again.
  await manager.setRoots("rooted", [later]);
  await eventually(
    async () => (await allowedDirectories(manager, "rooted")).join() === later,
    "server-filesystem adopting the changed root",
  );
  // Roots for a server that had none: a new handshake declares the capability.
  await manager.setRoots("plain", [later]);
  assert.equal(manager.status("plain")?.state, "connected");
  await eventually(
    async () => (await allowedDirectories(manager, "plain")).join() === later,
    "server-filesystem reconnected with roots",
  );
});

Deno.test("server-filesystem over stdio", async () => {
  await using tmp = await tempDir("patchbay-fs-");
  const dir = tmp.path;
  await Deno.writeTextFile(join(dir, "hello.txt"), "hello from the test\n");
  const entry = stdioEntry("files", NODE, [filesystemEntry(), dir]);
  await using session = await managed([entry]);
  const { manager } = session;
  const [status] = session.states;
  assert.equal(status.state, "connected", status.error?.reason);
  const names = manager.tools().map((t) => t.name);
  for (const tool of ["files__read_text_file", "files__list_directory", "files__write_file"]) {
    assert.ok(names.includes(tool), `${tool} missing from ${names.join(" ")}`);
  }
  // It offers no prompts or resources: the lists are empty, not errors.
  assert.deepEqual(manager.prompts(), []);
  assert.deepEqual(manager.resources(), []);

  const listing = await manager.callTool("files__list_directory", { path: dir });
  assert.match(firstText(listing)!, /\[FILE\] hello\.txt/);
  const content = await manager.callTool("files__read_text_file", {
    path: join(dir, "hello.txt"),
  });
  assert.equal(firstText(content), "hello from the test\n");
  await manager.callTool("files__write_file", { path: join(dir, "out.txt"), content: "written" });
  assert.equal(await Deno.readTextFile(join(dir, "out.txt")), "written");

  // Outside the roots: the server refuses, and the refusal is a result, not a crash.
  const outside = await manager.callTool("files__read_text_file", { path: "/etc/hostname" });
  assert.equal(outside.isError, true);
  assert.equal(manager.status("files")?.state, "connected");
});
