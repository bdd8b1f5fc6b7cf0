/**
 * Elicitation: a server asks the person for information mid-task. patchbay shows the
 * server's message and the fields it wants as a form in the terminal; the person
 * accepts (and fills it in), declines, or cancels. Nothing is sent without their answer.
 *
 * The whole form is written where the {@linkcode LineEditor} asks its questions (the
 * terminal), in that stream's colours; only the notice of a form declined while idle is
 * status, on stderr.
 *
 * @module
 */

import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";
import type { ServerRequestHandlers } from "../connections/types.ts";
import type { Style } from "../terminal/style.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import type { LineEditor } from "../terminal/line_editor.ts";
import type { TerminalOutput } from "./output.ts";

/** Tries per field before the form is given up as cancelled. */
const MAX_FIELD_ATTEMPTS = 3;

type FieldSchema = Record<string, unknown>;
type Value = string | number | boolean | string[];

/** A parsed answer, or why it cannot be used. */
export type FieldAnswer = { ok: true; value: Value | undefined } | { ok: false; problem: string };

const text = (value: unknown) => typeof value === "string" ? stripTerminalEscapes(value) : "";

/** The choices of an enum field, as `[value, label]`. */
export function fieldChoices(schema: FieldSchema): [string, string][] | undefined {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((v, i) => [String(v), text(names[i]) || String(v)]);
  }
  const options = (schema.oneOf ?? schema.anyOf) as FieldSchema[] | undefined;
  if (Array.isArray(options) && options.every((o) => "const" in o)) {
    return options.map((o) => [String(o.const), text(o.title) || String(o.const)]);
  }
  const items = schema.items as FieldSchema | undefined;
  if (schema.type === "array" && items) return fieldChoices(items);
  return undefined;
}

/**
 * Reads one typed answer against its field schema. Empty input takes the default, or
 * leaves an optional field out.
 */
export function parseFieldAnswer(
  schema: FieldSchema,
  input: string,
  required: boolean,
): FieldAnswer {
  const raw = input.trim();
  if (raw === "") {
    if (schema.default !== undefined) return { ok: true, value: schema.default as Value };
    return required
      ? { ok: false, problem: "this field is required" }
      : { ok: true, value: undefined };
  }
  const choices = fieldChoices(schema);
  if (choices) {
    const pick = (word: string) => {
      const index = Number(word);
      if (Number.isInteger(index) && index >= 1 && index <= choices.length) {
        return choices[index - 1][0];
      }
      return choices.find(([value, label]) => value === word || label === word)?.[0];
    };
    if (schema.type === "array") {
      const picked = raw.split(",").map((w) => pick(w.trim()));
      if (picked.some((p) => p === undefined)) {
        return { ok: false, problem: "pick numbers or values from the list, separated by commas" };
      }
      return { ok: true, value: picked as string[] };
    }
    const value = pick(raw);
    return value === undefined
      ? { ok: false, problem: "pick a number or a value from the list" }
      : { ok: true, value };
  }
  switch (schema.type) {
    case "boolean":
      if (/^(y|yes|true)$/i.test(raw)) return { ok: true, value: true };
      if (/^(n|no|false)$/i.test(raw)) return { ok: true, value: false };
      return { ok: false, problem: "answer yes or no" };
    case "number":
    case "integer": {
      const value = Number(raw);
      if (!Number.isFinite(value)) return { ok: false, problem: "enter a number" };
      if (schema.type === "integer" && !Number.isInteger(value)) {
        return { ok: false, problem: "enter a whole number" };
      }
      if (typeof schema.minimum === "number" && value < schema.minimum) {
        return { ok: false, problem: `at least ${schema.minimum}` };
      }
      if (typeof schema.maximum === "number" && value > schema.maximum) {
        return { ok: false, problem: `at most ${schema.maximum}` };
      }
      return { ok: true, value };
    }
    default: {
      if (typeof schema.minLength === "number" && raw.length < schema.minLength) {
        return { ok: false, problem: `at least ${schema.minLength} characters` };
      }
      if (typeof schema.maxLength === "number" && raw.length > schema.maxLength) {
        return { ok: false, problem: `at most ${schema.maxLength} characters` };
      }
      if (schema.format === "email" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(raw)) {
        return { ok: false, problem: "enter an email address" };
      }
      if (schema.format === "uri") {
        try {
          new URL(raw);
        } catch {
          return { ok: false, problem: "enter a full URL" };
        }
      }
      if (schema.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
        return { ok: false, problem: "enter a date as YYYY-MM-DD" };
      }
      return { ok: true, value: input };
    }
  }
}

