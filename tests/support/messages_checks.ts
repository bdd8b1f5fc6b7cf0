/**
 * The rules of Anthropic's Messages API (`POST /v1/messages`, `anthropic-version:
 * 2023-06-01`) that the scripted endpoint holds every request to, as the real API refuses a
 * request that breaks them (400 `invalid_request_error`): the headers, the body's fields,
 * roles that alternate starting with `user`, every `tool_use` answered by a `tool_result`
 * first in the next message, non-empty text, the image sources it takes, and at most four
 * `cache_control` markers, each `{"type": "ephemeral"}`.
 *
 * @module
 */

/** Most `cache_control` markers the API accepts in one request. */
export const API_MAX_BREAKPOINTS = 4;

const TOP_LEVEL = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "metadata",
  "cache_control",
  "thinking",
  "service_tier",
]);

const BLOCK_FIELDS: Record<string, { roles: string[]; fields: string[] }> = {
  text: { roles: ["user", "assistant"], fields: ["type", "text", "cache_control"] },
  image: { roles: ["user"], fields: ["type", "source", "cache_control"] },
  tool_use: { roles: ["assistant"], fields: ["type", "id", "name", "input", "cache_control"] },
  tool_result: {
    roles: ["user"],
    fields: ["type", "tool_use_id", "content", "is_error", "cache_control"],
  },
};

const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

// deno-lint-ignore no-explicit-any
type Json = any;

/** What is wrong with a request's headers, each problem in words (none: `[]`). */
export function headerProblems(headers: Headers): string[] {
  const problems: string[] = [];
  if (!headers.get("x-api-key")) problems.push("x-api-key: header is required");
  if (headers.get("anthropic-version") !== "2023-06-01") {
    problems.push(
      `anthropic-version: expected 2023-06-01, got ${headers.get("anthropic-version")}`,
    );
  }
  if (!/^application\/json\b/.test(headers.get("content-type") ?? "")) {
    problems.push("content-type: expected application/json");
  }
  if (headers.has("authorization")) {
    problems.push("authorization: the key goes in x-api-key alone, not also as a bearer token");
  }
  return problems;
}

/** What is wrong with a request's body, each problem with its path (none: `[]`). */
export function bodyProblems(body: Json): string[] {
  const problems: string[] = [];
  const bad = (path: string, what: string) => problems.push(`${path}: ${what}`);
  if (!isObject(body)) return ["body: expected a JSON object"];
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) bad(key, "Extra inputs are not permitted");
  }
  if (typeof body.model !== "string" || body.model === "") bad("model", "Field required");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    bad("max_tokens", "a positive integer is required");
  }
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1)) {
    bad("temperature", "range: 0..1");
  }
  if (body.stream !== undefined && typeof body.stream !== "boolean") bad("stream", "a boolean");
  if (
    body.stop_sequences !== undefined &&
    !(Array.isArray(body.stop_sequences) &&
      body.stop_sequences.every((s: unknown) => typeof s === "string"))
  ) bad("stop_sequences", "a list of strings");
  let markers = 0;
  const marker = (path: string, block: Json) => {
    if (block.cache_control === undefined) return;
    markers++;
    const control = block.cache_control;
    if (
      !isObject(control) || control.type !== "ephemeral" ||
      Object.keys(control).some((k) => k !== "type" && k !== "ttl")
    ) bad(`${path}.cache_control`, 'expected {"type": "ephemeral"}');
  };
  if (body.system !== undefined && typeof body.system !== "string") {
    if (!Array.isArray(body.system)) bad("system", "a string or a list of text blocks");
    else {
      body.system.forEach((block: Json, i: number) => {
        textBlock(`system.${i}`, block, bad);
        if (isObject(block)) marker(`system.${i}`, block);
      });
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) bad("tools", "a list");
    const names = new Set<string>();
    (Array.isArray(body.tools) ? body.tools : []).forEach((tool: Json, i: number) => {
      const path = `tools.${i}`;
      if (!isObject(tool)) return bad(path, "an object");
      for (const key of Object.keys(tool)) {
        if (!["name", "description", "input_schema", "cache_control"].includes(key)) {
          bad(`${path}.${key}`, "Extra inputs are not permitted");
        }
      }
      if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
        bad(`${path}.name`, "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'");
      }
      if (names.has(tool.name)) bad(`${path}.name`, "Tool names must be unique");
      names.add(tool.name);
      if (!isObject(tool.input_schema) || tool.input_schema.type !== "object") {
        bad(`${path}.input_schema.type`, "Input should be 'object'");
      }
      marker(path, tool);
    });
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    bad("messages", "at least one message is required");
  } else {
    messageProblems(body.messages, bad, marker);
  }
  if (markers > API_MAX_BREAKPOINTS) {
    bad(
      "cache_control",
      `A maximum of ${API_MAX_BREAKPOINTS} blocks with cache_control may be provided. ` +
        `Found ${markers}.`,
    );
  }
  return problems;
}

