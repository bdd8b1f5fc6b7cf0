/**
 * The terminal as patchbay writes to it: answers on stdout, status on stderr, and one
 * spinner line that never collides with either. The spinner runs only when stderr is a
 * terminal and only while the cursor is at the start of a line, so it never overwrites
 * half a streamed line.
 *
 * @module
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Redraws per second; fast enough to look alive, slow enough to cost nothing. */
const SPINNER_INTERVAL_MS = 80;
const CLEAR_LINE = "\r\x1b[K";

/** A sink for text. */
export type Sink = (text: string) => void;

/** Options of {@linkcode TerminalOutput}. */
export interface TerminalOutputOptions {
  /** @default stdout */
  stdout?: Sink;
  /** @default stderr */
  stderr?: Sink;
  /** Draw the spinner (stderr is a terminal). @default false */
  spinner?: boolean;
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
  #timer: ReturnType<typeof setInterval> | undefined;
  #label: string | (() => string) = "";
  #frame = 0;
  #spinnerShown = false;
  /** Whether the last character written (to either stream) ended a line. */
  #atLineStart = true;

  constructor(options: TerminalOutputOptions = {}) {
    this.#stdout = options.stdout ?? writeAll(Deno.stdout);
    this.#stderr = options.stderr ?? writeAll(Deno.stderr);
    this.#spinnerEnabled = options.spinner ?? false;
  }

  /** Writes answer text to stdout. */
  out(text: string): void {
    if (text === "") return;
    this.#hideSpinner();
    this.#stdout(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Writes status text to stderr. */
  err(text: string): void {
    if (text === "") return;
    this.#hideSpinner();
    this.#stderr(text);
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
   * Shows (or relabels) the spinner. A function label is read at every frame (a task's
   * elapsed time).
   */
  spin(label: string | (() => string)): void {
    this.#label = label;
    if (!this.#spinnerEnabled) return;
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#draw(), SPINNER_INTERVAL_MS);
    }
    this.#draw();
  }

  /** Removes the spinner. */
  stopSpinner(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#hideSpinner();
  }

  #draw(): void {
    if (!this.#atLineStart) return;
    this.#frame = (this.#frame + 1) % FRAMES.length;
    const label = typeof this.#label === "function" ? this.#label() : this.#label;
    this.#stderr(`${CLEAR_LINE}${FRAMES[this.#frame]} ${label}`);
    this.#spinnerShown = true;
  }

  #hideSpinner(): void {
    if (!this.#spinnerShown) return;
    this.#stderr(CLEAR_LINE);
    this.#spinnerShown = false;
  }
}
