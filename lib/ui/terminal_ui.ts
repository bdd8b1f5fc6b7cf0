/**
 * The agent's UI seam for a person at a terminal: the answer streams as Markdown, each
 * tool call gets a line with its server, tool, arguments and duration, a spinner shows
 * progress, and approvals are asked with a single key (default No).
 *
 * Each piece of text takes the colours of the stream it is written to: the answer
 * stdout's, status lines stderr's, and a question (its heading and its keys) those of
 * the stream the {@linkcode LineEditor} asks on, which is where the person reads it.
 *
 * Everything that comes from a server or the model is stripped of terminal escape
 * sequences before it is printed: a tool result must not be able to rewrite the screen.
 *
 * @module
 */

import { describeLaunchChange } from "../agent/launch_identity.ts";
import type { ProgressUpdate } from "../connections/types.ts";
import type { TaskProgress } from "../connections/tasks/task_types.ts";
import { progressLine } from "../tasks/progress_line.ts";
import type { RetryNotice } from "../llm/provider.ts";
import type {
  AgentUi,
  NoticeLevel,
  SamplingApprovalRequest,
  SamplingEnd,
  StepUsage,
  ToolApproval,
  ToolApprovalRequest,
  ToolCallEnd,
  ToolCallView,
} from "../agent/ui.ts";
import type { Style } from "../terminal/style.ts";
import {
  hyperlinksEnabled,
  stripTerminalEscapes,
  TerminalEscapeFilter,
} from "../terminal/terminal.ts";
import { showName } from "../text/names.ts";
import { abridge } from "../text/text.ts";
import type { LineEditor } from "../terminal/line_editor.ts";
import { MarkdownStream } from "./markdown.ts";
import { WordWrapStream } from "./word_wrap.ts";
import { showPaged, textLines, valueLines, visibleText } from "./whole_view.ts";
import type { TerminalOutput } from "./output.ts";

/** Longest tool-argument preview shown on a tool line. */
const ARGS_PREVIEW_CHARS = 80;
/**
 * Characters of a call's arguments shown with the approval question; the rest is one key
 * away ("v"), and the question says how much is hidden.
 */
export const APPROVAL_ARGS_CHARS = 400;

/** Characters of a hook's reason shown in the approval question's heading. */
const HOOK_REASON_CHARS = 300;
/** Characters of a sampling request's system prompt shown with its question; "v" shows all. */
const SAMPLING_SYSTEM_CHARS = 200;
/** Characters of a sampling request's last message shown with its question; "v" shows all. */
const SAMPLING_MESSAGE_CHARS = 400;
/** Longest result preview shown after a tool line. */
const RESULT_PREVIEW_CHARS = 100;

/** Options of {@linkcode TerminalUi}. */
export interface TerminalUiOptions {
  output: TerminalOutput;
  /** Colours of the answer (stdout). */
  style: Style;
  /**
   * Colours of the status lines (stderr): each stream gets colour only when it is a
   * terminal, so `run … 2> log` keeps the log plain.
   */
  errStyle: Style;
  /** Colours of the questions: those of the stream `editor` writes to. */
  promptStyle: Style;
  /** Asks approval questions; absent: nobody can answer, so calls are declined. */
  editor?: LineEditor;
  /** Approve every tool call and sampling request (`--yes`). @default false */
  autoApprove?: boolean;
  /** Terminal width for Markdown rules. @default 80 */
  width?: number;
  /**
   * The width each answer is wrapped to between words (lib/ui/word_wrap.ts), read as it
   * starts: `width` when the answer goes to a terminal. @default `Infinity`: the answer as
   * it came (a pipe, a file)
   */
  wrapColumns?: () => number;
  /** Show per-step token usage (debug mode). @default () => false */
  verbose?: () => boolean;
}

/** {@linkcode AgentUi} for a terminal. */
export class TerminalUi implements AgentUi {
  readonly #out: TerminalOutput;
  /** Colours of what goes to stderr: everything but the answer and the questions. */
  readonly #style: Style;
  /** Colours of the questions, written by the editor. */
  readonly #promptStyle: Style;
  readonly #color: boolean;
  readonly #editor?: LineEditor;
  readonly #autoApprove: boolean;
  readonly #width: number;
  /** Links in answers as OSC 8 hyperlinks: colour on and a terminal that shows them. */
  readonly #hyperlinks: boolean;
  readonly #verbose: () => boolean;
  #markdown: MarkdownStream | undefined;
  #wrap: WordWrapStream | undefined;
  readonly #wrapColumns: () => number;
  /** Escapes split across streamed pieces are held until they can be removed whole. */
  #escapes = new TerminalEscapeFilter();
  readonly #running = new Map<string, ToolCallView>();
  /** When each running call started (`Date.now()`), for the spinner's clock. */
  readonly #started = new Map<string, number>();

