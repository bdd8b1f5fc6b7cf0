/**
 * Where the Messages API requests carry their prompt-cache markers (`cache_breakpoints.ts`):
 * never more than four; the last tool, the system prompt and the newest user messages; the
 * tools' marker kept on the part a changed tool list shares with the previous request; and
 * the markers of consecutive requests of a turn and of a session overlapping, so each
 * request reads what the one before it wrote.
 */

import assert from "node:assert/strict";
import {
  MAX_CACHE_BREAKPOINTS,
  planBreakpoints,
  sharedPrefix,
  toolFingerprint,
  withBreakpoints,
} from "../../lib/llm/cache_breakpoints.ts";
import type { MessagesRequest } from "../../lib/llm/messages_wire.ts";

const roles = (...list: ("u" | "a")[]) =>
  list.map((r) => r === "u" ? "user" : "assistant") as (
    | "user"
    | "assistant"
  )[];

Deno.test("cache markers: the last tool, the system prompt and the two newest user messages", () => {
  const plan = planBreakpoints({
    tools: ["t1", "t2", "t3"],
    systemBlocks: 1,
    roles: roles("u", "a", "u", "a", "u"),
  });
  assert.deepEqual(plan, { tool: 2, system: 0, messages: [2, 4] });
});

Deno.test("cache markers: never more than the four the API takes; unused ones go to messages", () => {
  const many = roles("u", "a", "u", "a", "u", "a", "u", "a", "u");
  for (const tools of [[], ["t"]]) {
    for (const systemBlocks of [0, 1, 2]) {
      const plan = planBreakpoints({ tools, systemBlocks, roles: many });
      const count = (plan.tool === undefined ? 0 : 1) + (plan.system === undefined ? 0 : 1) +
        plan.messages.length;
      assert.equal(count, MAX_CACHE_BREAKPOINTS, JSON.stringify({ tools, systemBlocks }));
      assert.ok(plan.messages.every((i) => many[i] === "user"));
    }
  }
  assert.deepEqual(planBreakpoints({ tools: [], systemBlocks: 0, roles: many }).messages, [
    2,
    4,
    6,
    8,
  ]);
  assert.deepEqual(planBreakpoints({ tools: [], systemBlocks: 0, roles: roles("u") }), {
    messages: [0],
  });
});

Deno.test("cache markers: each request of a turn and of the next turn marks where the one before ended", () => {
  // A turn: the prompt, then a tool step, then another; then the next turn's prompt.
  const steps = [
    roles("u"),
    roles("u", "a", "u"),
    roles("u", "a", "u", "a", "u"),
    roles("u", "a", "u", "a", "u", "a", "u"),
  ];
  let previousLast: number | undefined;
  for (const list of steps) {
    const plan = planBreakpoints({ tools: ["t"], systemBlocks: 1, roles: list });
    assert.equal(plan.messages.at(-1), list.length - 1, "the newest message is marked");
    if (previousLast !== undefined) {
      assert.ok(
        plan.messages.includes(previousLast),
        `the previous request's last marker (${previousLast}) is marked again`,
      );
    }
    previousLast = plan.messages.at(-1);
  }
});

Deno.test("cache markers: a tool list that grew or changed keeps its marker on the shared part", () => {
  const before = ["find_tools", "a", "b"];
  // Tool search loaded two tools: they come last, after the shared part.
  assert.equal(
    planBreakpoints({
      tools: [...before, "c", "d"],
      previousTools: before,
      systemBlocks: 1,
      roles: roles("u"),
    }).tool,
    2,
  );
  // The next request, with the same list: the marker moves to its end.
  assert.equal(
    planBreakpoints({
      tools: [...before, "c", "d"],
      previousTools: [...before, "c", "d"],
      systemBlocks: 1,
      roles: roles("u"),
    }).tool,
    4,
  );
  // A server's list_changed altered a tool in the middle: the marker stops before it.
  assert.equal(
    planBreakpoints({
      tools: ["find_tools", "a*", "b"],
      previousTools: before,
      systemBlocks: 1,
      roles: roles("u"),
    }).tool,
    0,
  );
  // Nothing shared: the whole list is marked (it is new).
  assert.equal(
    planBreakpoints({ tools: ["x", "y"], previousTools: before, systemBlocks: 0, roles: [] })
      .tool,
    1,
  );
  assert.equal(sharedPrefix(["a", "b"], ["a", "c"]), 1);
});

Deno.test("cache markers: set on copies of the marked blocks, the request given stays as it was", () => {
  const body: MessagesRequest = {
    model: "m",
    max_tokens: 10,
    tools: [{ name: "a", input_schema: { type: "object" } }, {
      name: "b",
      input_schema: { type: "object" },
    }],
    system: [{ type: "text", text: "sys" }],
    messages: [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }, {
          type: "text",
          text: "more",
        }],
      },
    ],
  };
  const before = JSON.stringify(body);
  const marked = withBreakpoints(body, { tool: 1, system: 0, messages: [0, 2] });
  assert.equal(JSON.stringify(body), before);
  const ephemeral = { type: "ephemeral" };
  assert.equal(marked.tools![0].cache_control, undefined);
  assert.deepEqual(marked.tools![1].cache_control, ephemeral);
  assert.deepEqual(marked.system![0].cache_control, ephemeral);
  assert.deepEqual(marked.messages[0].content[0].cache_control, ephemeral);
  assert.equal(marked.messages[1].content[0].cache_control, undefined);
  assert.equal(marked.messages[2].content[0].cache_control, undefined);
  assert.deepEqual(marked.messages[2].content[1].cache_control, ephemeral);
  // A fingerprint ignores nothing of the tool but is the same for the same bytes.
  assert.equal(toolFingerprint(body.tools![0]), toolFingerprint({ ...body.tools![0] }));
});
