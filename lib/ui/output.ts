/**
 * The terminal as patchbay writes to it: answers on stdout, status on stderr, and one
 * spinner line that never collides with either. The spinner runs only when stderr is a
 * terminal and only while the cursor is at the start of a line, so it never overwrites
 * half a streamed line.
 *
 * @module
 */

import { displayWidth, terminalColumns } from "../terminal/terminal.ts";
import { fitLines } from "../text/text.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Redraws per second; fast enough to look alive, slow enough to cost nothing. */
const SPINNER_INTERVAL_MS = 80;
/**
 * How long a wait goes on before the spinner says for how long (`12 s`): a quick answer
 * needs no clock; a tool call that runs on shows it is still counting.
 */
export const SPINNER_ELAPSED_AFTER_MS = 2000;
const CLEAR_LINE = "\r\x1b[K";

/** A sink for text. */
export type Sink = (text: string) => void;

/** Options of {@linkcode TerminalOutput}. */
export interface TerminalOutputOptions {
  /** @default stdout */
  stdout?: Sink;
  /** @default stderr */
  stderr?: Sink;
  /**
   * Draw the spinner: stderr is a terminal that can move its cursor (`canRedraw` of
   * lib/terminal.ts; never on TERM=dumb). @default false
   */
  spinner?: boolean;
  /**
   * The width status text on stderr is fitted to, between words (lib/text.ts `fitLines`),
   * and the spinner's line cut to. @default stderr's terminal width (`Infinity` with a
   * `stderr` sink of one's own, or when stderr is not a terminal: nothing is wrapped)
   */
  columns?: () => number;
  /** The clock of the spinner's elapsed time. @default Date.now */
  now?: () => number;
}

const encoder = new TextEncoder();

/**
 * Whether `error` says the terminal is gone: its window was closed, and writing to it fails
 * with EIO. (A reader that went away, `| head`, is a broken pipe instead, which the command
 * boundary turns into its exit code.)
 */
export function terminalGone(error: unknown): boolean {
  return error instanceof Error && /\(os error 5\)/.test(error.message);
}

/**
 * Writes all of `text` to `file`. Once the terminal is gone, text is dropped: what is left
 * to do (ending the servers, saving the conversation) must not fail on what nobody can see.
 */
const writeAll = (file: { writeSync(p: Uint8Array): number }) => {
  let gone = false;
  return (text: string) => {
    if (gone) return;
    const bytes = encoder.encode(text);
    let written = 0;
    try {
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    } catch (error) {
      if (!terminalGone(error)) throw error;
      gone = true;
    }
  };
};

/** Writes answers and status without the spinner ever garbling them. */
export class TerminalOutput {
  readonly #stdout: Sink;
  readonly #stderr: Sink;
  readonly #spinnerEnabled: boolean;
  readonly #columns: () => number;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** A function label is read at every frame and says its own time (a task's progress). */
  #label: string | (() => string) = "";
  /** When what the spinner waits for began. */
  #since = 0;
  #frame = 0;
  #spinnerShown = false;
  /** Questions on the screen ({@linkcode holdSpinner}); a spin waits while any is. */
  #holds = 0;
  /** A spin asked for while held. */
  #waiting = false;
  /** Whether the last character written (to either stream) ended a line. */
  #atLineStart = true;

  constructor(options: TerminalOutputOptions = {}) {
    this.#stdout = options.stdout ?? writeAll(Deno.stdout);
    this.#stderr = options.stderr ?? writeAll(Deno.stderr);
    this.#spinnerEnabled = options.spinner ?? false;
    this.#columns = options.columns ??
      (options.stderr ? () => Infinity : () => terminalColumns(Deno.stderr));
    this.#now = options.now ?? Date.now;
  }

  /** Writes answer text to stdout. */
  out(text: string): void {
    if (text === "") return;
    this.#hideSpinner();
    this.#stdout(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Writes status text to stderr, each line fitted to the terminal between words. */
  err(text: string): void {
    if (text === "") return;
    this.#hideSpinner();
    this.#stderr(this.#atLineStart ? fitLines(text, this.#columns()) : text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Whether the cursor is at the start of a line (nothing half-written on it). */
  get atLineStart(): boolean {
    return this.#atLineStart;
  }

  /** Ends the current line if something is on it. */
  newline(): void {
    if (!this.#atLineStart) this.out("\n");
  }

  /**
   * Shows (or relabels) the spinner. `since` is when what it waits for began (a tool call's
   * start): after {@linkcode SPINNER_ELAPSED_AFTER_MS} the line says for how long. Without
   * it, a spinner that is already turning keeps its time (a progress update relabels the
   * same wait), and a new one starts now. A function label is read at every frame and
   * carries its own time (a task's progress line), so no clock is added to it.
   */
  spin(label: string | (() => string), since?: number): void {
    this.#label = label;
    if (since !== undefined) this.#since = since;
    else if (this.#timer === undefined) this.#since = this.#now();
    if (!this.#spinnerEnabled) return;
    if (this.#holds > 0) {
      this.#waiting = true;
      return;
    }
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#draw(), SPINNER_INTERVAL_MS);
    }
    this.#draw();
  }

  /**
   * Keeps the spinner off the screen while a question is on it (a server's form): a spin
   * meanwhile is shown once every hold is released. Returns the release.
   */
  holdSpinner(): () => void {
    this.#holds++;
    this.stopSpinner();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0 && this.#waiting) {
        this.#waiting = false;
        this.spin(this.#label);
      }
    };
  }

  /** Removes the spinner. */
  stopSpinner(): void {
    this.#waiting = false;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#hideSpinner();
  }

  #draw(): void {
    if (!this.#atLineStart) return;
    this.#frame = (this.#frame + 1) % FRAMES.length;
    const own = typeof this.#label === "function";
    const label = typeof this.#label === "function" ? this.#label() : this.#label;
    const elapsed = this.#now() - this.#since;
    const clock = !own && elapsed >= SPINNER_ELAPSED_AFTER_MS ? ` ${elapsedText(elapsed)}` : "";
    // One row, whatever the width: a line the terminal wrapped would not be cleared whole.
    const line = fitRow(`${FRAMES[this.#frame]} ${label}`, clock, this.#columns() - 1);
    this.#stderr(`${CLEAR_LINE}${line}`);
    this.#spinnerShown = true;
  }

  #hideSpinner(): void {
    if (!this.#spinnerShown) return;
    this.#stderr(CLEAR_LINE);
    this.#spinnerShown = false;
  }
}

/** `12 s`, `1 min 5 s`: whole seconds, as a clock that counts reads. */
export function elapsedText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** `text` then `tail`, cut (with an ellipsis) so that both fit in `columns`. */
function fitRow(text: string, tail: string, columns: number): string {
  if (!Number.isFinite(columns) || displayWidth(text + tail) <= columns) return text + tail;
  const room = Math.max(1, columns - displayWidth(tail) - 1);
  let kept = "";
  for (const char of text) {
    if (displayWidth(kept + char) > room) break;
    kept += char;
  }
  return `${kept}…${tail}`;
}