  constructor(options: TerminalUiOptions) {
    this.#out = options.output;
    this.#style = options.errStyle;
    this.#promptStyle = options.promptStyle;
    this.#color = options.style.enabled;
    this.#editor = options.editor;
    this.#autoApprove = options.autoApprove ?? false;
    this.#width = options.width ?? 80;
    this.#wrapColumns = options.wrapColumns ?? (() => Infinity);
    this.#hyperlinks = this.#color && hyperlinksEnabled(Deno.stdout);
    this.#verbose = options.verbose ?? (() => false);
  }

  /** Shows the spinner while the model is asked (the REPL calls this when a turn starts). */
  thinking(): void {
    this.#out.spin("thinking…", Date.now());
  }

  textDelta(text: string): void {
    this.#markdown ??= new MarkdownStream({
      color: this.#color,
      width: this.#width,
      hyperlinks: this.#hyperlinks,
    });
    this.#wrap ??= new WordWrapStream(this.#wrapColumns());
    this.#out.out(this.#wrap.push(this.#markdown.push(this.#escapes.push(text))));
  }

  textDone(): void {
    if (this.#markdown) {
      const rest = this.#markdown.push(this.#escapes.end()) + this.#markdown.end();
      this.#out.out(this.#wrap ? this.#wrap.push(rest) + this.#wrap.end() : rest);
    }
    this.#markdown = undefined;
    this.#wrap = undefined;
    this.#out.newline();
  }

  retry(notice: RetryNotice): void {
    this.textDone();
    const seconds = (notice.delayMs / 1000).toFixed(1);
    this.#out.err(
      this.#style.yellow(
        `⟳ ${notice.reason}; retry ${notice.attempt}/${notice.maxRetries} in ${seconds} s\n`,
      ),
    );
    if (notice.discardedPartial) {
      this.#out.err(this.#style.dim("  (the partial answer above is discarded)\n"));
    }
  }

  toolStart(call: ToolCallView): void {
    this.textDone();
    this.#running.set(call.id, call);
    const args = abridge(stripTerminalEscapes(call.argsPreview), ARGS_PREVIEW_CHARS);
    this.#out.err(
      `${this.#style.cyan("⚙")} ${this.#style.bold(this.#toolName(call))}${
        this.#style.dim(`(${args})`)
      }\n`,
    );
    this.#started.set(call.id, Date.now());
    // The spinner counts the call's time once it runs on (lib/ui/output.ts).
    this.#out.spin(`running ${this.#toolName(call)}…`, this.#started.get(call.id));
  }

  toolProgress(id: string, update: ProgressUpdate): void {
    const call = this.#running.get(id);
    if (!call) return;
    const amount = update.total ? `${update.progress}/${update.total}` : `${update.progress}`;
    const message = update.message ? ` ${abridge(stripTerminalEscapes(update.message), 60)}` : "";
    this.#out.spin(`${this.#toolName(call)} ${amount}${message}`, this.#started.get(id));
  }

  toolTask(id: string, progress: TaskProgress): void {
    const call = this.#running.get(id);
    if (!call) return;
    // Read at every frame: the elapsed time goes on between the server's statuses.
    this.#out.spin(() => stripTerminalEscapes(`${this.#toolName(call)} ${progressLine(progress)}`));
  }

  toolEnd(id: string, end: ToolCallEnd): void {
    const call = this.#running.get(id);
    this.#running.delete(id);
    this.#started.delete(id);
    if (this.#running.size === 0) this.#out.stopSpinner();
    const name = call ? this.#toolName(call) : id;
    const took = formatDuration(end.durationMs);
    if (end.status === "ok") {
      const preview = abridge(
        stripTerminalEscapes(end.preview).replace(/\s+/g, " "),
        RESULT_PREVIEW_CHARS,
      );
      this.#out.err(
        `${this.#style.green("✓")} ${name} ${this.#style.dim(took)}${
          preview ? this.#style.dim(`  ${preview}`) : ""
        }\n`,
      );
    } else {
      const mark = end.status === "declined" ? this.#style.yellow("⊘") : this.#style.red("✗");
      // A hook's refusal says why, as a failure does (docs/hooks.md).
      const byHook = end.error?.code === "hook_blocked" || end.error?.code === "hook_failed";
      const what = end.status === "declined" && !byHook
        ? "declined"
        : stripTerminalEscapes(end.error?.message ?? end.status);
      this.#out.err(`${mark} ${name} ${this.#style.dim(took)} ${what}\n`);
      if (end.error && (end.status !== "declined" || byHook)) {
        this.#out.err(
          this.#style.dim(
            stripTerminalEscapes(
              `    cause:  ${end.error.reason}\n    remedy: ${end.error.remedy}\n`,
            ),
          ),
        );
      }
    }
    if (end.omittedChars > 0) {
      this.#out.err(
        this.#style.dim(
          `    (${end.omittedChars} characters of the result were cut before reaching the model)\n`,
        ),
      );
    }
    if (this.#running.size === 0) this.thinking();
  }

  notice(level: NoticeLevel, text: string): void {
    this.textDone();
    const line = stripTerminalEscapes(text);
    this.#out.err(
      level === "warning" ? this.#style.yellow(`warning: ${line}\n`) : this.#style.dim(`${line}\n`),
    );
  }

  usage(report: StepUsage): void {
    if (!this.#verbose()) return;
    const { usage } = report;
    this.#out.err(this.#style.dim(
      `  step ${report.step}: ${usage.promptTokens} prompt + ${usage.completionTokens} completion tokens` +
        `${usage.estimated ? " (estimated)" : ""}, ${formatDuration(report.durationMs)}\n`,
    ));
  }

  async approveToolCall(request: ToolApprovalRequest, signal: AbortSignal): Promise<ToolApproval> {
    // A hook's question is for a person: --yes does not answer it (docs/hooks.md).
    const hook = request.reason === "hook";
    if (this.#autoApprove && !hook) return "yes";
    this.#out.stopSpinner();
    this.textDone();
    const why = {
      "not-approved": "",
      "new-tool": " (a new tool since you approved this server)",
      "changed": " (its definition changed since you approved it)",
      "server-changed": ` (${describeLaunchChange(request.launchChange ?? [])})`,
      "hook": ` (${abridge(visibleText(request.hookReason ?? "a hook asks"), HOOK_REASON_CHARS)})`,
    }[request.reason];
    // Shown, not removed: an invisible character in the arguments is part of the call.
    const whole = visibleText(
      request.args === undefined ? request.argsPreview : JSON.stringify(request.args),
    );
    const hidden = Math.max(0, whole.length - APPROVAL_ARGS_CHARS);
    const args = hidden > 0 ? `${whole.slice(0, APPROVAL_ARGS_CHARS)}…` : whole;
    const heading = (style: Style) =>
      `${style.yellow("?")} Run ${style.bold(this.#toolName(request))}${why}\n` +
      `    ${style.dim(args)}\n` +
      (hidden > 0
        ? `    ${
          style.yellow(
            `${hidden.toLocaleString("en-US")} more characters of the arguments are hidden: ` +
              "press v to see the whole call",
          )
        }\n`
        : "");
    if (!this.#editor) {
      this.#out.err(
        heading(this.#style) +
          this.#style.dim(
            hook
              ? "    no one to ask: declined (a hook's question needs a person at a terminal)\n"
              : "    no one to ask: declined (use --yes, or mark the server trusted)\n",
          ),
      );
      return "no";
    }
    const style = this.#promptStyle;
    // "Always" is no answer to a hook, which asks again at every call.
    const always = hook ? [] : ["a", "s", ...(request.canRemember ? ["p"] : [])];
    const keys = ["y", "n", ...always, "v"];
    let question = heading(style);
    const choices = [
      ["y", "es"],
      ["n", "o"],
      ["a", "lways this tool"],
      ["s", "erver: always"],
      ["p", "roject: always"],
      ["v", "iew all"],
    ].filter(([key]) => keys.includes(key)).map(([key, rest]) => ({
      plain: `[${key}]${rest}`,
      shown: `${style.bold(`[${key}]`)}${rest}`,
    }));
    choices.push({ plain: "(default No)", shown: "(default No)" });
    for (;;) {
      const key = await this.#editor.choose(
        question + choiceLines(choices, this.#width),
        keys,
        "n",
        "n",
        signal,
      );
      if (key === "v") {
        // The whole call, a page at a time, then the question again under its first line
        // (the pages may have scrolled the heading away).
        await showPaged(wholeCall(this.#toolName(request), request), {
          editor: this.#editor,
          style,
          signal,
        });
        question = heading(style).split("\n")[0] + "\n";
        continue;
      }
      this.thinking();
      return ({
        y: "yes",
        n: "no",
        a: "always-tool",
        s: "always-server",
        p: "always-project",
      } as const)[key as "y"] ?? "no";
    }
  }

  async approveSampling(request: SamplingApprovalRequest, signal: AbortSignal): Promise<boolean> {
    if (this.#autoApprove) return true;
    this.#out.stopSpinner();
    this.textDone();
    const last = request.messages.at(-1);
    // On a line each: 400 newlines must not push the question off the screen ("v" shows
    // the lines as they are).
    const oneLine = (text: string) => visibleText(text).replaceAll("\n", "↵");
    const system = request.systemPrompt ? oneLine(request.systemPrompt) : "";
    const lastText = last ? oneLine(last.text) : "";
    // What the heading leaves out, so that the person knows to look (v) before answering.
    const earlier = Math.max(0, request.messages.length - 1);
    const cut = Math.max(0, system.length - SAMPLING_SYSTEM_CHARS) +
      Math.max(0, lastText.length - SAMPLING_MESSAGE_CHARS);
    const hidden = [
      earlier > 0 ? `${earlier} earlier message${earlier === 1 ? "" : "s"}` : "",
      cut > 0 ? `${cut.toLocaleString("en-US")} more characters` : "",
    ].filter(Boolean).join(" and ");
    const heading = (style: Style) =>
      `${style.yellow("?")} Server ${style.bold(stripTerminalEscapes(request.server))} ` +
      `asks the model (${request.model}, up to ${request.maxTokens} tokens):\n` +
      (system ? `    system: ${style.dim(abridge(system, SAMPLING_SYSTEM_CHARS))}\n` : "") +
      (last ? `    ${last.role}: ${style.dim(abridge(lastText, SAMPLING_MESSAGE_CHARS))}\n` : "") +
      (hidden
        ? `    ${
          style.yellow(`${hidden} of the request are hidden: press v to see the whole request`)
        }\n`
        : "");
    if (!this.#editor) {
      this.#out.err(
        heading(this.#style) +
          this.#style.dim('    no one to ask: declined (use --yes, or set "sampling": "allow")\n'),
      );
      return false;
    }
    const style = this.#promptStyle;
    let question = heading(style);
    for (;;) {
      const key = await this.#editor.choose(
        question +
          `    Allow? ${style.bold("[y]")}es  ${style.bold("[n]")}o  ` +
          `${style.bold("[v]")}iew all  (default No) `,
        ["y", "n", "v"],
        "n",
        "n",
        signal,
      );
      if (key !== "v") return key === "y";
      await showPaged(wholeSampling(request), { editor: this.#editor, style, signal });
      question = heading(style).split("\n")[0] + "\n";
    }
  }

  samplingEnd(end: SamplingEnd): void {
    const took = formatDuration(end.durationMs);
    const server = stripTerminalEscapes(end.server);
    if (end.status === "ok") {
      this.#out.err(`${this.#style.green("✓")} sampling for ${server} ${this.#style.dim(took)}\n`);
    } else {
      this.#out.err(
        `${this.#style.yellow("⊘")} sampling for ${server} ${end.status}${
          end.error ? `: ${end.error.message}` : ""
        }\n`,
      );
    }
  }

  #toolName(call: Pick<ToolCallView, "server" | "tool">): string {
    // A tool the model invented belongs to no server. Names are escaped, not stripped:
    // on one line, and told apart from a look-alike (lib/names.ts).
    const tool = showName(call.tool);
    return call.server ? `${showName(call.server)} › ${tool}` : tool;
  }
}

