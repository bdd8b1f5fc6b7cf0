/**
 * The wording of the interactive client's unprompted lines (lib/repl/notices.ts), apart
 * from when the session shows them: server names and texts lose their terminal escapes,
 * start-up lines name the servers still connecting, quiet server logs are not shown.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ServerStatus } from "../../lib/connections/types.ts";
import { names, serverLogNotice, startupNotice } from "../../lib/session/notices.ts";
import { createStyle } from "../../lib/terminal/style.ts";

const plain = createStyle(false);

Deno.test("notices: start-up lines count what a server offers and name those still connecting", () => {
  const connected = {
    name: "notes",
    state: "connected",
    counts: { tools: 1, prompts: 0, resources: 2 },
  } as unknown as ServerStatus;
  assert.equal(
    startupNotice(plain, "notes", connected, ["a", "b\x1b[2J", "c"]),
    "✓ notes connected · 1 tool, 0 prompts, 2 resources · still connecting: a, b and c\n",
  );
  const failed = {
    name: "db",
    state: "failed",
    error: { reason: "refused\x1b]0;x\x07" },
  } as unknown as ServerStatus;
  assert.equal(startupNotice(plain, "db", failed, []), "✗ db failed: refused\n");
  assert.equal(startupNotice(plain, "db", undefined, []), undefined);
  assert.equal(names(["only"]), "only");
  assert.equal(names(["a", "b"]), "a and b");
});

Deno.test("notices: a server's quiet log is shown only in debug mode, its text without escapes", () => {
  const info = { type: "log", server: "s", level: "info", data: "hello" } as const;
  assert.equal(serverLogNotice(plain, "s", info, false), undefined);
  assert.equal(serverLogNotice(plain, "s", info, true), "[s] info: hello\n");
  const loud = { type: "log", server: "s", level: "error", data: { a: "\x1b[31mred" } } as const;
  assert.equal(serverLogNotice(plain, "s", loud, false), '[s] error: {"a":"\\u001b[31mred"}\n');
});
