import assert from "node:assert/strict";
import { parseSlash, type SlashCommand, SlashRegistry } from "../../lib/repl/slash.ts";

type Session = { log: string[] };

const command = (
  name: string,
  extra: Partial<SlashCommand<Session>> = {},
): SlashCommand<Session> => ({
  name,
  summary: `the ${name} command`,
  run: (session, args) => {
    session.log.push(`${name}(${args})`);
    return Promise.resolve();
  },
  ...extra,
});

const registry = new SlashRegistry<Session>([
  command("tools", { usage: "[server]", complete: () => ["everything", "filesystem"] }),
  command("status"),
  command("exit", { aliases: ["quit"] }),
  command("prompt", { usage: "<name> [k=v ...]", complete: () => ["greeting", "complex_prompt"] }),
]);

Deno.test("parseSlash keeps arguments exactly as typed", () => {
  assert.deepEqual(parseSlash('/call Echo {"Message": "Hi THERE"}'), {
    name: "call",
    args: 'Echo {"Message": "Hi THERE"}',
  });
  assert.deepEqual(parseSlash("/tools"), { name: "tools", args: "" });
  assert.equal(parseSlash("hello /tools"), undefined);
  assert.equal(parseSlash("/ spaced"), undefined);
});

Deno.test("commands are found by name or alias; typos get the closest name", async () => {
  assert.equal(registry.find("quit")?.name, "exit");
  assert.equal(registry.find("TOOLS"), undefined, "input is not lower-cased");
  assert.equal(registry.suggest("tols"), "tools");
  assert.equal(registry.suggest("stauts"), "status");
  assert.equal(registry.suggest("qit"), "exit");
  assert.equal(registry.suggest("zzzzzz"), undefined);
  const session = { log: [] as string[] };
  await registry.find("tools")!.run(session, "everything");
  assert.deepEqual(session.log, ["tools(everything)"]);
});

Deno.test("help lists every command with its usage, aligned", () => {
  assert.deepEqual(registry.help(), [
    "  /tools [server]           the tools command",
    "  /status                   the status command",
    "  /exit                     the exit command",
    "  /prompt <name> [k=v ...]  the prompt command",
  ]);
});

Deno.test("help fits the terminal: a long usage on its own line, descriptions wrapped", () => {
  const wide = new SlashRegistry<Session>([
    command("tools", { usage: "[server]" }),
    command("trace", { usage: "[on [file] | off | show [server] [n]]" }),
  ]);
  const forms = [["@<server>:<uri>", "attach that resource to the message you send"]] as const;
  assert.deepEqual(wide.help(52, forms), [
    "  /tools [server]  the tools command",
    "  /trace [on [file] | off | show [server] [n]]",
    "                   the trace command",
    "  @<server>:<uri>  attach that resource to the",
    "                   message you send",
  ]);
  // Too narrow for two columns: each description goes under its command.
  assert.deepEqual(wide.help(30), [
    "  /tools [server]",
    "      the tools command",
    "  /trace [on [file] | off | show [server] [n]]",
    "      the trace command",
  ]);
});

Deno.test("completion of command names, then of arguments", async () => {
  const session = { log: [] };
  assert.deepEqual(await registry.complete(session, "/st"), {
    candidates: ["/status "],
    replace: "/st",
  });
  assert.deepEqual(await registry.complete(session, "/"), {
    candidates: ["/tools", "/status", "/exit", "/prompt"],
    replace: "/",
  });
  assert.deepEqual(await registry.complete(session, "/tools ev"), {
    candidates: ["everything"],
    replace: "ev",
  });
  assert.deepEqual(await registry.complete(session, "/prompt c"), {
    candidates: ["complex_prompt"],
    replace: "c",
  });
  assert.deepEqual(await registry.complete(session, "plain text"), {
    candidates: [],
    replace: "plain text",
  });
});
