/**
 * The wire trace's writer (docs/trace.md): every JSON-RPC message to and from every
 * server, the HTTP exchanges that carry them and the connection events around them, one
 * JSON object per line, in a file only its owner may read.
 *
 * Every line passes {@linkcode TraceRecorder.mask} (the session's redactor, the same
 * masking as the log and every other surface) before anything else sees it: the file, the
 * lines kept for `/trace show`, and the cut of a long message, which is made after masking
 * so that half a secret cannot survive a cut. Control and invisible format characters are
 * written as JSON `\u` escapes: the file reads back the same, and `cat` of it cannot move
 * a terminal. Requests are paired with their responses (latency on the response line);
 * the file is rotated by size.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import { escapeInvisible } from "../text/json_text.ts";
import { openTraceFile } from "./trace_file.ts";
import { parseTraceparent, type TraceContext } from "../telemetry/ids.ts";
import type { Redactor } from "../redact/redact.ts";
import type {
  MessageLine,
  TraceDirection,
  TraceLine,
  TraceTransport,
  UnstampedLine,
} from "./record.ts";

/** Options of {@linkcode TraceRecorder.open}. */
export interface TraceRecorderOptions {
  /** The masking every line passes. */
  redactor: Redactor;
  /** @default DEFAULTS.trace.rotateBytes */
  rotateBytes?: number;
  /** Files kept, the current one included. @default DEFAULTS.trace.files */
  files?: number;
  /** @default DEFAULTS.trace.maxMessageChars */
  maxMessageChars?: number;
  /** Lines kept in memory for `/trace show`. @default DEFAULTS.trace.recentLines */
  recentLines?: number;
  /** Record model requests too (`--trace-model`). @default false */
  model?: boolean;
  /** With `model`: their request and answer bodies too. @default false */
  modelBodies?: boolean;
  /**
   * Told once, when writing fails (a full disk, an input/output error, a file size limit):
   * recording stops there, the session goes on. @default nothing is told
   */
  onWriteError?: (error: Error) => void;
}

/** A line recorded and not written yet: a message's metadata and JSON text, or a line. */
type Pending =
  | { at: number; head: Omit<MessageLine, "message">; message: unknown }
  | { at: number; line: UnstampedLine };

/**
 * How long a recorded line may wait to be written: lines are masked and written in batches,
 * so that a busy session pays one write per batch rather than one per message.
 */
export const FLUSH_MS = 20;

/** Requests waiting for their response, per recorder; the oldest go past this bound. */
const MAX_PENDING = 10_000;

const encoder = new TextEncoder();

/** A trace file being written. */
export class TraceRecorder {
  readonly path: string;
  readonly model: boolean;
  readonly modelBodies: boolean;
  readonly #redactor: Redactor;
  readonly #rotateBytes: number;
  readonly #files: number;
  readonly #maxChars: number;
  readonly #recentMax: number;
  /** The last lines, as written (masked), for `/trace show`. */
  readonly #recent: string[] = [];
  readonly #pending = new Map<
    string,
    { at: number; method: string; context?: TraceContext }
  >();
  #file: Deno.FsFile | undefined;
  /** Lines recorded and not written yet ({@linkcode flush}). */
  #queue: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #size: number;
  #lines = 0;
  readonly #onWriteError?: (error: Error) => void;
  /** Why writing stopped, once it has (a full disk, a file taken away). */
  writeError?: Error;

  private constructor(path: string, file: Deno.FsFile, options: TraceRecorderOptions) {
    this.path = path;
    this.#file = file;
    this.#size = file.statSync().size;
    this.#redactor = options.redactor;
    this.#rotateBytes = options.rotateBytes ?? DEFAULTS.trace.rotateBytes;
    this.#files = Math.max(1, options.files ?? DEFAULTS.trace.files);
    this.#maxChars = options.maxMessageChars ?? DEFAULTS.trace.maxMessageChars;
    this.#recentMax = options.recentLines ?? DEFAULTS.trace.recentLines;
    this.model = options.model ?? false;
    this.modelBodies = options.modelBodies ?? false;
    this.#onWriteError = options.onWriteError;
  }

