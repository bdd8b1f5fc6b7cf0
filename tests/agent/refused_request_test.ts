import assert from "node:assert/strict";
import { errorResultFailure } from "../../lib/agent/tool_failure.ts";
import { refusalIn, refusalRemedy } from "../../lib/agent/refused_request.ts";
import { remedyFor } from "../../lib/errors.ts";

const tool = { server: "everything", originalName: "trigger-sampling-request" };

Deno.test("a tool failing on patchbay's refusal is worded as patchbay's, not the server's own message", () => {
  const said = "MCP error -1: patchbay refused the sampling request: no language model is " +
    "attached to answer server requests in this session";
  const { error, text } = errorResultFailure(tool, said, "script");
  assert.equal(error.message, "Tool execution failed: everything/trigger-sampling-request");
  assert.match(error.reason, /^patchbay refused the sampling request server 'everything' made/);
  assert.match(error.reason, /the refusal is patchbay's.*no language model is attached/);
  assert.doesNotMatch(remedyFor(error, "script"), /server's own message/);
  assert.match(remedyFor(error, "script"), /patchbay run/);
  // The model reads what the server said, as for any failed call.
  assert.equal(text, `Tool execution failed: everything/trigger-sampling-request: ${said}`);
});

Deno.test("each refusal gets the remedy that changes patchbay's answer", () => {
  const remedy = (why: string, kind: "sampling" | "elicitation" = "sampling") =>
    refusalRemedy("ev", { kind, why });
  assert.match(
    remedy(`the entry for server 'ev' has "sampling": "deny"`).script,
    /"sampling" to "ask"/,
  );
  assert.match(remedy("you declined it").script, /--yes/);
  assert.match(remedy("you declined it").repl, /approve it when asked/);
  assert.match(remedy("no one can be asked", "elicitation").script, /--accept-form-defaults/);
  assert.equal(refusalIn("MCP error -1: something else went wrong"), undefined);
  assert.deepEqual(refusalIn("x: patchbay refused the elicitation request: nobody"), {
    kind: "elicitation",
    why: "nobody",
  });
});
