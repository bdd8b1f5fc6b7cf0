/**
 * The client's request for a restart under an extended plan, as the launcher reads it: the
 * command line it starts again, the line a person reads, and the request file itself.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  describeAdds,
  grantList,
  RESTART_EXIT_CODE,
  RESTART_FILE_VARIABLE,
  restartArgs,
  restartCode,
  takeRestartRequest,
} from "../../lib/permissions/restart.ts";
import { EXIT } from "../../lib/errors.ts";
import { RefusedGrants } from "../../lib/deno_permission/refused_grant.ts";
import { typedOAuthFailure } from "../../lib/oauth/login_errors.ts";
import { formatError, refusedGrants } from "../../commands/_boundary.ts";
import { tempDir } from "../support/temp_dir.ts";

/** What the OAuth code makes of Deno refusing the way to `host` while `server` logs in. */
function refusedLogin(host: string, server: string): unknown {
  const denial = new Deno.errors.NotCapable(
    `Requires net access to "${host}", run again with the --allow-net flag`,
  );
  return typedOAuthFailure(new TypeError("fetch failed", { cause: denial }), {
    server,
    serverUrl: new URL("https://mcp.example/mcp"),
    redirectUri: "http://localhost:3000/callback",
  });
}

const ADD = { kind: "run", value: "/opt/bin/time-server", why: "starts server 'time'" };

Deno.test("the restarted command line resumes the conversation, before any --", () => {
  assert.deepEqual(restartArgs(["--debug"], "abc123"), ["--debug", "--resume", "abc123"]);
  assert.deepEqual(
    restartArgs(["run", "--", "--resume"], "abc123"),
    ["run", "--resume", "abc123", "--", "--resume"],
  );
  // Nothing said yet (or memory off): the same command line.
  assert.deepEqual(restartArgs(["-r", "old"], undefined), ["-r", "old"]);
});

Deno.test("one line says what is added, why, and what happens next", () => {
  assert.equal(
    describeAdds([ADD]),
    "Restarting under an extended plan, which adds run /opt/bin/time-server " +
      "(starts server 'time'); the conversation continues.",
  );
  assert.match(
    describeAdds([ADD, ADD], "the command runs again"),
    /\), run .*; the command runs again\.$/,
  );
});

Deno.test("the launcher reads a request once, and ignores what is not one", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const file = join(dir, "restart.json");
  await Deno.writeTextFile(file, JSON.stringify({ adds: [ADD], session: "abc" }));
  assert.deepEqual(await takeRestartRequest(file), { adds: [ADD], session: "abc" });
  assert.equal(await takeRestartRequest(file), undefined, "removed once read");
  await Deno.writeTextFile(file, "{not json");
  assert.deepEqual(await takeRestartRequest(file), { malformed: "not JSON" });
  await Deno.writeTextFile(file, JSON.stringify({ session: "abc" }));
  assert.match(
    (await takeRestartRequest(file) as { malformed: string }).malformed,
    /adds is not a list/,
    "no grants: no request",
  );
});

Deno.test("a malformed request is refused whole: grants, session, servers to rediscover, exit code", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const file = join(dir, "restart.json");
  const malformed: [unknown, RegExp][] = [
    [[ADD], /not an object/],
    [{ adds: [] }, /adds/],
    [{ adds: [{ kind: "run", value: 1, why: "x" }] }, /adds/],
    [{ adds: [ADD, "run x"] }, /adds/],
    [{ adds: [ADD], session: 42 }, /session/],
    [{ adds: [ADD], session: "--config=/tmp/evil.json" }, /session/],
    [{ adds: [ADD], rediscover: "time" }, /rediscover/],
    [{ adds: [ADD], rediscover: ["--config=/tmp/evil.json"] }, /rediscover/],
    [{ adds: [ADD], failedWith: 75 }, /failedWith/],
    [{ adds: [ADD], failedWith: "1" }, /failedWith/],
  ];
  for (const [request, why] of malformed) {
    await Deno.writeTextFile(file, JSON.stringify(request));
    const read = await takeRestartRequest(file);
    assert.ok(read && "malformed" in read, JSON.stringify(request));
    assert.match(read.malformed, why);
  }
  await Deno.writeTextFile(
    file,
    JSON.stringify({ adds: [ADD], session: "k3f9x2m7q1ab", rediscover: ["idp"], failedWith: 1 }),
  );
  assert.deepEqual(await takeRestartRequest(file), {
    adds: [ADD],
    session: "k3f9x2m7q1ab",
    rediscover: ["idp"],
    failedWith: 1,
  });
});