/** What a field's prompt says about the expected answer. */
function fieldHint(schema: FieldSchema): string {
  const parts: string[] = [];
  if (schema.type === "boolean") parts.push("y/n");
  else if (schema.type === "integer") parts.push("whole number");
  else if (schema.type === "number") parts.push("number");
  else if (typeof schema.format === "string") parts.push(schema.format);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

type Action = ElicitResult["action"];

/** Asks accept / decline / cancel with one key; Enter declines, Ctrl+C cancels. */
async function chooseAction(
  { editor, style }: ElicitationOptions,
  accept: string,
  signal: AbortSignal,
): Promise<Action> {
  const key = await editor.choose(
    `    ${accept.replace("[a]", style.bold("[a]"))}  ${style.bold("[d]")}ecline  ` +
      `${style.bold("[c]")}ancel (default decline) `,
    ["a", "d", "c"],
    "d",
    "c",
    signal,
  );
  return key === "a" ? "accept" : key === "d" ? "decline" : "cancel";
}

/** Options of {@linkcode createElicitationHandler}. */
export interface ElicitationOptions {
  /** Asks the questions; the form is written where it writes. */
  editor: LineEditor;
  output: TerminalOutput;
  /** Colours of the form: those of the stream `editor` writes to. */
  style: Style;
  /** Colours of stderr (the notice of a form declined while idle). */
  errStyle: Style;
}

/** The `elicitation/create` handler for a terminal. */
export function createElicitationHandler(
  options: ElicitationOptions,
): NonNullable<ServerRequestHandlers["elicitation"]> {
  const { editor, output, style, errStyle } = options;
  const say = (text: string) => editor.write(text);
  return async (server, params, signal): Promise<ElicitResult> => {
    // A task's status arriving while the form is on the screen must not draw the spinner
    // over its question: the spinner waits until the form is answered.
    const release = output.holdSpinner();
    try {
      return await askForm(server, params, signal);
    } finally {
      release();
    }
  };

  async function askForm(
    ...[server, params, signal]: Parameters<NonNullable<ServerRequestHandlers["elicitation"]>>
  ): Promise<ElicitResult> {
    const request = params as ElicitRequest["params"] & { mode?: string; url?: string };
    if (editor.prompting) {
      // Nothing of the person's is running: a form now would fight the prompt for the
      // keyboard, and an unprompted question is not one to answer blind.
      editor.interject(
        errStyle.dim(
          `${stripTerminalEscapes(server)} asked for input while idle (${
            text(request.message)
          }); declined\n`,
        ),
        (t) => output.err(t),
      );
      return { action: "decline" };
    }
    output.stopSpinner();
    output.newline();
    say(
      `${style.yellow("?")} ${style.bold(stripTerminalEscapes(server))} asks: ${
        text(request.message)
      }\n`,
    );
    if (request.mode === "url") {
      say(`    ${text(request.url)}\n`);
      const action = await chooseAction(options, "Open this URL and continue? [a]ccept", signal);
      return { action };
    }
    const schema = (request as {
      requestedSchema?: { properties?: Record<string, FieldSchema>; required?: string[] };
    })
      .requestedSchema ?? {};
    const fields = Object.entries(schema.properties ?? {});
    for (const [name, field] of fields) {
      const label = text(field.title) || name;
      const description = text(field.description);
      say(
        `    ${style.bold(label)}${schema.required?.includes(name) ? "*" : ""}${
          description ? style.dim(` — ${description}`) : ""
        }\n`,
      );
    }
    const action = await chooseAction(options, "[a]ccept and fill in", signal);
    if (action !== "accept") return { action };
    const content: Record<string, Value> = {};
    for (const [name, field] of fields) {
      const required = schema.required?.includes(name) ?? false;
      const choices = fieldChoices(field);
      if (choices) {
        choices.forEach(([, label], i) => say(`      ${i + 1}. ${label}\n`));
      }
      let answer: FieldAnswer = { ok: false, problem: "" };
      for (let attempt = 0; attempt < MAX_FIELD_ATTEMPTS && !answer.ok; attempt++) {
        if (signal.aborted) return { action: "cancel" };
        const typed = await editor.ask(
          `    ${text(field.title) || name}${required ? "*" : ""}${fieldHint(field)}: `,
          signal,
        );
        if (typed === undefined) return { action: "cancel" };
        answer = parseFieldAnswer(field, typed, required);
        if (!answer.ok) say(style.yellow(`      ${answer.problem}\n`));
      }
      if (!answer.ok) return { action: "cancel" };
      if (answer.value !== undefined) content[name] = answer.value;
    }
    return { action: "accept", content };
  }
}

/**
 * The answer `--accept-form-defaults` gives a form: accepted with every default its
 * schema gives when each required field has one, declined otherwise (and always for a
 * URL to open, which has no defaults). `why` says which, for the notice.
 */
export function formDefaultsAnswer(
  params: ElicitRequest["params"],
): { result: ElicitResult; why: string } {
  const request = params as ElicitRequest["params"] & { mode?: string };
  if (request.mode === "url") {
    return { result: { action: "decline" }, why: "it asks to open a URL, which has no default" };
  }
  const schema = (request as {
    requestedSchema?: { properties?: Record<string, FieldSchema>; required?: string[] };
  }).requestedSchema ?? {};
  const properties = schema.properties ?? {};
  const missing = (schema.required ?? []).filter((name) => properties[name]?.default === undefined);
  if (missing.length > 0) {
    return {
      result: { action: "decline" },
      why: `required field${missing.length > 1 ? "s" : ""} ${
        missing.map((name) => `"${text(name) || name}"`).join(", ")
      } ${missing.length > 1 ? "have" : "has"} no default`,
    };
  }
  const content: Record<string, Value> = {};
  for (const [name, field] of Object.entries(properties)) {
    if (field.default !== undefined) content[name] = field.default as Value;
  }
  const names = Object.keys(content);
  return {
    result: { action: "accept", content },
    why: names.length > 0
      ? `answered with the defaults of ${names.join(", ")}`
      : "no field is required, so it was accepted empty",
  };
}

/**
 * The `elicitation/create` handler of `--accept-form-defaults`: no one is asked;
 * `notice` is told what was answered and why.
 */
export function createFormDefaultsHandler(
  notice: (text: string) => void,
): NonNullable<ServerRequestHandlers["elicitation"]> {
  return (server, params) => {
    const { result, why } = formDefaultsAnswer(params);
    notice(
      `${stripTerminalEscapes(server)} asked for input (${text(params.message)}): ` +
        `${result.action === "accept" ? "accepted" : "declined"} by --accept-form-defaults, ${why}`,
    );
    return Promise.resolve(result);
  };
}
