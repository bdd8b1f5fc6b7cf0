/** Edits spliced into a JSON text keep everything they do not touch as it was written. */

import assert from "node:assert/strict";
import { newDocument, removeMember, setMember } from "../../lib/config/json_edit.ts";

const ORIGINAL = `{
    "$schema": "./servers_config.schema.json",
    "LLM": {"provider": "openai", "model": "gpt-4o-mini"},
    "mcpServers": {
        "zeta": { "command": "z" },
        "alpha": {
            "url": "http://127.0.0.1:1/mcp"
        }
    }
}
`;

Deno.test("a new member takes its neighbours' indentation; removing it restores the text", () => {
  const added = setMember(ORIGINAL, ["mcpServers"], "new", {
    command: "node",
    args: ["server.js", "--port", "1"],
    env: { A: "1" },
  });
  assert.equal(
    added,
    ORIGINAL.replace(
      '"http://127.0.0.1:1/mcp"\n        }\n',
      '"http://127.0.0.1:1/mcp"\n        },\n        "new": {\n' +
        '            "command": "node",\n            "args": ["server.js", "--port", "1"],\n' +
        '            "env": {\n                "A": "1"\n            }\n        }\n',
    ),
  );
  assert.equal(removeMember(added, ["mcpServers"], "new"), ORIGINAL);
});

Deno.test("a one-line object stays on one line; a value is replaced in place", () => {
  const disabled = setMember(ORIGINAL, ["mcpServers", "zeta"], "disabled", true);
  assert.match(disabled, /"zeta": \{ "command": "z", "disabled": true \},/);
  const enabled = setMember(disabled, ["mcpServers", "zeta"], "disabled", false);
  assert.equal(enabled, ORIGINAL.replace('"z" }', '"z", "disabled": false }'));
});

Deno.test("removing the first, a middle or the only member leaves valid JSON", () => {
  const first = removeMember(ORIGINAL, ["mcpServers"], "zeta");
  assert.deepEqual(Object.keys(JSON.parse(first).mcpServers), ["alpha"]);
  assert.ok(first.includes('    "mcpServers": {\n        "alpha": {'), first);
  const none = removeMember(first, ["mcpServers"], "alpha");
  assert.deepEqual(JSON.parse(none).mcpServers, {});
  assert.equal(removeMember(none, ["mcpServers"], "absent"), none);
  const again = setMember(none, ["mcpServers"], "x", { url: "http://h" });
  assert.ok(again.includes('    "mcpServers": {\n        "x": {\n'), again);
});

Deno.test("key order is the text's, not JavaScript's (numeric names stay where they are)", () => {
  const text = '{\n  "mcpServers": {\n    "b": {},\n    "10": {},\n    "a": {}\n  }\n}\n';
  const removed = removeMember(text, ["mcpServers"], "b");
  assert.equal(removed, '{\n  "mcpServers": {\n    "10": {},\n    "a": {}\n  }\n}\n');
});

Deno.test("a new document ends with a newline and writes short arrays on one line", () => {
  assert.equal(newDocument({ a: ["x", "y"], b: {} }), '{\n  "a": ["x", "y"],\n  "b": {}\n}\n');
});

Deno.test("a CRLF file gets CRLF line breaks in what is added; add then remove restores it", () => {
  const text = '{\r\n  "mcpServers": {\r\n    "a": {"command": "x"}\r\n  }\r\n}\r\n';
  const added = setMember(text, ["mcpServers"], "b", { command: "y" });
  assert.ok(!/[^\r]\n/.test(added), JSON.stringify(added));
  assert.equal(removeMember(added, ["mcpServers"], "b"), text);
});
