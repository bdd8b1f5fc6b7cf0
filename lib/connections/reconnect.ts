/**
 * Restarts after a lost connection: the backoff policies of each transport, the series of
 * attempts they make ({@linkcode RestartSeries}: which attempt comes next, when, and its
 * timer), and the remedy of a server being restarted, which says that patchbay keeps
 * trying.
 *
 * @module
 */

import { ServerConnectError } from "../errors.ts";
import type { PatchbayError } from "../errors.ts";
import { timerDelay } from "../async/timers.ts";
import type { RetryStatus } from "./types.ts";
import { CONNECTION_STEPS } from "../errors/connection_steps.ts";

/** Restarts after a lost connection. */
export interface BackoffPolicy {
  /** Wait before the first attempt. */
  initialDelayMs: number;
  /** Each further wait is this many times the previous one. */
  factor: number;
  /** Longest wait. */
  maxDelayMs: number;
  /** Attempts before the server is marked failed (then only /refresh retries). */
  maxAttempts: number;
  /** A connection that lived this long starts a fresh series of attempts when lost. */
  stableAfterMs: number;
}

/**
 * stdio servers: 0.5, 1, 2, 4, 8, 16 s: about half a minute of attempts, then `failed`
 * (a process that keeps dying is not started forever).
 */
export const RECONNECT_BACKOFF: BackoffPolicy = {
  initialDelayMs: 500,
  factor: 2,
  maxDelayMs: 30_000,
  maxAttempts: 6,
  stableAfterMs: 60_000,
};

/**
 * streamable HTTP and SSE servers: the same series, then every 30 s for as long as the
 * session lasts. A remote server may come back at any time (a deploy, a restart), and
 * trying costs one refused connection.
 */
export const NETWORK_RECONNECT_BACKOFF: BackoffPolicy = {
  ...RECONNECT_BACKOFF,
  maxAttempts: Number.POSITIVE_INFINITY,
};

/** The next restart of a series: how long to wait, and what status shows meanwhile. */
export interface RestartPlan {
  delay: number;
  status: RetryStatus;
}

/**
 * One server's series of restarts under its {@linkcode BackoffPolicy}: the attempts made
 * so far, the restart that comes next (shown by `/connections`) and the timer that waits
 * for it.
 */
export class RestartSeries {
  readonly policy: BackoffPolicy;
  /** Restarts started in this series. */
  #attempts = 0;
  #timer?: ReturnType<typeof setTimeout>;
  /** The restart that comes next (or runs now) while the server is `reconnecting`. */
  next?: RetryStatus;

  constructor(policy: BackoffPolicy) {
    this.policy = policy;
  }

  /** Restarts started in this series. */
  get attempts(): number {
    return this.#attempts;
  }

  /** A fresh series: a connection asked for (connect, `/refresh`), or one that had lived long. */
  restart(): void {
    this.#attempts = 0;
  }

  /** A connection lost after living `ms`: a stable one starts a fresh series. */
  lostAfter(ms: number): void {
    if (ms >= this.policy.stableAfterMs) this.#attempts = 0;
  }

  /** The next restart of the series, or `undefined` when the series is used up. */
  plan(): RestartPlan | undefined {
    const policy = this.policy;
    if (this.#attempts >= policy.maxAttempts) return undefined;
    const delay = Math.min(
      policy.initialDelayMs * policy.factor ** this.#attempts,
      policy.maxDelayMs,
    );
    return {
      delay,
      status: {
        attempt: this.#attempts + 1,
        ...(Number.isFinite(policy.maxAttempts) ? { maxAttempts: policy.maxAttempts } : {}),
        nextAt: new Date(Date.now() + delay),
      },
    };
  }

  /** Waits for `plan`'s restart, then calls `run` (unless cancelled meanwhile). */
  wait(plan: RestartPlan, run: () => void): void {
    this.#attempts++;
    this.next = plan.status;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      run();
    }, timerDelay(plan.delay));
  }

  /** The restart that was waited for runs now: it has no time left to show. */
  running(status: RetryStatus = { attempt: 1, ...this.next }): void {
    this.next = { ...status, nextAt: undefined };
  }

  /** Stops the wait for the next restart, if one is running. */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * A diagnosed failure of a server being restarted: its remedy (written for a server that
 * did not start) also says that patchbay keeps trying.
 */
export function whileRestarting(error: PatchbayError): PatchbayError {
  if (!(error instanceof ServerConnectError) || error.constructor !== ServerConnectError) {
    return error;
  }
  return new ServerConnectError(error.server, {
    reason: error.reason,
    remedy: CONNECTION_STEPS.whileRestarting(error.remedies),
    details: [...error.details],
    cause: error.cause,
  });
}
