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

import type { ProgressUpdate } from "../connections/types.ts";
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
import type { Style } from "../style.ts";
import { hyperlinksEnabled, stripTerminalEscapes, TerminalEscapeFilter } from "../terminal.ts";
import { abridge } from "../text.ts";
import type { LineEditor } from "./line_editor.ts";
import { MarkdownStream } from "./markdown.ts";
import type { TerminalOutput } from "./output.ts";

/** Longest tool-argument preview shown on a tool line. */
const ARGS_PREVIEW_CHARS = 80;
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
  /** Escapes split across streamed pieces are held until they can be removed whole. */
  #escapes = new TerminalEscapeFilter();
  readonly #running = new Map<string, ToolCallView>();

  constructor(options: TerminalUiOptions) {
    this.#out = options.output;
    this.#style = options.errStyle;
    this.#promptStyle = options.promptStyle;
    this.#color = options.style.enabled;
    this.#editor = options.editor;
    this.#autoApprove = options.autoApprove ?? false;
    this.#width = options.width ?? 80;
    this.#hyperlinks = this.#color && hyperlinksEnabled(Deno.stdout);
    this.#verbose = options.verbose ?? (() => false);
  }

  /** Shows the spinner while the model is asked (the REPL calls this when a turn starts). */
  thinking(): void {
    this.#out.spin("thinking…");
  }

  textDelta(text: string): void {
    this.#markdown ??= new MarkdownStream({
      color: this.#color,
      width: this.#width,
      hyperlinks: this.#hyperlinks,
    });
    this.#out.out(this.#markdown.push(this.#escapes.push(text)));
  }

  textDone(): void {
    if (this.#markdown) {
      this.#out.out(this.#markdown.push(this.#escapes.end()) + this.#markdown.end());
    }
    this.#markdown = undefined;
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
    this.#out.spin(`running ${this.#toolName(call)}…`);
  }

  toolProgress(id: string, update: ProgressUpdate): void {
    const call = this.#running.get(id);
    if (!call) return;
    const amount = update.total ? `${update.progress}/${update.total}` : `${update.progress}`;
    const message = update.message ? ` ${abridge(stripTerminalEscapes(update.message), 60)}` : "";
    this.#out.spin(`${this.#toolName(call)} ${amount}${message}`);
  }

  toolEnd(id: string, end: ToolCallEnd): void {
    const call = this.#running.get(id);
    this.#running.delete(id);
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
      const what = end.status === "declined"
        ? "declined"
        : stripTerminalEscapes(end.error?.message ?? end.status);
      this.#out.err(`${mark} ${name} ${this.#style.dim(took)} ${what}\n`);
      if (end.error && end.status !== "declined") {
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
    if (this.#autoApprove) return "yes";
    this.#out.stopSpinner();
    this.textDone();
    const why = {
      "not-approved": "",
      "new-tool": " (a new tool since you approved this server)",
      "changed": " (its definition changed since you approved it)",
    }[request.reason];
    const args = abridge(stripTerminalEscapes(request.argsPreview), 400);
    const heading = (style: Style) =>
      `${style.yellow("?")} Run ${style.bold(this.#toolName(request))}${why}\n` +
      `    ${style.dim(args)}\n`;
    if (!this.#editor) {
      this.#out.err(
        heading(this.#style) +
          this.#style.dim("    no one to ask: declined (use --yes, or mark the server trusted)\n"),
      );
      return "no";
    }
    const style = this.#promptStyle;
    const key = await this.#editor.choose(
      heading(style) +
        `    ${style.bold("[y]")}es  ${style.bold("[n]")}o  ` +
        `${style.bold("[a]")}lways this tool  ${style.bold("[s]")}erver: always  (default No) `,
      ["y", "n", "a", "s"],
      "n",
      "n",
      signal,
    );
    this.thinking();
    return ({ y: "yes", n: "no", a: "always-tool", s: "always-server" } as const)[key as "y"] ??
      "no";
  }

  async approveSampling(request: SamplingApprovalRequest, signal: AbortSignal): Promise<boolean> {
    if (this.#autoApprove) return true;
    this.#out.stopSpinner();
    this.textDone();
    const last = request.messages.at(-1);
    const heading = (style: Style) =>
      `${style.yellow("?")} Server ${style.bold(stripTerminalEscapes(request.server))} ` +
      `asks the model (${request.model}, up to ${request.maxTokens} tokens):\n` +
      (request.systemPrompt
        ? `    system: ${style.dim(abridge(stripTerminalEscapes(request.systemPrompt), 200))}\n`
        : "") +
      (last
        ? `    ${last.role}: ${style.dim(abridge(stripTerminalEscapes(last.text), 400))}\n`
        : "");
    if (!this.#editor) {
      this.#out.err(
        heading(this.#style) +
          this.#style.dim('    no one to ask: declined (use --yes, or set "sampling": "allow")\n'),
      );
      return false;
    }
    const style = this.#promptStyle;
    const key = await this.#editor.choose(
      heading(style) +
        `    Allow? ${style.bold("[y]")}es  ${style.bold("[n]")}o  (default No) `,
      ["y", "n"],
      "n",
      "n",
      signal,
    );
    return key === "y";
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
    // A tool the model invented belongs to no server.
    const tool = stripTerminalEscapes(call.tool);
    return call.server ? `${stripTerminalEscapes(call.server)} › ${tool}` : tool;
  }
}

/** `340 ms`, `2.4 s`, `1 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
