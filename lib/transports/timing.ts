/**
 * Waiting with a bound: the few timing helpers the transports and the connection manager
 * share.
 *
 * @module
 */

type Timer = ReturnType<typeof setTimeout>;

/** Resolves after `ms`; early (without error) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer: Timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Where a person's time goes while patchbay waits on a server: a browser login (OAuth).
 * Timeouts measure the server, never the person, so deadlines stop while a login runs.
 */
export interface LoginClock {
  /** Milliseconds spent in logins so far, the one in progress included. */
  readonly loginMs: number;
  /** Settles (never rejects) when the login in progress ends; `undefined` when none runs. */
  readonly loginInProgress: Promise<void> | undefined;
}

/**
 * Calls `expire` once `ms` have passed, not counting the time `clock` spent in logins.
 * Returns the function that cancels it.
 */
export function startDeadline(ms: number, expire: () => void, clock?: LoginClock): () => void {
  const started = Date.now();
  const loginMsAtStart = clock?.loginMs ?? 0;
  let timer: Timer | undefined;
  let cancelled = false;
  const check = async () => {
    const login = clock?.loginInProgress;
    if (login) {
      await login;
      if (cancelled) return;
    }
    const loginMs = (clock?.loginMs ?? 0) - loginMsAtStart;
    const left = ms - (Date.now() - started - loginMs);
    if (left <= 0) return expire();
    timer = setTimeout(check, left);
  };
  timer = setTimeout(check, ms);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}

/**
 * True when `promise` settles (either way) within `ms`, not counting the time `clock`
 * spent in logins.
 */
export async function settlesWithin(
  promise: Promise<unknown>,
  ms: number,
  clock?: LoginClock,
): Promise<boolean> {
  let cancel: (() => void) | undefined;
  const timeout = new Promise<false>((resolve) => {
    cancel = startDeadline(ms, () => resolve(false), clock);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    cancel?.();
  }
}

/** `promise`, or a rejection with `error()` once `ms` have passed. */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  error: () => Error = () => new Error(`no answer within ${ms / 1000} s`),
): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => timer = setTimeout(() => reject(error()), ms));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
