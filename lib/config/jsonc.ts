/**
 * JSON with comments and trailing commas (JSONC), as VS Code, Cursor and gemini-cli read
 * their own settings files, turned into strict JSON for `patchbay mcp import`. Each
 * comment and trailing comma becomes spaces (line breaks kept), so a fault still found is
 * reported at its line and column in the file as written.
 *
 * @module
 */

/** `text` with its comments and trailing commas blanked out; strings are left as they are. */
export function blankJsonComments(text: string): string {
  const out = text.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n" && out[k] !== "\r") out[k] = " ";
  };
  let lastComma = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      lastComma = -1;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      blank(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      blank(i, end < 0 ? text.length : end + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === ",") {
      lastComma = i;
    } else if ((c === "}" || c === "]") && lastComma >= 0) {
      out[lastComma] = " ";
      lastComma = -1;
    } else if (!/\s/.test(c)) {
      lastComma = -1;
    }
  }
  return out.join("");
}
