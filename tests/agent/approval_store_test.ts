/**
 * The remembered approvals' file shared by several processes: sessions of the same person
 * remembering approvals at the same moment all keep theirs (none writes over what another
 * has just added), and the file stays owner-only.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalStore } from "../../lib/agent/approval_store.ts";
import { DENO } from "../support/deps.ts";
import { tempDir } from "../support/temp_dir.ts";

const STORE = new URL("../../lib/agent/approval_store.ts", import.meta.url).href;
/** Processes writing at once, and approvals each remembers. */
const WRITERS = 6;
const EACH = 5;

Deno.test("approvals remembered by several processes at once are all kept", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "state", "approvals.json");
  const script = `
    const { ApprovalStore } = await import(${JSON.stringify(STORE)});
    const [path, who] = Deno.args;
    const store = new ApprovalStore(path);
    for (let i = 0; i < ${EACH}; i++) {
      await store.add({
        folder: "/project", server: "s" + who, tool: "t" + i, definition: "d", approvedAt: "now",
      });
    }`;
  const writers = Array.from({ length: WRITERS }, (_, who) =>
    new Deno.Command(DENO, {
      args: ["eval", "--quiet", "--no-config", script, "--", file, String(who)],
      stdout: "piped",
      stderr: "piped",
    }).output());
  for (const result of await Promise.all(writers)) {
    assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  }
  const all = await new ApprovalStore(file).list();
  assert.equal(all.length, WRITERS * EACH, JSON.stringify(all.map((a) => `${a.server}/${a.tool}`)));
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);

  // Revoking goes through the same lock and leaves the others.
  const revoked = await new ApprovalStore(file).revoke((a) => a.server === "s0");
  assert.equal(revoked.length, EACH);
  assert.equal((await new ApprovalStore(file).list()).length, (WRITERS - 1) * EACH);
});
