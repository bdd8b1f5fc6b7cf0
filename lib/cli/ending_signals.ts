/**
 * The signals that ask patchbay to end. SIGTERM was handled; SIGHUP (the terminal closed,
 * or `kill -HUP`) and SIGQUIT (Ctrl+\) took Deno's default action, which ends the process
 * at once: the servers' process groups, which a terminal's signals do not reach, went on
 * running, and the conversation's last messages were not flushed. Each of them now ends
 * patchbay the way SIGTERM does (see docs/security-limits.md).
 *
 * @module
 */

/** Signals that end patchbay as SIGTERM does, after it ended its servers. */
export const ENDING_SIGNALS: readonly Deno.Signal[] = ["SIGTERM", "SIGHUP", "SIGQUIT"];

const NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 };

/** The exit code shells report for a process ended by `signal` (128 + its number). */
export function signalExitCode(signal: Deno.Signal): number {
  return 128 + (NUMBERS[signal] ?? 15);
}

/** What {@linkcode onEndingSignal} returns. */
export interface EndingListener {
  /** The first ending signal received, if any. */
  readonly received: Deno.Signal | undefined;
  /** Stops listening; the default actions apply again. */
  remove(): void;
}

/**
 * Calls `onEnd` for each ending signal received, instead of the default action. Signals
 * a platform lacks (Windows has no SIGHUP or SIGQUIT) are skipped.
 */
export function onEndingSignal(onEnd: (signal: Deno.Signal) => void): EndingListener {
  let received: Deno.Signal | undefined;
  const added: [Deno.Signal, () => void][] = [];
  for (const signal of ENDING_SIGNALS) {
    const listener = () => {
      received ??= signal;
      onEnd(signal);
    };
    try {
      Deno.addSignalListener(signal, listener);
      added.push([signal, listener]);
    } catch {
      // Not on this platform.
    }
  }
  return {
    get received() {
      return received;
    },
    remove() {
      for (const [signal, listener] of added) Deno.removeSignalListener(signal, listener);
    },
  };
}
