/**
 * docs/: the facts the pages state against the code that decides them (defaults, bounds),
 * every relative link of the README and docs/ resolving to a file and an anchor, and every
 * prose and table line fitting a terminal, and the configurations shown passing
 * `patchbay config check`.
 */

import assert from "node:assert/strict";
import { DEFAULTS } from "../../lib/defaults.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { displayWidth } from "../../lib/terminal/terminal.ts";
import { anchors, docPages, listItem, proseLines, readDoc, unwrapped } from "../support/docs.ts";

/** Columns a line of docs/ outside code blocks fits in (`deno fmt`'s lineWidth too). */
const MAX_DOC_COLUMNS = 100;

const configuration = await readDoc("docs/configuration.md");

/** The `default:` a field's list item in docs/configuration.md gives. */
function documentedDefault(field: string): string {
  const item = listItem(configuration, `\`${field}\` (`);
  assert.ok(item, `docs/configuration.md has no item for ${field}`);
  const value = /[(;] default: (.*?)[;)]/.exec(item)?.[1];
  assert.ok(value !== undefined, `docs/configuration.md gives no default for ${field}: ${item}`);
  return value;
}

Deno.test("docs/configuration.md: the defaults are the ones in lib/defaults.ts", async () => {
  // Defaults the schema applies itself, read from it rather than restated here.
  const { ServerSchema, TraceSchema } = await import("../../lib/config/schema.ts");
  const trace = TraceSchema.parse({ file: "trace.jsonl" });
  const server = ServerSchema.parse({ command: "server" });
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
    "LLM.vision": `\`${DEFAULTS.llm.vision}\``,
    "LLM.prompt_caching": String(DEFAULTS.llm.promptCaching),
    "LLM.api_key_helper_ttl": String(DEFAULTS.secrets.apiKeyHelperTtlSeconds),
    "headers_helper_ttl": DEFAULTS.secrets.headersHelperTtlSeconds === undefined
      ? "none"
      : String(DEFAULTS.secrets.headersHelperTtlSeconds),
    "AgentConfig.tool_search.mode": `\`${DEFAULTS.agent.toolSearch.mode}\``,
    "AgentConfig.tool_search.max_tools": String(DEFAULTS.agent.toolSearch.maxTools),
    "AgentConfig.tool_search.max_tokens": String(DEFAULTS.agent.toolSearch.maxTokens),
    "AgentConfig.sampling_request_limit": String(DEFAULTS.agent.samplingRequestLimit),
    "AgentConfig.sampling_per_tool_call": String(DEFAULTS.agent.samplingPerToolCall),
    "Hooks.<event>[].hooks[].timeout": String(DEFAULTS.hooks.timeoutSeconds),
    "Telemetry.protocol": `\`${DEFAULTS.telemetry.protocol}\``,
    "Telemetry.service_name": `\`${DEFAULTS.telemetry.serviceName}\``,
    "Telemetry.capture_content": String(DEFAULTS.telemetry.captureContent),
    "Trace.model": String(trace.model),
    "Trace.model_bodies": String(trace.model_bodies),
    "Memory.backend": `\`${DEFAULTS.memory.backend}\``,
    "Memory.key_prefix": `\`${DEFAULTS.memory.keyPrefix}\``,
    // A server entry's fields.
    "timeout": String(DEFAULTS.server.timeoutSeconds),
    "sse_read_timeout": String(DEFAULTS.server.sseReadTimeoutSeconds),
    "ping_interval": String(DEFAULTS.server.pingIntervalSeconds),
    "trusted": String(DEFAULTS.server.trusted),
    "sampling": `\`${DEFAULTS.server.sampling}\``,
    "protocol": `\`${DEFAULTS.server.protocol}\``,
    "tasks": `\`${DEFAULTS.server.tasks}\``,
    "disabled": String(server.disabled),
    // Unset filters offer every tool and withhold none.
    "include_tools": server.include_tools === undefined ? "every tool" : "?",
    "exclude_tools": server.exclude_tools === undefined ? "none" : "?",
  };
  for (const [field, value] of Object.entries(expected)) {
    assert.equal(documentedDefault(field), value, field);
  }
});