function messageProblems(
  messages: Json[],
  bad: (path: string, what: string) => void,
  marker: (path: string, block: Json) => void,
): void {
  let open: string[] = [];
  messages.forEach((message: Json, i: number) => {
    const path = `messages.${i}`;
    if (!isObject(message)) return bad(path, "an object");
    const expected = i % 2 === 0 ? "user" : "assistant";
    if (message.role !== expected) {
      bad(`${path}.role`, `expected ${expected}: roles alternate, starting with user`);
    }
    const blocks: Json[] = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : Array.isArray(message.content)
      ? message.content
      : [];
    if (blocks.length === 0) bad(`${path}.content`, "at least one content block is required");
    const answered: string[] = [];
    let sawOther = false;
    blocks.forEach((block: Json, j: number) => {
      const at = `${path}.content.${j}`;
      const rule = isObject(block) ? BLOCK_FIELDS[block.type] : undefined;
      if (!rule) return bad(`${at}.type`, `unknown block type ${JSON.stringify(block?.type)}`);
      if (!rule.roles.includes(message.role)) {
        bad(at, `${block.type} is not allowed in ${message.role}`);
      }
      for (const key of Object.keys(block)) {
        if (!rule.fields.includes(key)) bad(`${at}.${key}`, "Extra inputs are not permitted");
      }
      marker(at, block);
      if (block.type === "text") textBlock(at, block, bad);
      if (block.type === "image") {
        const source = block.source;
        if (
          !isObject(source) || source.type !== "base64" || typeof source.data !== "string" ||
          !IMAGE_TYPES.includes(source.media_type)
        ) bad(`${at}.source`, `a base64 source of type ${IMAGE_TYPES.join(", ")}`);
      }
      if (block.type === "tool_use") {
        if (typeof block.id !== "string" || !TOOL_ID.test(block.id)) {
          bad(`${at}.id`, "String should match pattern '^[a-zA-Z0-9_-]+$'");
        }
        if (!isObject(block.input)) bad(`${at}.input`, "Input should be a valid dictionary");
      }
      if (block.type === "tool_result") {
        if (sawOther) bad(at, "tool_result blocks must come first in the message");
        if (!open.includes(block.tool_use_id)) {
          bad(`${at}.tool_use_id`, "unexpected tool_use_id: no tool_use in the previous message");
        }
        answered.push(block.tool_use_id);
        if (typeof block.content !== "string" && !Array.isArray(block.content)) {
          bad(`${at}.content`, "a string or a list of blocks");
        }
      } else sawOther = true;
    });
    const unanswered = open.filter((id) => !answered.includes(id));
    if (unanswered.length > 0) {
      bad(path, `tool_use ids without tool_result blocks right after them: ${unanswered}`);
    }
    open = message.role === "assistant"
      ? blocks.filter((b) => b?.type === "tool_use").map((b) => b.id)
      : [];
    if (i === messages.length - 1 && message.role === "assistant") {
      const last = blocks.at(-1);
      if (last?.type === "text" && /\s$/.test(last.text)) {
        bad(`${path}`, "final assistant content cannot end with trailing whitespace");
      }
    }
  });
}

function textBlock(path: string, block: Json, bad: (path: string, what: string) => void) {
  if (!isObject(block) || block.type !== "text") return bad(path, "a text block");
  if (typeof block.text !== "string" || block.text.trim() === "") {
    bad(`${path}.text`, "text content blocks must contain non-whitespace text");
  }
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