  /**
   * Opens (creates, mode 0600, or appends to) the trace file at `path`: a regular file,
   * never through a link, a pipe or a device (`trace_file.ts`). Throws what failed
   * (`TraceFileRefusedError`; a missing permission is a `Deno.errors.NotCapable`).
   */
  static open(path: string, options: TraceRecorderOptions): TraceRecorder {
    return new TraceRecorder(path, openTraceFile(path), options);
  }

  /** Lines written since the file was opened. */
  get lines(): number {
    this.flush();
    return this.#lines;
  }

  /** The last lines recorded (masked), oldest first. */
  recent(): TraceLine[] {
    this.flush();
    return this.#recent.map((text) => JSON.parse(text) as TraceLine);
  }

  /** A JSON-RPC message `dir` on `server`'s `transport`, as written on the wire. */
  message(server: string, transport: TraceTransport, dir: TraceDirection, message: unknown): void {
    const m = message as {
      id?: string | number;
      method?: unknown;
      params?: { _meta?: { traceparent?: unknown } };
      error?: { code?: number; message?: string };
    };
    const hasId = m.id !== undefined && m.id !== null;
    const type: MessageLine["type"] = typeof m.method === "string"
      ? hasId ? "request" : "notification"
      : m.error !== undefined
      ? "error"
      : "result";
    const head: Omit<MessageLine, "message"> = {
      t: "",
      kind: "message",
      server,
      transport,
      dir,
      ...(hasId ? { id: m.id } : {}),
      type,
      bytes: 0,
    };
    if (type === "request") {
      head.method = m.method as string;
      const context = parseTraceparent(m.params?._meta?.traceparent);
      if (context) {
        head.trace_id = context.traceId;
        head.span_id = context.spanId;
      }
      this.#remember(`${server}\u0000${dir}\u0000${String(m.id)}`, m.method as string, context);
    } else if (type === "notification") {
      head.method = m.method as string;
    } else if (hasId) {
      const key = `${server}\u0000${dir === "in" ? "out" : "in"}\u0000${String(m.id)}`;
      const request = this.#pending.get(key);
      if (request) {
        this.#pending.delete(key);
        head.method = request.method;
        head.ms = Math.round((performance.now() - request.at) * 100) / 100;
        if (request.context) {
          head.trace_id = request.context.traceId;
          head.span_id = request.context.spanId;
        }
      }
      if (type === "error") head.error = { code: m.error?.code, message: m.error?.message };
    }
    // Serialized when the batch is written: transports and the SDK never change a message
    // once it is sent or delivered, and the call that sees it does not pay for it.
    this.#enqueue({ at: Date.now(), head, message });
  }

  /** Any line; `t` is filled in when absent. */
  record(line: UnstampedLine): void {
    this.#enqueue({ at: Date.now(), line });
  }

