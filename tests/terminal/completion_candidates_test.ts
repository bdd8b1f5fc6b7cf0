/**
 * Tab completion candidates from servers, made safe before readline shows or inserts them
 * (lib/repl/candidates.ts).
 */

import assert from "node:assert/strict";
import {
  MAX_CANDIDATE_CHARS,
  MAX_COMPLETION_CANDIDATES,
  safeCandidates,
} from "../../lib/terminal/candidates.ts";

Deno.test("candidates with controls, invisible characters or too long are dropped", () => {
  const long = "@s:" + "y".repeat(MAX_CANDIDATE_CHARS);
  const kept = safeCandidates(
    ["@s:a", "@s:\x1b]0;t\x07", "@s:b\nc", "@s:r\u202eev", "@s:\u009b2J", long, "@s:ok"],
    "@s:",
  );
  assert.deepEqual(kept, ["@s:a", "@s:ok"]);
});

Deno.test("a cut list completes only what every candidate shares", () => {
  const many = Array.from({ length: 5000 }, (_, i) => `@s:many://${i}`);
  assert.deepEqual(safeCandidates(many, "@s:"), ["@s:many://"]);
  const mixed = [...many, "@s:other"];
  const cut = safeCandidates(mixed, "@s:");
  assert.equal(cut.length, MAX_COMPLETION_CANDIDATES);
  assert.equal(cut[0], "@s:", "the typed word first, so readline inserts nothing more");
  assert.deepEqual(safeCandidates(["@s:x", "@s:y"], "@s:"), ["@s:x", "@s:y"]);
});
