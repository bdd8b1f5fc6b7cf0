/**
 * Keeps what the UI throws apart from what the model and the tools do.
 *
 * A UI that cannot print (stdout is a closed pipe: `patchbay run "hi" | head -1` gets
 * EPIPE) is neither a failed model request nor a failed tool call: it must not be retried,
 * logged as the provider's fault, counted as a failed request or reported to the model.
 * The guard records the first error the UI throws and aborts its signal, so that the work
 * in progress stops; the agent then brings the conversation to a consistent state and
 * rethrows that error unchanged, for the caller to present.
 *
 * @module
 */

/** Records the UI's first failure for one turn (or one sampling request). */
export class UiGuard {
  readonly #controller = new AbortController();
  #failure: { error: unknown } | undefined;

  /** Aborted once the UI has failed. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the UI has thrown. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Runs a UI call; what it throws is recorded and rethrown (to stop a stream). */
  call<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      this.#record(error);
      throw error;
    }
  }

  /**
   * Runs an asking UI call (an approval) and rethrows its rejection. The rejection is the
   * UI's failure unless `withdrawn` has aborted: then it is the question being withdrawn.
   */
  async ask<T>(run: () => Promise<T>, withdrawn: AbortSignal): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!withdrawn.aborted) this.#record(error);
      throw error;
    }
  }

  /**
   * Runs a UI call that only tells (a notice, a tool's end). What it throws is recorded and
   * not rethrown, so that the code around it can finish its bookkeeping first; once the UI
   * has failed, later calls are skipped.
   */
  tell(run: () => void): void {
    if (this.failed) return;
    try {
      run();
    } catch (error) {
      this.#record(error);
    }
  }

  /** Rethrows the UI's error, if it threw one. */
  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }

  #record(error: unknown): void {
    if (this.#failure) return;
    this.#failure = { error };
    this.#controller.abort(error);
  }
}
