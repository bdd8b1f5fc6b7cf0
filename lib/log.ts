/**
 * The log: one file (default `~/.local/state/patchbay/patchbay.log`), four levels, every
 * line redacted before it is written. `--debug` (or `/debug`) lowers the level to debug
 * and mirrors lines to stderr.
 *
 * Writes are synchronous appends of whole lines: a crash never leaves half a line, and a
 * log call never reorders with the output around it.
 *
 * @module
 */

import { dirname } from "node:path";
import { DEFAULTS } from "./defaults.ts";
import { Redactor } from "./redact.ts";

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
  /** Why the file could not be opened, if it could not. */
  readonly openError: Error | undefined;

  constructor(options: LoggerOptions = {}) {
    this.redactor = options.redactor ?? new Redactor();
    this.#level = options.level ?? "info";
    this.#mirror = options.mirror ?? false;
    this.#mirrorTo = options.mirrorTo ??
      ((line) => Deno.stderr.writeSync(encoder.encode(line + "\n")));
    if (options.file) {
      try {
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
    const line = this.redactor.redact(
      `${new Date().toISOString()} ${
        level.toUpperCase().padEnd(5)
      } [${component}] ${message}${extra}`,
    );
    if (this.#file) {
      try {
        this.#file.writeSync(encoder.encode(line + "\n"));
      } catch {
        // A full disk must not take the session down; the mirror still shows the line.
      }
    }
    if (this.#mirror) this.#mirrorTo(line);
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
}

function openLogFile(path: string): Deno.FsFile {
  // Creating an existing folder would need write access to its parent under Deno's
  // sandbox; only create it when it is missing, so a denial names the file itself.
  if (!isDirectory(dirname(path))) Deno.mkdirSync(dirname(path), { recursive: true });
  try {
    if (Deno.statSync(path).size > DEFAULTS.log.rotateBytes) Deno.renameSync(path, `${path}.1`);
  } catch {
    // No file yet.
  }
  // 0600: the log can hold server output and request details even after redaction.
  return Deno.openSync(path, { create: true, append: true, mode: 0o600 });
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
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
