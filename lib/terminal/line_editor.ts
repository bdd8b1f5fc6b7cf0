/**
 * Reading what the person types: line editing, tab completion, persistent history,
 * multi-line input, and the keyboard while a turn runs (Ctrl+C cancels it) or while a
 * question waits for one key.
 *
 * A fresh `node:readline` interface is made for each prompt and closed after it: while a
 * turn runs, nothing echoes typed keys into the streamed answer, and the terminal is in
 * raw mode only to catch Ctrl+C. (Measured: under Deno a pending `question()` never
 * settles on Ctrl+D, so every question races the interface's `close` event.)
 *
 * @module
 */

import process from "node:process";
import * as readline from "node:readline/promises";
import { dirname } from "node:path";
import { replacePrivateFile } from "../files/private_file.ts";
import { canRedraw, displayWidth } from "./terminal.ts";
import { safeCandidates } from "./candidates.ts";
import { MAX_HISTORY_BYTES, readBoundedText } from "../files/bounded_read.ts";

/** What one prompt produced. */
export type ReadResult =
  | { kind: "line"; text: string }
  /** Ctrl+C at the prompt; `hadText` when it discarded typed text. */
  | { kind: "interrupt"; hadText: boolean }
  /** Ctrl+D on an empty line, or the end of piped input. */
  | { kind: "eof" };

/** Completion candidates for the text before the cursor. */
export type Completer = (line: string) => Promise<{ candidates: string[]; replace: string }>;

/** Options of {@linkcode LineEditor}. */
export interface LineEditorOptions {
  /** History file; `undefined` keeps history in memory only. */
  historyFile?: string;
  /** @default 1000 */
  historySize?: number;
  completer?: Completer;
  /** @default process.stdin */
  input?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  /**
   * Where prompts, questions and the echo of typed keys go: the terminal the person
   * reads (the session picks stderr unless only stdout is one). @default process.stderr
   */
  output?: NodeJS.WritableStream;
  /** Applied to an entry before it is written to the history file (hides secrets). */
  redact?: (text: string) => string;
  /** The terminal's width in columns, read when a question is drawn again. @default the console's */
  columns?: () => number;
  /**
   * The terminal can move its cursor and erase: text that arrives while a prompt or a
   * question waits is written above it, which is then drawn again. Without (`TERM=dumb`),
   * the text follows on a line of its own and the prompt is written again below it.
   * @default unless TERM is dumb
   */
  redraw?: boolean;
}

/** Lines ending in a backslash continue on the next line. */
const CONTINUATION = /\\$/;
/** A line of just `"""` opens or closes a block of several lines. */
const BLOCK_FENCE = '"""';

/** Prompts, history and keys for the interactive session. */
export class LineEditor {
  readonly #input: NonNullable<LineEditorOptions["input"]>;
  readonly #output: NodeJS.WritableStream;
  readonly #historyFile?: string;
  readonly #historySize: number;
  readonly #redact: (text: string) => string;
  /** Questions (approvals, forms) waiting for an answer, and how to withdraw each. */
  readonly #questions = new Set<() => void>();
  /** The session's own prompt is being shown (not a question). */
  #prompting = false;
  /** A tab completion is being computed; further Tabs wait for it. */
  #completing = false;
  #completer?: Completer;
  /** Most recent first, as readline keeps it. */
  #history: string[] = [];
  /** Piped input is read through one interface for the whole session. */
  #piped?: { rl: readline.Interface; lines: AsyncIterator<string> };
  /** The interface of the prompt being shown, if any. */
  #active?: readline.Interface;
  /** Ctrl+C watchers of running turns; while any is set the terminal stays raw. */
  #busy = new Set<(chunk: Uint8Array | string) => void>();
  /** Keys typed while a turn ran, for the next prompt. */
  #typeahead = "";
  /** The one-key question waiting for its key, to draw it again. */
  #asking?: string;
  readonly #columns: () => number;
  readonly #redraw: boolean;

  constructor(options: LineEditorOptions = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stderr;
    this.#historyFile = options.historyFile;
    this.#historySize = options.historySize ?? 1000;
    this.#redact = options.redact ?? ((text) => text);
    this.#completer = options.completer;
    this.#columns = options.columns ?? consoleColumns;
    // Only a terminal reaches the questions that redraw: TERM alone decides.
    this.#redraw = options.redraw ?? canRedraw({ isTerminal: () => true });
  }

