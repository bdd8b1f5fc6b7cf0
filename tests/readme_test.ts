import assert from "node:assert/strict";
import { DEFAULTS } from "../lib/defaults.ts";

const root = new URL("../", import.meta.url);
const readme = await Deno.readTextFile(new URL("README.md", root));

Deno.test("README opens with the run command and the test command", () => {
  const block = /^# patchbay\n\n```sh\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, "README must start with a sh block");
  const commands = block[1].trim().split("\n").map((line) => line.replace(/\s+#.*$/, ""));
  assert.deepEqual(commands, ["npx -y deno@2.9.6 task start", "npx -y deno@2.9.6 task test"]);
});

Deno.test(".ci/run runs exactly the README's test command, then the conformance suite", async () => {
  const ci = await Deno.readTextFile(new URL(".ci/run", root));
  const commands = ci.trim().split("\n").filter((l) => l && !l.startsWith("#"));
  const readmeTest = /^(npx -y deno@[\d.]+ task test)\s+#/m.exec(readme)?.[1];
  assert.equal(readmeTest, "npx -y deno@2.9.6 task test");
  const at = commands.indexOf(readmeTest);
  assert.ok(at >= 0, `.ci/run does not run "${readmeTest}"`);
  assert.deepEqual(commands.slice(at + 1), ["npx -y deno@2.9.6 task conformance"]);
});

/** The Default column of the README row whose first cell is `field`. */
function documentedDefault(field: string): string {
  const row = readme.split("\n").find((line) => line.startsWith(`| \`${field}\``));
  assert.ok(row, `README has no row for ${field}`);
  const cells = row.split("|").map((c) => c.trim());
  return cells[3];
}

Deno.test("README's configuration defaults are the ones in lib/defaults.ts", () => {
  const expected: Record<string, string> = {
    "LLM.max_tokens": String(DEFAULTS.llm.maxTokens),
    "LLM.temperature": DEFAULTS.llm.temperature === undefined
      ? "provider's default"
      : String(DEFAULTS.llm.temperature),
    "LLM.max_context_length": String(DEFAULTS.llm.maxContextLength),
    "LLM.timeout": String(DEFAULTS.llm.timeoutSeconds),
    "LLM.max_retries": String(DEFAULTS.llm.maxRetries),
    "AgentConfig.tool_call_timeout": String(DEFAULTS.agent.toolCallTimeoutSeconds),
    "AgentConfig.max_steps": String(DEFAULTS.agent.maxSteps),
    "AgentConfig.connect_wait": String(DEFAULTS.agent.connectWaitSeconds),
    "AgentConfig.request_limit": DEFAULTS.agent.requestLimit === undefined
      ? "unlimited"
      : String(DEFAULTS.agent.requestLimit),
    "AgentConfig.total_tokens_limit": DEFAULTS.agent.totalTokensLimit === undefined
      ? "unlimited"
      : String(DEFAULTS.agent.totalTokensLimit),
    "Memory.backend": `\`${DEFAULTS.memory.backend}\``,
    "Memory.key_prefix": `\`${DEFAULTS.memory.keyPrefix}\``,
  };
  for (const [field, value] of Object.entries(expected)) {
    assert.equal(documentedDefault(field), value, field);
  }
});

Deno.test("README's server-entry defaults are the ones in lib/defaults.ts", () => {
  const row = (field: string) =>
    readme.split("\n").find((line) => line.startsWith(`| \`${field}\``))!.split("|").map((c) =>
      c.trim()
    );
  assert.equal(row("timeout")[4], String(DEFAULTS.server.timeoutSeconds));
  assert.equal(row("sse_read_timeout")[4], String(DEFAULTS.server.sseReadTimeoutSeconds));
  assert.equal(row("ping_interval")[4], String(DEFAULTS.server.pingIntervalSeconds));
  assert.equal(row("trusted")[4], String(DEFAULTS.server.trusted));
  assert.equal(row("sampling")[4], `\`${DEFAULTS.server.sampling}\``);
  assert.equal(row("protocol")[4], `\`${DEFAULTS.server.protocol}\``);
});

Deno.test("README's bounds are the ones in the code", async () => {
  const { MAX_DURATION_SECONDS, MAX_TTL_SECONDS } = await import("../lib/config/schema.ts");
  const { MAX_NESTING } = await import("../lib/config/json.ts");
  const { MAX_REFERENCE_NESTING } = await import("../lib/config/expand.ts");
  const { MAX_MESSAGE_DEPTH } = await import("../lib/transports/depth.ts");
  const { MAX_MESSAGE_BYTES } = await import("../lib/transports/limits.ts");
  const { MAX_SAME_ORIGIN_REDIRECTS } = await import("../lib/llm/redirects.ts");
  const mib = DEFAULTS.log.rotateBytes / 1024 / 1024;
  for (
    const phrase of [
      `at most ${MAX_DURATION_SECONDS} (one day; \`Memory.ttl_seconds\` at most\n${MAX_TTL_SECONDS}`,
      `nest at\nmost **${MAX_NESTING}** levels`,
      `References nest at most\n${MAX_REFERENCE_NESTING} deep`,
      `${MAX_MESSAGE_DEPTH} levels of objects and arrays`,
      `| ${MAX_MESSAGE_BYTES / 1024 / 1024} MB `,
      `at most ${MAX_SAME_ORIGIN_REDIRECTS})`,
      `**The log is bounded: at most ${mib} MiB × ${DEFAULTS.log.files} files.**`,
      `held to ${DEFAULTS.log.linesPerSecond} lines a second`,
    ]
  ) {
    assert.ok(readme.replace(/ +\n/g, "\n").includes(phrase), `README does not say: ${phrase}`);
  }
});