Deno.test("docs/: the bounds stated are the ones in the code", async () => {
  const { MAX_DURATION_SECONDS, MAX_TTL_SECONDS } = await import("../../lib/config/schema.ts");
  const { MAX_NESTING } = await import("../../lib/config/json.ts");
  const { MAX_REFERENCE_NESTING } = await import("../../lib/config/expand.ts");
  const { MAX_MESSAGE_DEPTH } = await import("../../lib/transports/depth.ts");
  const { MAX_MESSAGE_BYTES } = await import("../../lib/transports/limits.ts");
  const { MAX_SAME_ORIGIN_REDIRECTS } = await import("../../lib/llm/redirects.ts");
  const skills = await import("../../lib/skills/entries.ts");
  const mib = DEFAULTS.log.rotateBytes / 1024 / 1024;
  const secrets = DEFAULTS.secrets;
  const where: [string, string][] = [
    [
      "docs/configuration.md",
      `at most ${MAX_DURATION_SECONDS} (one day; \`Memory.ttl_seconds\` at most ${MAX_TTL_SECONDS}`,
    ],
    ["docs/configuration.md", `nest at most **${MAX_NESTING}** levels`],
    ["docs/configuration.md", `References nest at most ${MAX_REFERENCE_NESTING} deep`],
    ["docs/configuration.md", `at most ${MAX_SAME_ORIGIN_REDIRECTS})`],
    ["docs/connections.md", `Value: ${MAX_MESSAGE_DEPTH} levels of objects and arrays`],
    [
      "docs/connections.md",
      `One message (stdio line, HTTP body, event): ${MAX_MESSAGE_BYTES / 1024 / 1024} MB;`,
    ],
    [
      "docs/troubleshooting.md",
      `**The log is bounded: at most ${mib} MiB × ${DEFAULTS.log.files} files.**`,
    ],
    ["docs/troubleshooting.md", `held to ${DEFAULTS.log.linesPerSecond} lines a second`],
    // Secrets' helpers and keychain tool.
    [
      "docs/secrets.md",
      `${secrets.helperTimeoutSeconds} seconds, then it is ended with what it started; at most ` +
      `${secrets.helperMaxOutputBytes / 1024} KiB of output`,
    ],
    ["docs/secrets.md", `did not answer within ${secrets.keychainTimeoutSeconds} s`],
    [
      "docs/troubleshooting.md",
      `ran past ${secrets.helperTimeoutSeconds} s, exited with an error (the end of its ` +
      `stderr is shown), printed more than ${secrets.helperMaxOutputBytes / 1024} KiB`,
    ],
    ["docs/troubleshooting.md", `did not answer within ${secrets.keychainTimeoutSeconds} s`],
    [
      "docs/skills.md",
      `(${skills.SKILL_MAX_FILES} files, ${skills.SKILL_MAX_TOTAL_BYTES / 1024 / 1024} MB in ` +
      `all), and a file over ${skills.SKILL_MAX_FILE_BYTES / 1024 / 1024} MB`,
    ],
    ["docs/configuration.md", `cut to ${DEFAULTS.telemetry.maxContentChars} characters each`],
    ["docs/telemetry.md", `exit for about ${DEFAULTS.telemetry.exportTimeoutSeconds} s`],
  ];
  for (const [page, phrase] of where) {
    assert.ok(unwrapped(await readDoc(page)).includes(phrase), `${page} does not say: ${phrase}`);
  }
});

/** Relative link targets in `markdown` (inline and reference definitions), outside code. */
function relativeLinks(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const code = text.replace(/`[^`]*`/g, "");
    const targets = [
      ...[...code.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]),
      ...[...code.matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/g)].map((m) => m[1]),
    ];
    for (const target of targets) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ line, target });
    }
  }
  return links;
}

Deno.test("README.md and docs/: every relative link resolves to a file and its anchor", async () => {
  const pages = ["README.md", ...await docPages()];
  const root = new URL("../../", import.meta.url);
  const broken: string[] = [];
  for (const page of pages) {
    const text = await readDoc(page);
    for (const { line, target } of relativeLinks(text)) {
      const [path, anchor] = target.split("#", 2);
      const file = path === "" ? new URL(page, root) : new URL(path, new URL(page, root));
      let content: string | undefined;
      try {
        const info = await Deno.stat(file);
        content = info.isFile ? await Deno.readTextFile(file) : "";
      } catch {
        broken.push(`${page}:${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && !anchors(content).has(anchor)) {
        broken.push(`${page}:${line}: ${target} (no heading with that anchor)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("docs/README.md, the index, links every page of docs/", async () => {
  const index = await readDoc("docs/README.md");
  const linked = new Set(relativeLinks(index).map(({ target }) => target.split("#")[0]));
  const missing = (await docPages())
    .map((page) => page.slice("docs/".length))
    .filter((page) => page !== "README.md" && !linked.has(page));
  assert.deepEqual(missing, [], "pages docs/README.md does not link");
});

/** The docs read in an afternoon (issue 37): all pages together, counted as `wc -w` counts. */
const MAX_DOC_WORDS = 30_000;

Deno.test("docs/: all pages together hold at most 30,000 words", async () => {
  let words = 0;
  for (const page of await docPages()) {
    words += (await readDoc(page)).split(/\s+/).filter((word) => word !== "").length;
  }
  assert.ok(words > 10_000, `the count must see the pages (${words} words)`);
  assert.ok(words <= MAX_DOC_WORDS, `docs/ holds ${words} words, more than ${MAX_DOC_WORDS}`);
});

Deno.test("docs/: every line outside code blocks fits 100 columns", async () => {
  const wide: string[] = [];
  for (const page of await docPages()) {
    for (const { line, text } of proseLines(await readDoc(page))) {
      const width = displayWidth(text);
      if (width > MAX_DOC_COLUMNS) wide.push(`${page}:${line} (${width})`);
    }
  }
  assert.deepEqual(wide, []);
});

/** The JSON blocks of `markdown` that are whole configurations (with `LLM` and `mcpServers`). */
function configurations(markdown: string): string[] {
  return [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]).filter((text) => {
    try {
      const value = JSON.parse(text);
      return typeof value === "object" && value !== null && "LLM" in value &&
        "mcpServers" in value;
    } catch {
      return false;
    }
  });
}

Deno.test("the configurations the README and docs/ show pass `patchbay config check`", async () => {
  const samples: [string, string][] = [];
  for (const page of ["README.md", ...await docPages()]) {
    for (const text of configurations(await readDoc(page))) samples.push([page, text]);
  }
  assert.ok(samples.length >= 2, "the README and docs/configuration.md show a configuration");
  await using box = await sandbox({ LLM_API_KEY: "sk-test0123456789abcdefghij" });
  // `$schema` names the schema beside the configuration, as in a checkout.
  await Deno.copyFile(
    new URL("../../servers_config.schema.json", import.meta.url),
    `${box.cwd}/servers_config.schema.json`,
  );
  for (const [page, text] of samples) {
    await writeConfig(box, text);
    const check = await runPatchbay(box, ["config", "check"], {
      env: { PROJECT_DIR: box.cwd, REMOTE_TOKEN: "token" },
    });
    assert.equal(check.code, 0, `${page}'s configuration:\n${check.stdout}${check.stderr}`);
  }
});