/** `340 ms`, `2.4 s`, `1 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Everything a tool call would send, for the approval's "view all", as lines to read. */
function wholeCall(name: string, request: ToolApprovalRequest): string[] {
  const args = request.args === undefined
    // Not JSON (the model's text as it came): its lines as they are.
    ? textLines(request.argsPreview, "    ")
    : valueLines(request.args, "    ");
  return [
    `  The whole call of ${name}:`,
    ...args,
    ...(request.description
      ? ["  The tool's description (from its server):", ...textLines(request.description, "    ")]
      : []),
    ...(request.annotations && Object.keys(request.annotations).length > 0
      ? ["  Its server's hints (unchecked):", ...valueLines(request.annotations, "    ")]
      : []),
  ];
}

/** Everything a sampling request would send to the model, for its "view all". */
function wholeSampling(request: SamplingApprovalRequest): string[] {
  return [
    `  The whole request of ${visibleText(request.server)} (up to ${request.maxTokens} tokens` +
    `${
      request.modelHints.length > 0
        ? `; it would prefer ${visibleText(request.modelHints.join(", "))}`
        : ""
    }):`,
    ...(request.systemPrompt ? ["  system:", ...textLines(request.systemPrompt, "    ")] : []),
    ...request.messages.flatMap((message, i) => [
      `  ${i + 1}. ${message.role}:`,
      ...textLines(message.text, "    "),
    ]),
  ];
}

/**
 * The approval's choices, indented, two spaces apart, in as many lines as the terminal's
 * `width` needs: a choice is never split across lines. Ends with a space for the answer.
 */
function choiceLines(choices: { plain: string; shown: string }[], width: number): string {
  const lines: string[] = [];
  let line = "";
  let used = 0;
  for (const { plain, shown } of choices) {
    if (used > 0 && 4 + used + 2 + plain.length >= width) {
      lines.push(line);
      line = "";
      used = 0;
    }
    line += used > 0 ? `  ${shown}` : shown;
    used += (used > 0 ? 2 : 0) + plain.length;
  }
  return [...lines, line].map((l) => `    ${l}`).join("\n") + " ";
}
