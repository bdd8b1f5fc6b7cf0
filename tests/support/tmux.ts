/**
 * Drives a program in a real pseudo-terminal through tmux: type keys, read the screen.
 *
 * Each session uses its own tmux server socket, so tests never see each other's (or the
 * developer's) sessions, and `-f /dev/null` keeps user configuration out.
 *
 * @module
 */

/** Options of {@linkcode TmuxSession.start}. */
export interface TmuxOptions {
  /** The program and its arguments. */
  command: string[];
  /** The program's whole environment (nothing is inherited). */
  env: Record<string, string>;
  cwd: string;
  /** @default 120 */
  width?: number;
  /** @default 40 */
  height?: number;
}

/** Printed after the program ends, followed by its exit status. */
const EXIT_MARKER = "<<exit status ";

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A program running in a tmux pane. */
export class TmuxSession implements AsyncDisposable {
  readonly #socket: string;
  readonly #name = "patchbay";

  private constructor(socket: string) {
    this.#socket = socket;
  }

  /** Starts `command` in a fresh tmux server and pane. */
  static async start(options: TmuxOptions): Promise<TmuxSession> {
    const session = new TmuxSession(`patchbay-test-${crypto.randomUUID().slice(0, 8)}`);
    const env = Object.entries(options.env).map(([k, v]) => shellQuote(`${k}=${v}`));
    // A shell runs the program and prints how it ended: tmux's own record of a dead pane
    // was seen to lag (its child left a zombie) when the program exited quickly.
    const script = `"$@"; status=$?; echo; echo "${EXIT_MARKER}$status"; exec sleep 86400`;
    const line = [
      "exec",
      "env",
      "-i",
      ...env,
      "sh",
      "-c",
      shellQuote(script),
      "sh",
      ...options.command.map(shellQuote),
    ]
      .join(" ");
    await session.#tmux(
      "new-session",
      "-d",
      "-s",
      session.#name,
      "-x",
      String(options.width ?? 120),
      "-y",
      String(options.height ?? 40),
      "-c",
      options.cwd,
      line,
    );
    return session;
  }

  async #tmux(...args: string[]): Promise<string> {
    const { code, stdout, stderr } = await new Deno.Command("tmux", {
      args: ["-L", this.#socket, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    if (code !== 0) throw new Error(`tmux ${args[0]} failed: ${decoder.decode(stderr)}`);
    return decoder.decode(stdout);
  }

  /** Types text literally (no key names interpreted). */
  async type(text: string): Promise<void> {
    await this.#tmux("send-keys", "-t", this.#name, "-l", text);
  }

  /** Presses keys by tmux name: `Enter`, `Tab`, `C-c`, `C-d`, `Up`, `Escape`… */
  async press(...keys: string[]): Promise<void> {
    await this.#tmux("send-keys", "-t", this.#name, ...keys);
  }

  /** Types a line and presses Enter. */
  async submit(text: string): Promise<void> {
    await this.type(text);
    await this.press("Enter");
  }

  /**
   * The visible screen plus scrollback, wrapped lines joined, trailing blanks trimmed.
   * With `escapes`, the text's attributes (colours, bold) are kept as SGR sequences, as
   * tmux renders them (`\x1b[1m\x1b[35m`, not necessarily the program's own bytes). With
   * `rows`, lines the terminal wrapped stay as the rows it shows (to see where they broke).
   */
  async screen(options: { escapes?: boolean; rows?: boolean } = {}): Promise<string> {
    const text = await this.#tmux(
      "capture-pane",
      "-t",
      this.#name,
      "-p",
      ...(options.rows ? [] : ["-J"]),
      ...(options.escapes ? ["-e"] : []),
      "-S",
      "-2000",
    );
    return text.replace(/\s+$/, "");
  }

  /** The pane's title (what an OSC 0/2 sequence from the program would change). */
  async title(): Promise<string> {
    return (await this.#tmux("display-message", "-p", "-t", this.#name, "#{pane_title}")).trim();
  }

  /** The pane's own process (the shell that runs the program, then waits). */
  async panePid(): Promise<number> {
    return Number(await this.#tmux("display-message", "-p", "-t", this.#name, "#{pane_pid}"));
  }

  /**
   * Appends every byte the program writes to the terminal from now on to `file` (raw,
   * escape sequences included): what reached the terminal, not how tmux drew it. The
   * recorder is a `cat` whose command line names `file`.
   */
  async record(file: string): Promise<void> {
    await this.#tmux("pipe-pane", "-t", this.#name, `cat >> ${shellQuote(file)}`);
  }

  /**
   * Waits until the screen matches `pattern` (optionally only the part after `after`
   * characters, to wait for new output) and returns the screen.
   */
  async waitFor(
    pattern: RegExp | string,
    options: { timeoutMs?: number; after?: number } = {},
  ): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    let screen = "";
    while (Date.now() < deadline) {
      screen = await this.screen();
      const tail = screen.slice(options.after ?? 0);
      if (typeof pattern === "string" ? tail.includes(pattern) : pattern.test(tail)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${pattern} on the screen:\n${screen}`);
  }

  /** Waits for the program to exit and returns its exit status. */
  async exitCode(timeoutMs = 20_000): Promise<number> {
    const screen = await this.waitFor(new RegExp(`${EXIT_MARKER}(\\d+)`), { timeoutMs });
    return Number(new RegExp(`${EXIT_MARKER}(\\d+)`).exec(screen)![1]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#tmux("kill-server").catch(() => {});
  }
}
