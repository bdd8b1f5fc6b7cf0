/**
 * A small event hub: synchronous listeners, and async iterators for consumers that
 * prefer `for await` (each iterator buffers what it has not read yet).
 *
 * @module
 */

/** Fan-out of events of type `T`. */
export class EventHub<T> {
  #listeners = new Set<(event: T) => void>();
  /** Wakes each open stream when the hub closes. */
  #closers = new Set<() => void>();
  #closed = false;

  /** Calls `listener` for every event until the returned function is called. */
  on(listener: (event: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: T): void {
    if (this.#closed) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // One faulty listener must not keep the event from the others.
      }
    }
  }

  /** Every event from now on, until `signal` aborts or the hub closes. */
  async *stream(signal?: AbortSignal): AsyncGenerator<T> {
    const queue: T[] = [];
    let wake: (() => void) | undefined;
    const notify = () => {
      wake?.();
      wake = undefined;
    };
    const off = this.on((event) => {
      queue.push(event);
      notify();
    });
    const closeListener = () => notify();
    this.#closers.add(closeListener);
    signal?.addEventListener("abort", notify, { once: true });
    try {
      while (true) {
        if (queue.length > 0) {
          yield queue.shift()!;
          continue;
        }
        if (this.#closed || signal?.aborted) return;
        await new Promise<void>((resolve) => wake = resolve);
      }
    } finally {
      off();
      this.#closers.delete(closeListener);
      signal?.removeEventListener("abort", notify);
    }
  }

  /** Ends every stream (after what they buffered) and drops the listeners. */
  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    for (const close of this.#closers) close();
  }
}
