/** Comments and trailing commas of other clients' settings files blanked out for import. */

import assert from "node:assert/strict";
import { blankJsonComments } from "../../lib/config/jsonc.ts";

Deno.test("comments and trailing commas become spaces; strings that look like them stay", () => {
  const text = '{\n  // servers\n  "url": "https://h.example/a,}", /* one */\n  "a": ["x",],\n}\n';
  const blanked = blankJsonComments(text);
  assert.equal(blanked.length, text.length, "positions are kept");
  assert.equal(blanked.split("\n").length, text.split("\n").length);
  assert.deepEqual(JSON.parse(blanked), { url: "https://h.example/a,}", a: ["x"] });
  const escaped = '{"q": "say \\"//not a comment\\"", "b": 1}';
  assert.equal(blankJsonComments(escaped), escaped);
});
