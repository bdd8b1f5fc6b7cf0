import assert from "node:assert/strict";
import { TerminalOutput } from "../lib/repl/output.ts";

function capture(spinner: boolean) {
  const events: string[] = [];
  const output = new TerminalOutput({
    stdout: (t) => events.push(`out:${t}`),
    stderr: (t) => events.push(`err:${t}`),
    spinner,
  });
  return { output, events };
}

Deno.test("the spinner is cleared before any text is written", () => {
  const { output, events } = capture(true);
  output.spin("thinking");
  output.out("Hello");
  output.stopSpinner();
  assert.deepEqual(events, ["err:\r\x1b[K⠙ thinking", "err:\r\x1b[K", "out:Hello"]);
});

Deno.test("the spinner never draws over a half-written line", () => {
  const { output, events } = capture(true);
  output.out("partial answer");
  output.spin("running tool");
  output.stopSpinner();
  assert.deepEqual(events, ["out:partial answer"]);
  output.newline();
  assert.deepEqual(events, ["out:partial answer", "out:\n"]);
});

Deno.test("without a terminal there is no spinner at all", () => {
  const { output, events } = capture(false);
  output.spin("thinking");
  output.err("note\n");
  output.stopSpinner();
  assert.deepEqual(events, ["err:note\n"]);
});