  /** Sets the tab completion used by the following prompts. */
  setCompleter(completer: Completer): void {
    this.#completer = completer;
  }

  /** Whether a person is typing (a terminal), as opposed to piped input. */
  get interactive(): boolean {
    return Boolean(this.#input.isTTY);
  }

  /**
   * Loads the history file; a missing or unreadable one starts an empty history. A file
   * grown past the history size is cut back to it (the newest entries).
   */
  async loadHistory(): Promise<void> {
    if (!this.#historyFile) return;
    let lines: string[];
    try {
      lines = (await readBoundedText(this.#historyFile, {
        what: "the prompt history",
        maxBytes: MAX_HISTORY_BYTES,
      })).split("\n").filter(Boolean);
    } catch {
      this.#history = [];
      return;
    }
    this.#history = lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as string];
      } catch {
        return [];
      }
    }).reverse().slice(0, this.#historySize);
    if (lines.length > this.#historySize) await this.#rewriteHistory();
  }

  /** Replaces the history file with the kept entries (temporary file, then rename). */
  async #rewriteHistory(): Promise<void> {
    const text = [...this.#history].reverse().map((entry) => JSON.stringify(entry)).join("\n");
    // The history is a convenience: a failed rewrite keeps the old file.
    await replacePrivateFile(this.#historyFile!, text + "\n").catch(() => {});
  }

  /** History entries, most recent first. */
  get history(): readonly string[] {
    return this.#history;
  }

  /**
   * Reads one input: a line, or several joined by `\` continuations or a `"""` block.
   * `prompt` is shown first, `continuation` on following lines.
   */
  async read(prompt: string, continuation = "... "): Promise<ReadResult> {
    // A question left over from a turn that ended (a form whose tool timed out) must not
    // read the keyboard alongside the prompt: withdraw it first.
    this.withdrawQuestions();
    if (!this.interactive) return this.#readPiped();
    this.#prompting = true;
    try {
      return await this.#readInput(prompt, continuation);
    } finally {
      this.#prompting = false;
    }
  }

  /** Whether the session's prompt is showing (so a question cannot be asked now). */
  get prompting(): boolean {
    return this.#prompting;
  }

  /** Withdraws every question still waiting for an answer (they resolve as cancelled). */
  withdrawQuestions(): void {
    for (const withdraw of [...this.#questions]) withdraw();
  }

  async #readInput(prompt: string, continuation: string): Promise<ReadResult> {
    const first = await this.#question(prompt);
    if (first.kind !== "line") return first;
    const lines: string[] = [];
    if (first.text.trim() === BLOCK_FENCE) {
      for (;;) {
        const next = await this.#question(continuation, false);
        if (next.kind !== "line") return next;
        if (next.text.trim() === BLOCK_FENCE) break;
        lines.push(next.text);
      }
    } else {
      let current = first.text;
      while (CONTINUATION.test(current)) {
        lines.push(current.replace(CONTINUATION, ""));
        const next = await this.#question(continuation, false);
        if (next.kind !== "line") return next;
        current = next.text;
      }
      lines.push(current);
    }
    const text = lines.join("\n");
    await this.#remember(text);
    return { kind: "line", text };
  }

  async #question(prompt: string, useHistory = true): Promise<ReadResult> {
    const rl = readline.createInterface({
      input: this.#input,
      output: this.#output,
      terminal: true,
      history: useHistory ? [...this.#history] : [],
      historySize: this.#historySize,
      removeHistoryDuplicates: true,
      tabSize: 4,
      completer: this.#completer ? this.#complete.bind(this) : undefined,
    } as readline.ReadLineOptions);
    this.#active = rl;
    const typed = useHistory ? this.#typeahead : "";
    if (useHistory) this.#typeahead = "";
    const ended = new Promise<ReadResult>((resolve) => {
      rl.once("SIGINT", () => {
        const hadText = rl.line.length > 0;
        this.#output.write("^C\n");
        resolve({ kind: "interrupt", hadText });
      });
      rl.once("close", () => resolve({ kind: "eof" }));
    });
    try {
      const answered = rl.question(prompt).then((text): ReadResult => ({ kind: "line", text }));
      if (typed.trim()) rl.write(typed.trimEnd());
      return await Promise.race([answered, ended]);
    } finally {
      this.#active = undefined;
      rl.close();
      this.#settleTerminal();
    }
  }

  /** readline's completer: candidates and the text they replace; never rejects. */
  async #complete(line: string): Promise<[string[], string]> {
    // Two quick Tabs would otherwise both insert the same completion.
    if (this.#completing) return [[], line];
    this.#completing = true;
    try {
      const { candidates, replace } = await this.#completer!(line);
      return [safeCandidates(candidates, replace), replace];
    } catch {
      return [[], line];
    } finally {
      this.#completing = false;
    }
  }

  async #readPiped(): Promise<ReadResult> {
    if (!this.#piped) {
      const rl = readline.createInterface({ input: this.#input, terminal: false });
      this.#piped = { rl, lines: rl[Symbol.asyncIterator]() };
    }
    const next = await this.#piped.lines.next();
    if (next.done) {
      this.#piped.rl.close();
      return { kind: "eof" };
    }
    return { kind: "line", text: next.value };
  }

  async #remember(text: string): Promise<void> {
    if (text.trim() === "" || this.#history[0] === text) return;
    this.#history.unshift(text);
    this.#history.length = Math.min(this.#history.length, this.#historySize);
    if (!this.#historyFile) return;
    try {
      await Deno.mkdir(dirname(this.#historyFile), { recursive: true });
      // One JSON string per line keeps multi-line entries intact. 0600: people paste secrets.
      await Deno.writeTextFile(this.#historyFile, JSON.stringify(this.#redact(text)) + "\n", {
        append: true,
        mode: 0o600,
      });
    } catch {
      // History is a convenience; failing to save it must not interrupt the session.
    }
  }

  /**
   * While `work` runs, watches the keyboard for Ctrl+C (calling `onInterrupt`). Other keys
   * are not echoed, so typing during a streamed answer does not garble it, but kept: the
   * next prompt starts with what was typed ({@linkcode typedAhead}), Enter included as a
   * space, so nothing typed is lost and nothing runs before the person sees it.
   */
  async whileBusy<T>(work: () => Promise<T>, onInterrupt: () => void): Promise<T> {
    if (!this.interactive || !this.#input.setRawMode) return await work();
    const onData = (chunk: Uint8Array | string) => {
      const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
      if (text.includes("\x03")) return onInterrupt();
      // Keys that answer a question (an approval, a form, the pager) are that question's.
      if (this.#asking !== undefined || this.#questions.size > 0 || this.#active) return;
      this.#typeahead = typedAhead(this.#typeahead, text);
    };
    this.#busy.add(onData);
    this.#input.on("data", onData);
    this.#settleTerminal();
    try {
      return await work();
    } finally {
      this.#input.off("data", onData);
      this.#busy.delete(onData);
      this.#settleTerminal();
    }
  }

  /**
   * Puts the terminal back in the mode the session needs after a question: raw while a
   * turn runs (so Ctrl+C reaches the watcher instead of killing the process), cooked and
   * paused otherwise.
   */
  #settleTerminal(): void {
    if (!this.#input.setRawMode) return;
    const busy = this.#busy.size > 0;
    this.#input.setRawMode(busy);
    if (busy) this.#input.resume();
    else this.#input.pause();
  }

  /** Writes part of a question (a heading, a form's fields) where the questions go. */
  write(text: string): void {
    this.#output.write(text);
  }

  /**
   * Asks a question answered by one key among `keys` (lower case); Enter gives
   * `fallback`, Ctrl+C or Ctrl+D give `cancel`, and so does aborting `signal` (the
   * question was withdrawn). Piped input answers with a line.
   */
  async choose(
    question: string,
    keys: readonly string[],
    fallback: string,
    cancel: string,
    signal?: AbortSignal,
  ): Promise<string> {
    this.#output.write(question);
    if (!this.interactive || !this.#input.setRawMode) {
      const answer = await this.#readPiped();
      const key = answer.kind === "line" ? answer.text.trim().toLowerCase()[0] : undefined;
      const chosen = key && keys.includes(key) ? key : answer.kind === "eof" ? cancel : fallback;
      this.#output.write(`${chosen}\n`);
      return chosen;
    }
    const input = this.#input;
    this.#asking = question;
    const chosen = await new Promise<string>((resolve) => {
      let settled = false;
      const finish = (value: string) => {
        if (settled) return;
        settled = true;
        this.#asking = undefined;
        this.#questions.delete(withdraw);
        input.off("data", onData);
        this.#settleTerminal();
        resolve(value);
      };
      const onData = (chunk: Uint8Array | string) => {
        const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
        const key = text.toLowerCase();
        if (text === "\x03" || text === "\x04") finish(cancel);
        else if (text === "\r" || text === "\n") finish(fallback);
        else if (keys.includes(key)) finish(key);
      };
      const withdraw = () => finish(cancel);
      if (signal?.aborted) return withdraw();
      signal?.addEventListener("abort", withdraw, { once: true });
      this.#questions.add(withdraw);
      input.setRawMode?.(true);
      input.on("data", onData);
      input.resume();
    });
    this.#output.write(`${chosen}\n`);
    return chosen;
  }

  /** Asks for a line of free text (elicitation forms); `undefined` when cancelled. */
  async ask(question: string, signal?: AbortSignal): Promise<string | undefined> {
    if (!this.interactive) {
      const piped = await this.#readPiped();
      return piped.kind === "line" ? piped.text : undefined;
    }
    if (signal?.aborted) return undefined;
    const withdraw = () => this.#active?.close();
    this.#questions.add(withdraw);
    signal?.addEventListener("abort", withdraw, { once: true });
    try {
      const result = await this.#question(question, false);
      return result.kind === "line" && !signal?.aborted ? result.text : undefined;
    } finally {
      this.#questions.delete(withdraw);
      signal?.removeEventListener("abort", withdraw);
    }
  }

  /**
   * Prints text that arrived on its own (a server event) without garbling the prompt:
   * above the line being typed, which is then drawn again as it was. The line is cleared
   * where the prompt is, so `write` (stderr, perhaps a file) gets only the text.
   */
  interject(text: string, write: (text: string) => void): void {
    const rl = this.#active;
    if (rl) {
      // Without cursor movement, the prompt stays as it is and the text starts below it.
      this.#output.write(this.#redraw ? "\r\x1b[K" : "\n");
      write(text);
      rl.prompt(true);
      return;
    }
    const asking = this.#asking;
    if (asking === undefined) return write(text);
    // The text goes above a one-key question, which is drawn again whole below it. Every row
    // the question takes is erased first: clearing only the cursor's row left the wrapped
    // start of its last line, and the heading, above the text (the question read twice).
    this.#output.write(
      this.#redraw ? eraseRows(screenRows(asking, this.#columns())) : "\n",
    );
    write(text);
    this.#output.write(asking);
  }

  /** Whether a prompt or a one-key question is on the screen (text can go above it). */
  get asking(): boolean {
    return this.#active !== undefined || this.#asking !== undefined;
  }

  /** Ends the prompt being shown as if Ctrl+D was pressed (the session is closing). */
  abortRead(): void {
    this.#active?.close();
    this.#piped?.rl.close();
  }

  /** Releases piped input. */
  close(): void {
    this.#piped?.rl.close();
  }
}

/** The console's width; `Infinity` (nothing wraps) when there is no console. */
function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns || Infinity;
  } catch {
    return Infinity;
  }
}

/** Rows `text` takes on a terminal `columns` wide, the cursor left after its last character. */
export function screenRows(text: string, columns: number): number {
  return text.split("\n").reduce(
    (rows, line) => rows + Math.max(1, Math.ceil(displayWidth(line) / columns)),
    0,
  );
}

/** Moves to the first of the last `rows` rows (the cursor's included) and clears from there. */
function eraseRows(rows: number): string {
  return `\r${rows > 1 ? `\x1b[${rows - 1}A` : ""}\x1b[J`;
}

/** Longest text kept from what is typed while a turn runs. */
const MAX_TYPEAHEAD_CHARS = 4096;

/**
 * `before` with the keys `chunk` holds: printable text kept, Backspace honoured, Enter a
 * space (the line is shown, not sent), escape sequences (arrows) and other controls left
 * out.
 */
export function typedAhead(before: string, chunk: string): string {
  let text = before;
  // deno-lint-ignore no-control-regex -- escape sequences are what is left out
  for (const piece of chunk.replace(/\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|.)?/g, "")) {
    if (piece === "\x7f" || piece === "\b") text = [...text].slice(0, -1).join("");
    else if (piece === "\r" || piece === "\n") {
      text = text && !text.endsWith(" ") ? `${text} ` : text;
    } else if (piece === "\t" || (piece >= " " && !/[\x80-\x9f]/.test(piece))) text += piece;
  }
  return [...text].slice(0, MAX_TYPEAHEAD_CHARS).join("");
}
