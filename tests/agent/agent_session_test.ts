/**
 * The session wiring the client uses: a parsed servers_config.json in, a provider, shared
 * statistics, approvals and a sampling handler out, the servers connected with that
 * handler, then an agent over the connection manager.
 */

import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { InvalidApiKeyError } from "../../lib/errors.ts";
import { createModelSession } from "../../lib/agent/model_session.ts";
import { ScriptedUi } from "../support/scripted_ui.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { everythingEntry } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { wireSession } from "../support/agent_fixtures.ts";

function config(baseUrl: string, extra: Record<string, unknown> = {}) {
  return parseConfig(
    JSON.stringify({
      LLM: { provider: "openai-compatible", model: "local-model", base_url: baseUrl },
      mcpServers: {
        everything: {
          command: "node",
          args: [everythingEntry(), "stdio"],
          trusted: true,
          sampling: "allow",
        },
      },
      AgentConfig: { tool_call_timeout: 5, max_steps: 4 },
      ...extra,
    }),
    "servers_config.json",
    createEnvironment({}),
  );
}

Deno.test("a session from servers_config.json runs a turn with sampling, sharing its stats", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [{
          name: "everything__trigger-sampling-request",
          arguments: { prompt: "hello" },
        }],
      },
      { text: "sampled text", usage: { prompt_tokens: 12, completion_tokens: 3 } },
      { text: "Done." },
    ],
  });
  const ui = new ScriptedUi();
  await using session = await wireSession(config(llm.baseUrl), ui);
  const result = await session.agent.runTurn("Sample something");

  assert.equal(result.text, "Done.");
  assert.equal(ui.ofType("approveTool").length, 0, "trusted in the configuration");
  assert.equal(ui.ofType("approveSampling").length, 0, '"sampling": "allow"');
  assert.equal(llm.requests[0].body.model, "local-model");
  assert.equal(session.stored.length, 4);
  const text = session.model.formatStats();
  assert.match(text, /Requests: {10}3 \(chat 2, sampling 1\)/);
  assert.match(text, /everything: 1 request, 15 tokens/);
  assert.match(text, /max_steps: 4 per turn/);
  assert.match(text, /tool_call_timeout: 5 s/);
});

Deno.test("a session refuses to start without a usable key, before any request", () => {
  const parsed = parseConfig(
    JSON.stringify({ LLM: { provider: "openai", model: "gpt-4o-mini" }, mcpServers: {} }),
    "servers_config.json",
    createEnvironment({}),
  );
  const redactor = new Redactor();
  assert.throws(
    () => createModelSession({ config: parsed, env: createEnvironment({}), ui: new ScriptedUi() }),
    InvalidApiKeyError,
  );
  const session = createModelSession({
    config: parsed,
    env: createEnvironment({ LLM_API_KEY: "sk-live-0123456789abcdef" }),
    ui: new ScriptedUi(),
    redactor,
  });
  session.close();
  assert.equal(redactor.redact("sk-live-0123456789abcdef"), "[REDACTED]");
});
