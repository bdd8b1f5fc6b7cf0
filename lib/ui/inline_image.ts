/**
 * Images shown inside the terminal, for terminals that speak an image protocol: kitty's
 * graphics protocol (kitty, Ghostty; PNG only, which it decodes itself) and iTerm2's inline
 * images (iTerm2, WezTerm; any format the terminal decodes). Sixel needs the image decoded
 * and re-encoded by patchbay, which it does not do: in a sixel-only terminal the saved
 * file's path is what is shown.
 *
 * Pure: no I/O.
 *
 * @module
 */

/** An inline image protocol. */
export type ImageProtocol = "kitty" | "iterm2";

/** Base64 characters per kitty graphics chunk (the protocol's limit). */
const KITTY_CHUNK = 4096;

/**
 * The protocol the terminal speaks, from the variables terminals set, or `undefined`.
 * Inside tmux or screen neither reaches the terminal unless passthrough is set up, so
 * none is assumed there.
 */
export function imageProtocol(
  env: (name: string) => string | undefined,
): ImageProtocol | undefined {
  if (env("TMUX") || env("TERM")?.startsWith("screen")) return undefined;
  const program = env("TERM_PROGRAM") ?? "";
  if (env("KITTY_WINDOW_ID") || env("TERM") === "xterm-kitty" || program === "ghostty") {
    return "kitty";
  }
  if (program === "iTerm.app" || program === "WezTerm" || env("LC_TERMINAL") === "iTerm2") {
    return "iterm2";
  }
  return undefined;
}

/**
 * The escape sequence that draws a base64 image, followed by a newline, or `undefined`
 * when the protocol cannot draw this type (kitty draws PNG only).
 */
export function inlineImage(
  protocol: ImageProtocol,
  mimeType: string,
  data: string,
): string | undefined {
  const clean = data.replace(/\s/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return undefined;
  if (protocol === "iterm2") {
    const bytes = Math.floor(clean.length * 3 / 4);
    return `\x1b]1337;File=inline=1;size=${bytes};preserveAspectRatio=1:${clean}\x07\n`;
  }
  if (mimeType.toLowerCase() !== "image/png") return undefined;
  const chunks: string[] = [];
  for (let at = 0; at < clean.length || at === 0; at += KITTY_CHUNK) {
    const chunk = clean.slice(at, at + KITTY_CHUNK);
    const more = at + KITTY_CHUNK < clean.length ? 1 : 0;
    const keys = at === 0 ? `a=T,f=100,m=${more}` : `m=${more}`;
    chunks.push(`\x1b_G${keys};${chunk}\x1b\\`);
  }
  return `${chunks.join("")}\n`;
}
