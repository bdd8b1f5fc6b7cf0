/**
 * The log: one file (default `~/.local/state/patchbay/patchbay.log`), four levels, every
 * line redacted and its control characters escaped before it is written. `--debug` (or `/debug`) lowers the level to debug
 * and mirrors lines to stderr.
 *
 * Writes are synchronous appends of whole lines: a crash never leaves half a line, and a
 * log call never reorders with the output around it. The log is bounded: the file is
 * rotated by size while running (`DEFAULTS.log.rotateBytes` × `DEFAULTS.log.files` at
 * most), and a source that floods it (a server writing 300 MB to stderr) is cut to
 * `DEFAULTS.log.linesPerSecond` by a {@linkcode LineBudget}.
 *
 * @module
 */

import { dirname } from "node:path";
import { DEFAULTS } from "../defaults.ts";
import { Redactor } from "../redact/redact.ts";
import { showControls } from "../terminal/terminal.ts";
import { setTimer } from "../async/timers.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Options of {@linkcode Logger}. */
export interface LoggerOptions {
  /** Log file path; `undefined` logs nowhere but the mirror. */
  file?: string;
  /** @default "info" */
  level?: LogLevel;
  /** Also write lines to stderr. @default false */
  mirror?: boolean;
  /** Shared redactor; secrets registered on it are hidden in every line. */
  redactor?: Redactor;
  /** Where mirrored lines go. @default stderr */
  mirrorTo?: (line: string) => void;
  /** @default DEFAULTS.log.rotateBytes */
  rotateBytes?: number;
  /** Files kept, the current one included. @default DEFAULTS.log.files */
  files?: number;
}

/** A logger scoped to one component (`logger.child("conn:fs")`). */
export interface Log {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(component: string): Log;
}

const encoder = new TextEncoder();

/** The process-wide log sink. */
export class Logger {
  readonly redactor: Redactor;
  #file: Deno.FsFile | undefined;
  #path: string | undefined;
  #level: LogLevel;
  #mirror: boolean;
  #mirrorTo: (line: string) => void;
  readonly #rotateBytes: number;
  readonly #files: number;
  /** Why the file could not be opened, if it could not. */
  readonly openError: Error | undefined;

  constructor(options: LoggerOptions = {}) {
    this.redactor = options.redactor ?? new Redactor();
    this.#level = options.level ?? "info";
    this.#mirror = options.mirror ?? false;
    this.#mirrorTo = options.mirrorTo ??
      ((line) => Deno.stderr.writeSync(encoder.encode(line + "\n")));
    this.#rotateBytes = options.rotateBytes ?? DEFAULTS.log.rotateBytes;
    this.#files = Math.max(1, options.files ?? DEFAULTS.log.files);
    if (options.file) {
      try {
        ensureFolder(options.file);
        if (fileSize(options.file) > this.#rotateBytes) {
          try {
            shiftFiles(options.file, this.#files);
          } catch {
            // Not allowed to rename: the first write empties the file instead (#rotate).
          }
        }
        this.#file = openLogFile(options.file);
        this.#path = options.file;
      } catch (error) {
        this.openError = error as Error;
      }
    }
  }

  /** The file being written, if any. */
  get path(): string | undefined {
    return this.#path;
  }

  get level(): LogLevel {
    return this.#level;
  }

  /** Debug mode: debug level and lines mirrored to stderr. */
  get debugMode(): boolean {
    return this.#level === "debug" && this.#mirror;
  }

  setDebug(on: boolean): void {
    this.#level = on ? "debug" : "info";
    this.#mirror = on;
  }

  /** Mirroring on/off independently of the level. */
  setMirror(on: boolean): void {
    this.#mirror = on;
  }

  /** Where mirrored lines go from now on (the REPL routes them around its spinner). */
  setMirrorSink(sink: (line: string) => void): void {
    this.#mirrorTo = sink;
  }

  write(level: LogLevel, component: string, message: string, fields?: Record<string, unknown>) {
    if (RANK[level] < RANK[this.#level]) return;
    const extra = fields && Object.keys(fields).length > 0 ? " " + safeJson(fields) : "";
    // One entry, one line, no terminal control: a server's text (its log notifications,
    // its stderr) reaches this file and, with --debug, the terminal. Escaped, not dropped,
    // so the log still shows what was sent.
    const line = showControls(
      this.redactor.redact(
        `${new Date().toISOString()} ${
          level.toUpperCase().padEnd(5)
        } [${component}] ${message}${extra}`,
      ),
      "\t",
    );
    if (this.#file) {
      try {
        const bytes = encoder.encode(line + "\n");
        // The file's own size: another patchbay process may write to it too.
        const size = this.#file.statSync().size;
        if (size > 0 && size + bytes.length > this.#rotateBytes) this.#rotate();
        this.#file.writeSync(bytes);
      } catch {
        // A full disk must not take the session down; the mirror still shows the line.
      }
    }
    if (this.#mirror) {
      try {
        this.#mirrorTo(line);
      } catch {
        // A terminal that is gone (its window closed: writes fail) must not fail whatever
        // was being logged, such as the ending of the servers; the file keeps the line.
      }
    }
  }

  child(component: string): Log {
    const log = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) =>
      this.write(level, component, message, fields);
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (sub) => this.child(`${component}:${sub}`),
    };
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // Already closed.
    }
    this.#file = undefined;
  }

  /**
   * Starts a new file: the older ones move up one number and the oldest is dropped. When
   * another patchbay process rotated meanwhile, the file at the path is already new and is
   * only reopened. When the files cannot be renamed (no permission for `.1`), the file is
   * emptied instead: the bound on disk use holds either way.
   */
  #rotate(): void {
    const path = this.#path!;
    const file = this.#file!;
    let ours = true;
    try {
      ours = Deno.statSync(path).ino === file.statSync().ino;
    } catch {
      ours = false; // The path is gone: someone moved it.
    }
    if (ours) {
      try {
        shiftFiles(path, this.#files);
      } catch (error) {
        file.truncateSync(0);
        const notice = encoder.encode(
          `${new Date().toISOString()} WARN  [log] the log passed ${this.#rotateBytes} bytes ` +
            `and could not be rotated (${(error as Error).message}); older lines were dropped\n`,
        );
        file.writeSync(notice);
        return;
      }
    }
    file.close();
    this.#file = openLogFile(path);
  }
}

/** The folder of the log, created when missing. */
function ensureFolder(path: string): void {
  // Creating an existing folder would need write access to its parent under Deno's
  // sandbox; only create it when it is missing, so a denial names the file itself.
  if (!isDirectory(dirname(path))) Deno.mkdirSync(dirname(path), { recursive: true });
}

function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0; // No file yet.
  }
}

