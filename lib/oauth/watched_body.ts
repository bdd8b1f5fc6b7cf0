/**
 * A response whose body passes through a watcher chunk by chunk as its reader reads it:
 * nothing is read ahead or held back, and the watcher may stop the body with an error.
 * The OAuth flow bounds answers this way and keeps the documents it reports.
 *
 * @module
 */

/** What watches a body go by. */
export interface BodyWatcher {
  /** Each chunk before the reader gets it; an error returned ends the body with it. */
  chunk(value: Uint8Array): Error | void;
  /** The body ended whole. @default nothing */
  end?(): void;
}

/** `response` with its body passed through `watcher` (as it is, without a body). */
export function watchedBody(response: Response, watcher: BodyWatcher): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        watcher.end?.();
        return controller.close();
      }
      const stop = watcher.chunk(value);
      if (stop) {
        await reader.cancel().catch(() => {});
        return controller.error(stop);
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
