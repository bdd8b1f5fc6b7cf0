/**
 * A bound on a wait in a test: never a claim about speed (that is what `deno task bench`
 * measures), only a way for a test whose awaited event never comes to fail, saying what
 * it waited for, instead of hanging. Tests that check something happens "without waiting
 * for X" make X long (minutes or more) and bound the wait far below it.
 *
 * @module
 */

/** How long a test waits for something that should come in a few seconds at most. */
export const GENEROUS_MS = 60_000;

/**
 * `promise`, or a rejection naming `what` once `ms` passed (`onTimeout` runs first, e.g.
 * to kill a process so nothing is left behind).
 */
export async function bounded<T>(
  promise: Promise<T>,
  what: string,
  ms = GENEROUS_MS,
  onTimeout?: () => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
