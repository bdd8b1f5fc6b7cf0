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
  {
    name: "a spin while a question is on the screen waits for its answer",
    spinner: true,
    write: (output) => {
      output.spin("running");
      const release = output.holdSpinner();
      output.spin(() => "task working");
      output.out("? the server asks\n");
      release();
      output.stopSpinner();
    },
    events: [
      "err:\r\x1b[K⠙ running",
      "err:\r\x1b[K",
      "out:? the server asks\n",
      "err:\r\x1b[K⠹ task working",
      "err:\r\x1b[K",
    ],
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

Deno.test("a wait that runs on: the spinner says for how long, counting from its start", () => {
  let now = 10_000;
  const events: string[] = [];
  const output = new TerminalOutput({
    stderr: (t) => events.push(t),
    spinner: true,
    now: () => now,
  });
  try {
    output.spin("running everything › slow…", 10_000);
    assert.equal(events.at(-1), "\r\x1b[K⠙ running everything › slow…", "no clock at first");
    now += 12_400;
    // A progress update relabels the same wait: its time goes on.
    output.spin("everything › slow 1/3");
    assert.equal(events.at(-1), "\r\x1b[K⠹ everything › slow 1/3 12 s");
    now += 60_000;
    output.spin("everything › slow 2/3");
    assert.equal(events.at(-1), "\r\x1b[K⠸ everything › slow 2/3 1 min 12 s");
    output.stopSpinner();
    // A new wait starts its own clock.
    output.spin("thinking…");
    assert.equal(events.at(-1), "\r\x1b[K⠼ thinking…");
  } finally {
    output.stopSpinner();
  }
});

Deno.test("the spinner keeps to one row of a narrow terminal; status lines wrap between words", () => {
  const events: string[] = [];
  const output = new TerminalOutput({
    stderr: (t) => events.push(t),
    spinner: true,
    columns: () => 24,
  });
  try {
    output.spin("running everything › trigger-long-running-operation…", Date.now());
    const drawn = events.at(-1)!.replace("\r\x1b[K", "");
    assert.equal(drawn, "⠙ running everything ›…");
    assert.ok(drawn.length <= 23, drawn);
  } finally {
    output.stopSpinner();
  }
  output.err("✗ missing failed: command 'nosuch' not found on PATH\n");
  assert.equal(
    events.at(-1),
    "✗ missing failed:\n  command 'nosuch' not\n  found on PATH\n",
  );
});
