/**
 * Runs one hook command: its input as one JSON object on stdin, its output read back
 * within bounds. The hook is started like a stdio server (`lib/transports/spawn.ts`): a
 * cleared environment with the few variables every server gets, a process group of its
 * own, so that ending it ends everything it started; plus the project folder's variables
 * and the variables its `env` names (docs/hooks.md). It runs in the folder of the file that
 * names it.
 *
 * Every way a hook can go wrong ends here in bounded time: its `timeout` (the whole group
 * is ended: SIGTERM, then SIGKILL), output past {@linkcode MAX_HOOK_STDOUT_BYTES} or
 * {@linkcode MAX_HOOK_STDERR_BYTES} (ended too), a program that cannot start, and what it
 * leaves running holding its pipes after it exited (ended after a short grace).
 *
 * @module
 */

import { resolve } from "node:path";
import { setTimer } from "../async/timers.ts";
import {
  canSignalGroups,
  childEnvironment,
  terminateChild,
  terminateGroup,
} from "../transports/process.ts";
import { HOOK_SHELL, parseHookCommand, PROJECT_DIR_VARIABLES } from "./command_line.ts";
import type { HookCommand } from "./types.ts";

/** Most a hook may print on stdout: its JSON answer (a rewritten input included). */
export const MAX_HOOK_STDOUT_BYTES = 1024 * 1024;

/** Most a hook may print on stderr: a reason for a person and the model to read. */
export const MAX_HOOK_STDERR_BYTES = 64 * 1024;

/** Time an ended hook's process group gets between SIGTERM and SIGKILL. */
const HOOK_KILL_GRACE_MS = 1000;

/**
 * Time a hook's pipes get to close after it exited: what it left running in the background
 * still holds them, and is ended after this.
 */
const PIPE_CLOSE_GRACE_MS = 250;

/** How one run of a hook ended. */
export type HookRun =
  | {
    kind: "exited";
    /** The exit code; with `signal`, the process was killed by it. */
    code: number;
    signal?: string;
    stdout: string;
    stderr: string;
    durationMs: number;
  }
  /** It ran past its `timeout` and was ended. */
  | { kind: "timed_out"; stderr: string; durationMs: number }
  /** It printed more than a stream takes and was ended. */
  | { kind: "flooded"; stream: "stdout" | "stderr"; limitBytes: number; durationMs: number }
  /** Its program could not be started. */
  | { kind: "not_started"; program: string; error: unknown; durationMs: number }
  /** The session's signal ended it (Ctrl+C, the session closing). */
  | { kind: "cancelled"; durationMs: number };

/** Options of {@linkcode runHookCommand}. */
export interface RunHookOptions {
  /** Where `PATH`, `HOME` and the other inherited variables come from. */
  parentEnv: (name: string) => string | undefined;
  /** Ends the hook (and the run resolves `cancelled`). */
  signal?: AbortSignal;
}

/** The program and arguments `hook` is started with. */
export function hookArgv(hook: HookCommand): { program: string; args: string[] } {
  const line = parseHookCommand(hook.command, hook.folder);
  if (line.kind === "shell") return { program: HOOK_SHELL, args: ["-c", hook.command] };
  const [first, ...args] = line.argv;
  // A path is the hook folder's: made absolute so that it is the path the plan grants.
  return { program: first.includes("/") ? resolve(hook.folder, first) : first, args };
}

/** The environment `hook` runs with: the stdio servers' few variables, the project's, `env`. */
export function hookEnvironment(
  hook: HookCommand,
  parentEnv: (name: string) => string | undefined,
): Record<string, string> {
  const project = Object.fromEntries(PROJECT_DIR_VARIABLES.map((name) => [name, hook.folder]));
  return { ...childEnvironment({}, parentEnv), ...project, ...hook.env };
}

