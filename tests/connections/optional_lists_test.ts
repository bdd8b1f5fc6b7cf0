import assert from "node:assert/strict";
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import {
  answeredBadly,
  badAnswer,
  listWarnings,
  type OptionalList,
  optionalList,
} from "../../lib/connections/optional_lists.ts";

Deno.test("a list answered with an error is empty, with a warning; a later listing clears it", async () => {
  const failed = new Map<OptionalList, string>();
  const refused = Promise.reject(new ProtocolError(-32601, "Method not found"));
  assert.deepEqual(await optionalList("resources", refused, failed), []);
  assert.equal(failed.get("resources"), "an error (Method not found, code -32601)");
  assert.deepEqual(await optionalList("resources", Promise.resolve([1]), failed), [1]);
  assert.equal(failed.size, 0);
});

Deno.test("only the server's own answer is forgiven: a lost connection or a deadline still fails", async () => {
  const failed = new Map<OptionalList, string>();
  const lost = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
  await assert.rejects(optionalList("prompts", Promise.reject(lost), failed), SdkError);
  await assert.rejects(optionalList("prompts", Promise.reject(new Error("aborted")), failed));
  assert.equal(failed.size, 0);
  assert.equal(answeredBadly(new SdkError(SdkErrorCode.InvalidResult, "bad")), true);
  assert.match(
    badAnswer(new SdkError(SdkErrorCode.InvalidResult, "Invalid result")),
    /cannot read/,
  );
});

Deno.test("the warnings read as one line per capability answered alike (mcp-fetch-server's resources)", () => {
  const answer = "an error (Method not found, code -32601)";
  assert.deepEqual(
    listWarnings(
      new Map<OptionalList, string>([
        ["resources", answer],
        ["resource templates", answer],
        ["prompts", "an error (boom, code -32603)"],
      ]),
    ),
    [
      "the server declares resources but answered resources/list and resources/templates/list " +
      "with an error (Method not found, code -32601): it is treated as having no resources and " +
      "no resource templates",
      "the server declares prompts but answered prompts/list with an error (boom, code -32603): " +
      "it is treated as having no prompts",
    ],
  );
});