Deno.test("what the client wrote reaches the terminal without its escape sequences", () => {
  const line = grantList([{ kind: "run", value: "\x1b]0;owned\x07/bin/x", why: "\x1b[2Jwhy" }]);
  assert.equal(line, "run /bin/x (why)");
});

Deno.test("only a failed command asks for a restart: not Ctrl+C, SIGTERM, usage, or 75 itself", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const file = join(dir, "restart.json");
  const saved = [Deno.env.get("PATCHBAY_LAUNCHER"), Deno.env.get(RESTART_FILE_VARIABLE)];
  Deno.env.set("PATCHBAY_LAUNCHER", "narrow");
  Deno.env.set(RESTART_FILE_VARIABLE, file);
  try {
    const refused = new RefusedGrants();
    refused.note(refusedLogin("idp.example:443", "remote"));
    for (const code of [EXIT.interrupted, EXIT.terminated, EXIT.usage, EXIT.brokenPipe]) {
      assert.equal(await restartCode(code, refused), code);
      assert.equal(await takeRestartRequest(file), undefined, `no request for ${code}`);
    }
    assert.equal(await restartCode(RESTART_EXIT_CODE, refused), RESTART_EXIT_CODE);
    assert.equal(await restartCode(EXIT.failure, refused), RESTART_EXIT_CODE);
    const request = await takeRestartRequest(file);
    assert.deepEqual(request, {
      adds: [{
        kind: "net",
        value: "idp.example:443",
        why: "the new authorization server of 'remote'",
      }],
      rediscover: ["remote"],
      failedWith: EXIT.failure,
    });
  } finally {
    const names = ["PATCHBAY_LAUNCHER", RESTART_FILE_VARIABLE];
    names.forEach((name, i) =>
      saved[i] === undefined ? Deno.env.delete(name) : Deno.env.set(name, saved[i]!)
    );
  }
});

Deno.test("a failed command without a refused grant asks for no restart", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const file = join(dir, "restart.json");
  const saved = [Deno.env.get("PATCHBAY_LAUNCHER"), Deno.env.get(RESTART_FILE_VARIABLE)];
  Deno.env.set("PATCHBAY_LAUNCHER", "narrow");
  Deno.env.set(RESTART_FILE_VARIABLE, file);
  try {
    const refused = new RefusedGrants();
    // A refusal of something else than the way to an authorization server carries none.
    refused.note(new Deno.errors.NotCapable('Requires read access to "/etc/x"'));
    assert.equal(await restartCode(EXIT.failure, refused), EXIT.failure);
    assert.equal(await takeRestartRequest(file), undefined);
  } finally {
    const names = ["PATCHBAY_LAUNCHER", RESTART_FILE_VARIABLE];
    names.forEach((name, i) =>
      saved[i] === undefined ? Deno.env.delete(name) : Deno.env.set(name, saved[i]!)
    );
  }
});

Deno.test("the refused grant travels on the error, and the boundary that shows it keeps it", () => {
  const error = refusedLogin("idp.example:443", "remote");
  assert.deepEqual(refusedGrants.list(), { adds: [], rediscover: [] }, "nothing kept yet");
  // Wrapped as a connection failure wraps it, the grant is still found.
  const shown = formatError(new Error("connect failed", { cause: error }));
  assert.match(shown, /--allow-net=idp\.example:443 was not granted/);
  formatError(refusedLogin("idp.example:443", "remote")); // the same grant twice: kept once
  assert.deepEqual(refusedGrants.list(), {
    adds: [{
      kind: "net",
      value: "idp.example:443",
      why: "the new authorization server of 'remote'",
    }],
    rediscover: ["remote"],
  });
});