/** Runs `hook` with `input` on its stdin; never throws. */
export async function runHookCommand(
  hook: HookCommand,
  input: unknown,
  options: RunHookOptions,
): Promise<HookRun> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const { program, args } = hookArgv(hook);
  if (options.signal?.aborted) return { kind: "cancelled", durationMs: 0 };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: hook.folder,
      env: hookEnvironment(hook, options.parentEnv),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (error) {
    return { kind: "not_started", program, error, durationMs: elapsed() };
  }
  let ended: "timeout" | "stdout" | "stderr" | "cancelled" | undefined;
  const stdout = new BoundedReader(child.stdout, MAX_HOOK_STDOUT_BYTES, () => stop("stdout"));
  const stderr = new BoundedReader(child.stderr, MAX_HOOK_STDERR_BYTES, () => stop("stderr"));
  const outputs = Promise.all([stdout.done, stderr.done]);
  const cancelReading = () => {
    stdout.cancel();
    stderr.cancel();
  };
  let stopping: Promise<void> | undefined;
  const stop = (why: NonNullable<typeof ended>) => {
    if (ended) return;
    ended = why;
    stopping = (async () => {
      await endProcess(child);
      // Something outside the group may still hold a pipe: stop reading it.
      if (!await settles(outputs, PIPE_CLOSE_GRACE_MS)) cancelReading();
    })();
  };
  const timer = setTimer(() => stop("timeout"), hook.timeoutSeconds * 1000);
  const onAbort = () => stop("cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const feeding = feed(child.stdin, JSON.stringify(input));
  try {
    const status = await child.status;
    if (!ended && !await settles(outputs, PIPE_CLOSE_GRACE_MS)) {
      // Exited, but what it started in the background holds its pipes: ended with it.
      if (canSignalGroups()) await terminateGroup(child.pid, HOOK_KILL_GRACE_MS);
      if (!await settles(outputs, PIPE_CLOSE_GRACE_MS)) cancelReading();
    }
    await stopping;
    await outputs;
    await feeding;
    const durationMs = elapsed();
    if (ended === "cancelled") return { kind: "cancelled", durationMs };
    if (ended === "timeout") return { kind: "timed_out", stderr: stderr.text(), durationMs };
    if (ended) {
      const limitBytes = ended === "stdout" ? MAX_HOOK_STDOUT_BYTES : MAX_HOOK_STDERR_BYTES;
      return { kind: "flooded", stream: ended, limitBytes, durationMs };
    }
    return {
      kind: "exited",
      code: status.code,
      ...(status.signal ? { signal: status.signal } : {}),
      stdout: stdout.text(),
      stderr: stderr.text(),
      durationMs,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** Ends a hook's process group (or, where groups cannot be signalled, the hook itself). */
async function endProcess(child: Deno.ChildProcess): Promise<void> {
  if (canSignalGroups()) await terminateGroup(child.pid, HOOK_KILL_GRACE_MS);
  else await terminateChild(child, HOOK_KILL_GRACE_MS);
}

/** Writes the input and closes stdin; a hook that does not read it all is its own business. */
async function feed(stdin: WritableStream<Uint8Array>, text: string): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  } catch {
    // The hook exited (or was ended) without reading everything: EPIPE.
  } finally {
    writer.releaseLock();
  }
}

/** Whether `promise` settles within `ms`. */
async function settles(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise.then(() => true, () => true),
      new Promise<boolean>((resolve) => timer = setTimer(() => resolve(false), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a stream up to `limit` bytes; past it, calls `onOverflow` and stops reading. */
class BoundedReader {
  readonly done: Promise<void>;
  #chunks: Uint8Array[] = [];
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(stream: ReadableStream<Uint8Array>, limit: number, onOverflow: () => void) {
    const reader = stream.getReader();
    this.#reader = reader;
    this.done = (async () => {
      let bytes = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          bytes += value.byteLength;
          if (bytes > limit) {
            onOverflow();
            await reader.cancel().catch(() => {});
            return;
          }
          this.#chunks.push(value);
        }
      } catch {
        // Cancelled, or the pipe broke: what was read is kept.
      }
    })();
  }

  /** Stops reading (the pipe is held by something that outlived the hook). */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }

  /** What was read, as text (bytes that are not UTF-8 become U+FFFD). */
  text(): string {
    const all = new Uint8Array(this.#chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, at);
      at += chunk.byteLength;
    }
    return new TextDecoder().decode(all);
  }
}
