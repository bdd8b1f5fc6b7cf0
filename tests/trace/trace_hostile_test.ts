/**
 * A hostile server against the wire trace: it echoes a configured secret and writes
 * terminal escapes (a window title, colours, a bidi override, a C1 CSI) in its answers and
 * in an error message. The secret reaches neither the trace file nor the timeline of
 * `trace show`; the file holds the escapes only as JSON `\u` escapes (it reads back the
 * same, and `cat` cannot move a terminal), and the timeline holds none. See docs/trace.md.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageLine } from "../../lib/trace/record.ts";
import { parseTrace } from "../../lib/trace/timeline.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

const SECRET = "hs-0123456789abcdef";
const HOSTILE = fileURLToPath(new URL("../fixtures/hostile_server.ts", import.meta.url));
/** Written into the fixture's flags as JSON escapes, which it decodes. */
const ATTACK = "\\u001b]0;pwned\\u0007\\u001b[31mred\\u001b[0m \\u202eabc \\u009b2J";
/** Raw characters that must not be in the file or on the screen. */
const RAW = ["\u001b", "\u0007", "\u202e", "\u009b"];

Deno.test("a hostile server's secrets and escapes reach neither the trace file nor the timeline", async () => {
  await using box = await sandbox({ HOSTILE_SECRET: SECRET });
  await writeConfig(
    box,
    configWith({
      h: {
        command: DENO,
        args: [
          "run",
          "--quiet",
          "--no-config",
          HOSTILE,
          `--text=leak \${HOSTILE_SECRET} ${ATTACK}`,
          `--error-text=failed with \${HOSTILE_SECRET} ${ATTACK}`,
        ],
        env: { API_TOKEN: "${HOSTILE_SECRET}" },
      },
    }),
  );
  const file = join(box.cwd, "hostile.jsonl");
  const said = await runPatchbay(box, ["--trace", file, "call", "h.say"]);
  assert.equal(said.code, 0, said.stderr);
  const failed = await runPatchbay(box, ["--trace", file, "call", "h.fail"]);
  assert.notEqual(failed.code, 0);

  const text = await Deno.readTextFile(file);
  assert.ok(!text.includes(SECRET), "the secret is masked in the file");
  for (const char of RAW) {
    assert.ok(!text.includes(char), `no raw U+${char.charCodeAt(0).toString(16)} in the file`);
  }
  // What the server said is there, masked, with its escapes as JSON escapes.
  const lines = parseTrace(text).lines.filter((l): l is MessageLine => l.kind === "message");
  const answer = lines.find((l) => l.method === "tools/call" && l.type === "result");
  assert.ok(answer);
  const said_ = (answer.message as { result: { content: { text: string }[] } }).result;
  assert.equal(said_.content[0].text, `leak [REDACTED] ${JSON.parse(`"${ATTACK}"`)}`);
  const error = lines.find((l) => l.method === "tools/call" && l.type === "error");
  assert.ok(error, "the error response is in the trace");
  assert.match(error.error?.message ?? "", /^failed with \[REDACTED\] /);
  const spawn = parseTrace(text).lines.find((l) => l.kind === "event" && l.event === "spawn");
  assert.ok(spawn && JSON.stringify(spawn).includes("leak [REDACTED]"), "the arguments masked");

  const shown = await runPatchbay(box, ["trace", "show", file]);
  assert.equal(shown.code, 0, shown.stderr);
  const screen = shown.stdout + shown.stderr;
  assert.ok(!screen.includes(SECRET), "the secret is masked in the timeline");
  for (const char of RAW) {
    assert.ok(
      !screen.includes(char),
      `no U+${char.charCodeAt(0).toString(16)} in the timeline`,
    );
  }
  assert.match(screen, /←\s+tools\/call #\d+ ERROR -32000 failed with \[REDACTED\] red abc 2J/);
  const errors = await runPatchbay(box, ["trace", "show", file, "--errors"]);
  assert.ok(errors.stdout.trim().split("\n").every((line) => /ERROR/.test(line)), errors.stdout);
});
