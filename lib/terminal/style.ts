/**
 * Terminal colours, decided by lib/terminal.ts's `colorEnabled`: off when NO_COLOR is set
 * (https://no-color.org), TERM is dumb, or the stream is not a terminal (unless FORCE_COLOR
 * asks for colour), so piped output and logs never carry escape codes.
 *
 * @module
 */

import { colorEnabled } from "./terminal.ts";

/** Colour helpers bound to one output stream's capabilities. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

/** Whether colour should be used for a stream: {@linkcode colorEnabled} of lib/terminal.ts. */
export { colorEnabled };

/** A {@linkcode Style} that colours only when `enabled`. */
export function createStyle(enabled: boolean): Style {
  const code = (open: number, close: number) => (text: string) =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    bold: code(1, 22),
    dim: code(2, 22),
    red: code(31, 39),
    green: code(32, 39),
    yellow: code(33, 39),
    cyan: code(36, 39),
    magenta: code(35, 39),
  };
}

/** Styles for stdout and stderr as they are now. */
export const stdoutStyle = (): Style => createStyle(colorEnabled(Deno.stdout));
export const stderrStyle = (): Style => createStyle(colorEnabled(Deno.stderr));
