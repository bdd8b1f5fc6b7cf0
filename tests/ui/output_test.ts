import assert from "node:assert/strict";
import { TerminalOutput } from "../../lib/ui/output.ts";

function capture(spinner: boolean) {
  const events: string[] = [];
  const output = new TerminalOutput({
    stdout: (t) => events.push(`out:${t}`),
    stderr: (t) => events.push(`err:${t}`),
    spinner,
  });
  return { output, events };
}

/** What is written, in order, when `write` drives an output with or without a spinner. */
const sequences: {
  name: string;
  spinner: boolean;
  write: (output: TerminalOutput) => void;
  events: string[];
}[] = [
  {
    name: "the spinner is cleared before any text is written",
    spinner: true,
    write: (output) => {
      output.spin("thinking");
      output.out("Hello");
      output.stopSpinner();
    },
    events: ["err:\r\x1b[K⠙ thinking", "err:\r\x1b[K", "out:Hello"],
  },
  {
    name: "without a terminal there is no spinner at all",
    spinner: false,
    write: (output) => {
      output.spin("thinking");
      output.err("note\n");
      output.stopSpinner();
    },
    events: ["err:note\n"],
  },
];

for (const { name, spinner, write, events: expected } of sequences) {
  Deno.test(name, () => {
    const { output, events } = capture(spinner);
    write(output);
    assert.deepEqual(events, expected);
  });
}

Deno.test("the spinner never draws over a half-written line", () => {
  const { output, events } = capture(true);
  output.out("partial answer");
  output.spin("running tool");
  output.stopSpinner();
  assert.deepEqual(events, ["out:partial answer"]);
  output.newline();
  assert.deepEqual(events, ["out:partial answer", "out:\n"]);
});
