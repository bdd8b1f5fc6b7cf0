/**
 * A remembered approval covers everything in the server's entry that decides what runs:
 * command, args, cwd, env (names and values), url and header names. Changing any of them
 * asks again, naming what changed; a header's value (a renewed token) does not. Old
 * approvals.json entries (before env and headers were covered, or of another shape) still
 * load and are asked again, never a crash. Pure: the policy and the store on a temporary
 * file.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalPolicy, type ServerTrust } from "../../lib/agent/approval.ts";
import {
  ApprovalStore,
  definitionHash,
  type RememberedApproval,
} from "../../lib/agent/approval_store.ts";
import {
  changedParts,
  describeLaunchChange,
  launchIdentity,
} from "../../lib/agent/launch_identity.ts";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { tempDir } from "../support/temp_dir.ts";

const echo: CatalogueTool = {
  name: "fx__echo",
  server: "fx",
  originalName: "echo",
  description: "Echoes",
  inputSchema: { type: "object" },
};

const stdio: ServerTrust = {
  name: "fx",
  trusted: false,
  transport: "stdio",
  command: "node",
  args: ["server.js"],
  cwd: "/work",
  env: { API_TOKEN: "t1", LOG: "info" },
};

const http: ServerTrust = {
  name: "fx",
  trusted: false,
  transport: "streamable_http",
  url: "https://mcp.example/mcp",
  headers: { Authorization: "Bearer t1", "X-Team": "a" },
};

/** Remembers "[p]roject: always" for echo under `server` in a store at `file`; its entry. */
async function approveUnder(server: ServerTrust, file: string): Promise<RememberedApproval> {
  const store = new ApprovalStore(file);
  const policy = new ApprovalPolicy([server], { folder: "/work", approvals: [], store });
  assert.equal(policy.check(echo), "not-approved");
  policy.record("always-project", echo, [echo]);
  await policy.flush();
  const [remembered] = await store.list();
  return remembered;
}

/** A new session's policy for `server`, with the approvals in `file`. */
async function sessionFor(server: ServerTrust, file: string): Promise<ApprovalPolicy> {
  const store = new ApprovalStore(file);
  return new ApprovalPolicy([server], { folder: "/work", approvals: await store.list(), store });
}

Deno.test("each part of a stdio entry that decides what runs ends a remembered approval, named", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "approvals.json");
  const remembered = await approveUnder(stdio, file);
  assert.ok(remembered.launchParts, "the parts are recorded");
  assert.ok(!JSON.stringify(remembered).includes("t1"), "no value of the environment is kept");
  assert.equal((await sessionFor(stdio, file)).check(echo), undefined, "the same entry runs");
  const changes: [Partial<ServerTrust>, string][] = [
    [{ command: "deno" }, "command"],
    [{ args: ["server.js", "--admin"] }, "arguments"],
    [{ cwd: "/elsewhere" }, "working folder"],
    [{ env: { ...stdio.env, NODE_OPTIONS: "--require inject.js" } }, "environment"],
    [{ env: { API_TOKEN: "t2", LOG: "info" } }, "environment"],
    [{ env: { LOG: "info" } }, "environment"],
  ];
  for (const [change, word] of changes) {
    const policy = await sessionFor({ ...stdio, ...change }, file);
    assert.equal(policy.check(echo), "server-changed", JSON.stringify(change));
    const said = describeLaunchChange(policy.launchChange(echo)!);
    assert.equal(said, `its server's ${word} changed since you approved it`);
  }
  // The order variables are written in changes nothing that runs.
  const reordered = await sessionFor({ ...stdio, env: { LOG: "info", API_TOKEN: "t1" } }, file);
  assert.equal(reordered.check(echo), undefined);
});

Deno.test("a server at a URL: its url and header names are covered, a header's value is not", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "approvals.json");
  await approveUnder(http, file);
  const renewed = { ...http, headers: { Authorization: "Bearer t2", "x-team": "b" } };
  assert.equal((await sessionFor(renewed, file)).check(echo), undefined, "a renewed token");
  const added = await sessionFor({ ...http, headers: { ...http.headers, Cookie: "s" } }, file);
  assert.equal(added.check(echo), "server-changed");
  assert.deepEqual(added.launchChange(echo), ["headers"]);
  const moved = await sessionFor({ ...http, url: "https://evil.example/mcp" }, file);
  assert.deepEqual(moved.launchChange(echo), ["url"]);
  assert.match(describeLaunchChange(["url", "headers"]), /its server's URL and header names/);
});

Deno.test("within a session, an 'always' ends when /refresh brings another environment", () => {
  const policy = new ApprovalPolicy([stdio]);
  policy.record("always-tool", echo, [echo]);
  assert.equal(policy.check(echo), undefined);
  policy.setServers([{ ...stdio, env: { ...stdio.env, NODE_OPTIONS: "--require inject.js" } }]);
  assert.equal(policy.check(echo), "server-changed");
  assert.deepEqual(policy.launchChange(echo), ["env"]);
});

Deno.test("old approvals.json entries load and are asked again, saying so; odd ones never crash", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "approvals.json");
  const definition = definitionHash(
    JSON.stringify(["fx", "echo", "Echoes", { type: "object" }, null]),
  );
  const base = { folder: "/work", server: "fx", tool: "echo", definition };
  const oldLaunch = definitionHash(
    JSON.stringify(["stdio", "node", ["server.js"], "/work", null]),
  );
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      version: 1,
      approvals: [
        // Remembered before the server's start was recorded at all.
        { id: "aaaaaaaa", ...base, approvedAt: "2025-01-01T00:00:00Z" },
        // Remembered with the former layout (command, args, cwd, url: no env).
        { id: "bbbbbbbb", ...base, tool: "other", launch: oldLaunch, approvedAt: "2025-01-01" },
        // Parts that are not digests, and entries of no known shape.
        { id: "cccccccc", ...base, tool: "third", launch: "x", launchParts: [1], approvedAt: "x" },
        { id: 7 },
        null,
        "text",
      ],
    }),
  );
  const store = new ApprovalStore(file);
  const listed = await store.list();
  assert.deepEqual(listed.map((a) => a.id), ["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
  assert.equal(listed[2].launchParts, undefined, "parts that are not digests are dropped");
  const policy = new ApprovalPolicy([stdio], { folder: "/work", approvals: listed, store });
  assert.equal(policy.check(echo), "server-changed");
  assert.equal(policy.launchChange(echo), "unrecorded");
  assert.match(
    describeLaunchChange("unrecorded"),
    /approved before patchbay bound approvals to the server's environment and headers/,
  );
  const other = { ...echo, name: "fx__other", originalName: "other" };
  assert.notEqual(policy.check(other), undefined, "the former layout never matches");
  // Approving again records the new layout; the next session runs it unasked.
  policy.record("always-project", echo, [echo]);
  await policy.flush();
  assert.equal((await sessionFor(stdio, file)).check(echo), undefined);
});

Deno.test("the identity's digest covers every part; each part's digest names only its own change", () => {
  const base = launchIdentity(stdio);
  const changed = launchIdentity({ ...stdio, cwd: "/other" });
  assert.notEqual(base.digest, changed.digest);
  assert.deepEqual(changedParts(base.parts, changed), ["cwd"]);
  assert.equal(changedParts(undefined, changed), "unrecorded");
  assert.equal(changedParts({ command: "x" }, changed), "unrecorded");
});
