/**
 * A remedy as each surface words it, and the two ways of writing one: a text for both
 * surfaces ({@linkcode remedyOf}), or fixed words around other remedies
 * ({@linkcode perSurface}). The words themselves live in the failure table
 * (`./failure_table.ts`) and its step files (`./<area>_steps.ts`).
 *
 * @module
 */

/** Where an error is shown: the interactive client, or a scripting command. */
export type Surface = "repl" | "script";

/** A remedy as each surface words it. */
export interface Remedy {
  /** In the interactive client: may name slash commands (`/refresh`, `/memory`, …). */
  readonly repl: string;
  /** In a scripting command: names no slash command. */
  readonly script: string;
}

/** A remedy: one text for both surfaces, or each surface's own. */
export type RemedyText = string | Remedy;

/** `text` as a {@linkcode Remedy}: the same words on both surfaces when it is one string. */
export function remedyOf(text: RemedyText): Remedy {
  return typeof text === "string" ? { repl: text, script: text } : text;
}

/**
 * A remedy composed of fixed words and other remedies, worded for each surface:
 * `` perSurface`${ROWS.not_running.remedy}; check "url"` ``.
 */
export function perSurface(
  strings: TemplateStringsArray,
  ...parts: readonly (RemedyText | number)[]
): Remedy {
  const word = (surface: Surface) =>
    strings.reduce((text, fixed, i) => {
      const part = parts[i - 1];
      const value = typeof part === "object" ? part[surface] : String(part);
      return text + value + fixed;
    });
  return { repl: word("repl"), script: word("script") };
}