  /**
   * Writes what was recorded and not written yet. Lines are masked and written in batches,
   * at most {@linkcode FLUSH_MS} after the first of them, mostly while patchbay waits for a
   * server: a message costs the call that sees it little more than its serialization.
   * Closing flushes, and so does reading the recent lines.
   */
  flush(): void {
    if (this.#queue.length === 0) return;
    const queue = this.#queue;
    this.#queue = [];
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch: string[] = [];
    for (const item of queue) {
      const text = this.#lineOf(item);
      this.#recent.push(text);
      // Controls and invisible characters as `\u` escapes: `cat` of the file moves no
      // terminal, and it reads back the same (C0 controls JSON escapes itself).
      batch.push(escapeInvisible(text) + "\n");
    }
    if (this.#recent.length > this.#recentMax) {
      this.#recent.splice(0, this.#recent.length - this.#recentMax);
    }
    this.#write(batch);
  }

  #enqueue(item: Pending): void {
    this.#queue.push(item);
    this.#timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** The masked JSON text of a queued line. */
  #lineOf(item: Pending): string {
    const t = new Date(item.at).toISOString();
    if (!("head" in item)) {
      const stamped = { t, ...item.line };
      return this.#maskJson(JSON.stringify(stamped), () => stamped);
    }
    const text = JSON.stringify(item.message) ?? "null";
    const head = { ...item.head, t, bytes: utf8Length(text) };
    // Masked first, then cut: a cut must not leave half a secret unrecognisable.
    let body = this.#maskJson(text, () => JSON.parse(text));
    if (body.length > this.#maxChars) {
      head.cut = { kept: this.#maxChars, chars: body.length };
      body = JSON.stringify(body.slice(0, this.#maxChars));
    }
    const metadata = this.#maskJson(JSON.stringify(head), () => head);
    return `${metadata.slice(0, -1)},"message":${body}}`;
  }

  /**
   * The one masking point of the trace: the JSON text of a line (or of a message) through
   * the session's redactor, the masking of the log and every other surface (registered
   * secrets, `${VAR}` values, tokens, secret shapes), keys and values alike. The text is
   * masked whole, one call per line; where that cannot be exact (a string holding a quote,
   * a backslash or a control character is escaped in JSON, so a secret holding one would
   * not be found in the text), or where a replacement spanning two strings broke the JSON,
   * every string of `value` is masked on its own instead.
   */
  #maskJson(text: string, value: () => unknown): string {
    if (!text.includes("\\")) {
      const masked = this.#redactor.redact(text);
      if (masked === text) return text;
      try {
        JSON.parse(masked);
        return masked;
      } catch {
        // A pattern took in a quote: fall through to string by string.
      }
    }
    return JSON.stringify(this.#redactor.redactValue(maskKeys(value(), this.#redactor)));
  }

  /** Writes what is left, and stops writing; the file is closed. */
  close(): void {
    this.flush();
    try {
      this.#file?.close();
    } catch {
      // Already closed.
    }
    this.#file = undefined;
  }

  #remember(key: string, method: string, context?: TraceContext): void {
    if (this.#pending.size >= MAX_PENDING) {
      // A request never answered (cancelled, or its server gone) must not grow memory.
      this.#pending.delete(this.#pending.keys().next().value!);
    }
    this.#pending.set(key, { at: performance.now(), method, ...(context ? { context } : {}) });
  }

  /** Appends `lines`, in as few writes as the size bound allows. */
  #write(lines: readonly string[]): void {
    if (!this.#file) return;
    try {
      let chunk = "";
      let chunkBytes = 0;
      for (const line of lines) {
        const bytes = utf8Length(line);
        if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes > this.#rotateBytes) {
          this.#append(chunk);
          this.#rotate();
          chunk = "";
          chunkBytes = 0;
        }
        chunk += line;
        chunkBytes += bytes;
      }
      this.#append(chunk);
      this.#lines += lines.length;
    } catch (error) {
      // A full disk must not take the session down: the trace stops, and says why, once.
      this.writeError = error as Error;
      this.close();
      this.#onWriteError?.(this.writeError);
    }
  }

  #append(text: string): void {
    if (text === "") return;
    const bytes = encoder.encode(text);
    let written = 0;
    while (written < bytes.length) written += this.#file!.writeSync(bytes.subarray(written));
    this.#size += bytes.length;
  }

  /** `path` → `path.1` → … ; the oldest dropped; a new file opened. */
  #rotate(): void {
    this.#file!.close();
    if (this.#files <= 1) Deno.removeSync(this.path);
    for (let i = this.#files - 1; i >= 1; i--) {
      const from = i === 1 ? this.path : `${this.path}.${i - 1}`;
      try {
        Deno.renameSync(from, `${this.path}.${i}`);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    this.#file = openTraceFile(this.path);
    this.#size = 0;
  }
}

/** A copy of `value` whose object keys went through the redactor (values are left as they are). */
function maskKeys<T>(value: T, redactor: Redactor): T {
  if (Array.isArray(value)) return value.map((v) => maskKeys(v, redactor)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[redactor.redact(key)] = maskKeys(v, redactor);
    return out as T;
  }
  return value;
}

/** Bytes of `text` in UTF-8, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2; // a surrogate pair: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}