/** `path.(n-1)` dropped, each `path.i` → `path.(i+1)`, `path` → `path.1`. */
function shiftFiles(path: string, files: number): void {
  if (files <= 1) {
    Deno.removeSync(path);
    return;
  }
  for (let i = files - 1; i >= 1; i--) {
    const from = i === 1 ? path : `${path}.${i - 1}`;
    try {
      Deno.renameSync(from, `${path}.${i}`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

function openLogFile(path: string): Deno.FsFile {
  // 0600: the log can hold server output and request details even after redaction.
  return Deno.openSync(path, { create: true, append: true, mode: 0o600 });
}

/** How many lines a source may log, and per how long. */
export interface LineRate {
  lines: number;
  windowMs: number;
}

/** The rate every flooding source is held to (`DEFAULTS.log.linesPerSecond`). */
export const LOG_LINE_RATE: LineRate = { lines: DEFAULTS.log.linesPerSecond, windowMs: 1000 };

/**
 * Holds one source of log lines (a server's stderr, its log notifications) to a rate: at
 * most `rate.lines` per window are admitted; the others are dropped and counted, and the
 * count is reported once per window through `onDropped` (before the next admitted line,
 * or when the window ends), so the log says how much is missing.
 */
export class LineBudget {
  readonly #rate: LineRate;
  readonly #onDropped: (count: number) => void;
  #windowStart = -Infinity;
  #count = 0;
  #dropped = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(onDropped: (count: number) => void, rate: LineRate = LOG_LINE_RATE) {
    this.#rate = rate;
    this.#onDropped = onDropped;
  }

  /** Whether one more line may be logged now. */
  admit(): boolean {
    const now = performance.now();
    if (now - this.#windowStart >= this.#rate.windowMs) {
      this.flush();
      this.#windowStart = now;
      this.#count = 0;
    }
    if (this.#count < this.#rate.lines) {
      this.#count++;
      return true;
    }
    if (this.#dropped++ === 0) {
      this.#timer = setTimer(() => this.flush(), this.#windowStart + this.#rate.windowMs - now);
      // A pending report must not keep a finished command alive.
      Deno.unrefTimer(this.#timer as unknown as number);
    }
    return false;
  }

  /** Reports lines dropped and not reported yet (call it when the source ends). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#dropped === 0) return;
    const count = this.#dropped;
    this.#dropped = 0;
    this.#onDropped(count);
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (error) {
    // Granted the file but not its folder (the plan of `patchbay permissions`): opening
    // the file says whether the folder is there.
    return error instanceof Deno.errors.NotCapable;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(
      value,
      (_key, v) => v instanceof Error ? { name: v.name, message: v.message } : v,
    );
  } catch {
    return String(value);
  }
}

/** A log that discards everything (tests of pure modules, and before start-up). */
export const silentLog: Log = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLog,
};
