/**
 * Deadlines that measure the server, not the person or patchbay itself. While a person
 * logs in (OAuth) or answers a server's question (elicitation), or while the model
 * answers a server's sampling request, the server is waiting on us: that time must not
 * count against its `timeout` or `AgentConfig.tool_call_timeout`, or a form filled in
 * carefully would end in a "Tool timeout" and its answers would go nowhere.
 *
 * @module
 */

import { setTimer } from "./timers.ts";

type Timer = ReturnType<typeof setTimeout>;

/** Time that does not count against a server's deadlines. */
export interface LoginClock {
  /** Milliseconds not to count so far, the stretch in progress included. */
  readonly loginMs: number;
  /** Settles (never rejects) when the stretch in progress ends; `undefined` when none runs. */
  readonly loginInProgress: Promise<void> | undefined;
}

/**
 * Counts the stretches when a server waits on patchbay (its sampling or elicitation
 * request is being answered). Stretches may overlap; time counts once.
 */
export class WaitClock implements LoginClock {
  #open = 0;
  #since = 0;
  #total = 0;
  #ended?: { promise: Promise<void>; resolve: () => void };

  /** Starts a stretch; call the returned function when it ends. */
  begin(): () => void {
    if (this.#open++ === 0) {
      this.#since = Date.now();
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#ended = { promise, resolve };
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.#open > 0) return;
      this.#total += Date.now() - this.#since;
      this.#ended?.resolve();
      this.#ended = undefined;
    };
  }

  get loginMs(): number {
    return this.#total + (this.#open > 0 ? Date.now() - this.#since : 0);
  }

  get loginInProgress(): Promise<void> | undefined {
    return this.#ended?.promise;
  }
}

/** Several clocks as one (their times add up; any stretch in progress holds the deadline). */
export function combineClocks(...clocks: (LoginClock | undefined)[]): LoginClock {
  const present = clocks.filter((c): c is LoginClock => c !== undefined);
  return {
    get loginMs() {
      return present.reduce((sum, clock) => sum + clock.loginMs, 0);
    },
    get loginInProgress() {
      const running = present.map((c) => c.loginInProgress).filter((p) => p !== undefined);
      return running.length === 0 ? undefined : Promise.all(running).then(() => {});
    },
  };
}

/**
 * Calls `expire` once `ms` have passed, not counting the time `clock` holds.
 * Returns the function that cancels it.
 */
export function startDeadline(ms: number, expire: () => void, clock?: LoginClock): () => void {
  const started = Date.now();
  const heldAtStart = clock?.loginMs ?? 0;
  let timer: Timer | undefined;
  let cancelled = false;
  const check = async () => {
    const held = clock?.loginInProgress;
    if (held) {
      await held;
      if (cancelled) return;
    }
    const heldMs = (clock?.loginMs ?? 0) - heldAtStart;
    const left = ms - (Date.now() - started - heldMs);
    if (left <= 0) return expire();
    timer = setTimer(check, left);
  };
  timer = setTimer(check, ms);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
