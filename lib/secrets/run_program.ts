/**
 * Running a program whose output is a secret: a headers helper, the model key's helper, the
 * keychain's own tool. Each run is bounded: in time (when it passes, the program's process
 * group is ended and its pipes are let go, so a descendant holding them open cannot keep
 * patchbay waiting), in output (stdout up to a cap, refused beyond it; stderr's last
 * kilobytes kept for the message), and in what it inherits (a cleared environment: only
 * what the caller passes). It gets no standard input.
 *
 * What it printed is returned as it is; what it means is the caller's to judge.
 *
 * @module
 */

import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { setTimer } from "../async/timers.ts";
import { delay } from "../async/delay.ts";
import { canSignalGroups, terminateChild, terminateGroup } from "../transports/process.ts";

/** A program as it is started. */
export interface ProgramSpec {
  command: string;
  args: readonly string[];
  /** The whole environment it gets. */
  env: Record<string, string>;
  cwd?: string;
}

/** The bounds of one run. */
export interface RunBounds {
  timeoutMs: number;
  /** Largest stdout read; a program printing more is ended and refused. */
  maxStdoutBytes: number;
  /** Ends the run early (patchbay closing, a skipped server). */
  signal?: AbortSignal;
}

/** Why a run gave no usable output. */
export type RunFailure =
  /** No such program (on PATH, or at the path given). */
  | { kind: "not_found" }
  /** The operating system refused to start it (not executable, a folder). */
  | { kind: "not_executable"; detail: string }
  /** Deno did not grant running it (`flag` is the grant that would). */
  | { kind: "not_granted"; flag: string }
  /** It ran past `timeoutMs`, and was ended. */
  | { kind: "timeout"; seconds: number }
  /** It printed more than `maxStdoutBytes`, and was ended. */
  | { kind: "too_large"; limit: number }
  /** It ended unsuccessfully: an exit status, or a signal. */
  | { kind: "exit"; code: number; signal?: string }
  /** The caller's signal ended the run. */
  | { kind: "cancelled" };

/** What a run gave: its stdout, or why there is none; stderr's tail either way. */
export type RunResult =
  | { ok: true; stdout: Uint8Array; stderr: string }
  | { ok: false; failure: RunFailure; stderr: string };

/** How much of stderr is kept: its end, where programs say what went wrong. */
export const STDERR_TAIL_BYTES = 2048;

/** Time the process group gets between SIGTERM and SIGKILL when a run is ended. */
const TERM_GRACE_MS = 1000;

/** Time the pipes get to close after the process ended (descendants may hold them). */
const PIPE_GRACE_MS = 500;

/** Runs `spec` within `bounds`. Never throws for the program's sake; see {@linkcode RunResult}. */
export async function runProgram(spec: ProgramSpec, bounds: RunBounds): Promise<RunResult> {
  if (bounds.signal?.aborted) return { ok: false, failure: { kind: "cancelled" }, stderr: "" };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(spec.command, {
      args: [...spec.args],
      env: spec.env,
      clearEnv: true,
      cwd: spec.cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // A process group of its own: ending it reaches what it started, and a Ctrl+C in
      // the terminal reaches patchbay only.
      detached: true,
    }).spawn();
  } catch (error) {
    return { ok: false, failure: spawnFailure(spec.command, error), stderr: "" };
  }
  let ending: RunFailure | undefined;
  const end = (why: RunFailure) => {
    if (ending) return;
    ending = why;
    void stop(child);
  };
  const timer = setTimer(
    () => end({ kind: "timeout", seconds: bounds.timeoutMs / 1000 }),
    bounds.timeoutMs,
  );
  const onAbort = () => end({ kind: "cancelled" });
  bounds.signal?.addEventListener("abort", onAbort, { once: true });
  const stdout = new CappedReader(
    child.stdout,
    bounds.maxStdoutBytes,
    () => end({ kind: "too_large", limit: bounds.maxStdoutBytes }),
  );
  const stderr = new TailReader(child.stderr, STDERR_TAIL_BYTES);
  try {
    const status = await child.status;
    // The program is gone; what it started may still hold the pipes. They get a moment,
    // and are let go after it (or at once when the run was ended).
    const pipes = Promise.all([stdout.done, stderr.done]);
    const closed = await Promise.race([
      pipes.then(() => true),
      ending ? Promise.resolve(false) : delay(PIPE_GRACE_MS).then(() => false),
    ]);
    if (!closed) {
      await Promise.all([stdout.cancel(), stderr.cancel()]);
      // What it left behind holding them is ended with its group, in the background.
      if (!ending) void stop(child);
    }
    const text = stderr.text();
    if (ending) return { ok: false, failure: ending, stderr: text };
    if (!status.success) {
      return {
        ok: false,
        failure: { kind: "exit", code: status.code, signal: status.signal ?? undefined },
        stderr: text,
      };
    }
    return { ok: true, stdout: stdout.bytes(), stderr: text };
  } finally {
    clearTimeout(timer);
    bounds.signal?.removeEventListener("abort", onAbort);
  }
}

/** Ends `child` and its process group (or the child alone, where groups cannot be signalled). */
async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    if (canSignalGroups()) await terminateGroup(child.pid, TERM_GRACE_MS);
    else await terminateChild(child, TERM_GRACE_MS);
  } catch {
    // Already gone.
  }
}

function spawnFailure(command: string, error: unknown): RunFailure {
  const flag = denoPermissionFlag(error);
  if (flag) return { kind: "not_granted", flag };
  if (error instanceof Deno.errors.NotFound) return { kind: "not_found" };
  if (error instanceof Deno.errors.PermissionDenied) {
    return { kind: "not_executable", detail: `${command} may not be executed (permission denied)` };
  }
  return { kind: "not_executable", detail: (error as Error).message ?? String(error) };
}

/** Reads a stream up to `limit` bytes; past it, calls `onOver` and stops keeping bytes. */
class CappedReader {
  readonly done: Promise<void>;
  #chunks: Uint8Array[] = [];
  #size = 0;
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(stream: ReadableStream<Uint8Array>, limit: number, onOver: () => void) {
    const reader = stream.getReader();
    this.#reader = reader;
    this.done = (async () => {
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) return;
          this.#size += value.length;
          if (this.#size > limit) {
            onOver();
            this.#chunks = [];
            return void reader.cancel().catch(() => {});
          }
          this.#chunks.push(value);
        }
      } catch {
        // Cancelled, or the pipe broke: what was read is what there is.
      }
    })();
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.#chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

/** Reads a stream to its end, keeping its last `keep` bytes. */
class TailReader {
  readonly done: Promise<void>;
  #tail = new Uint8Array(0);
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(stream: ReadableStream<Uint8Array>, keep: number) {
    const reader = stream.getReader();
    this.#reader = reader;
    this.done = (async () => {
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) return;
          const joined = new Uint8Array(this.#tail.length + value.length);
          joined.set(this.#tail);
          joined.set(value, this.#tail.length);
          this.#tail = joined.slice(Math.max(0, joined.length - keep));
        }
      } catch {
        // Cancelled, or the pipe broke.
      }
    })();
  }

  text(): string {
    return new TextDecoder().decode(this.#tail).trim();
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}
