/**
 * The client's request for a restart under an extended plan, as the launcher reads it: the
 * command line it starts again, the line a person reads, and the request file itself.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { describeAdds, restartArgs, takeRestartRequest } from "../lib/permissions/restart.ts";

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
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "restart.json");
    await Deno.writeTextFile(file, JSON.stringify({ adds: [ADD], session: "abc" }));
    assert.deepEqual(await takeRestartRequest(file), { adds: [ADD], session: "abc" });
    assert.equal(await takeRestartRequest(file), undefined, "removed once read");
    await Deno.writeTextFile(file, "{not json");
    assert.equal(await takeRestartRequest(file), undefined);
    await Deno.writeTextFile(file, JSON.stringify({ session: "abc" }));
    assert.equal(await takeRestartRequest(file), undefined, "no grants: no request");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
