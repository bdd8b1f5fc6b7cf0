/**
 * The `openai` package, loaded at the first model request instead of at start-up (issue
 * 16): it is about a fifth of the interactive client's resident code (8.5 MB measured),
 * and a session that only lists, reads or calls tools, or that waits at the prompt, never
 * needs it.
 *
 * @module
 */

/** The `openai` package's module namespace. */
export type OpenAiModule = typeof import("openai");

let loaded: OpenAiModule | undefined;
let loading: Promise<OpenAiModule> | undefined;

/**
 * The `openai` package, loaded once, on the first call. A failed load (a Deno read denial
 * on the npm cache, say) is not kept: the next call tries again.
 */
export function loadOpenAi(): Promise<OpenAiModule> {
  loading ??= import("openai").then(
    (module) => loaded = module,
    (error) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * The `openai` package if it is loaded already, else `undefined`: an error can only be
 * one of its classes once it is.
 */
export function loadedOpenAi(): OpenAiModule | undefined {
  return loaded;
}
