/**
 * Reading the project's Markdown (README.md and docs/) in tests: pages, list items, and the
 * anchors a heading gets on GitHub and in most Markdown viewers.
 *
 * @module
 */

const root = new URL("../../", import.meta.url);

/** The text of a file of the project, `path` relative to its root (`docs/configuration.md`). */
export function readDoc(path: string): Promise<string> {
  return Deno.readTextFile(new URL(path, root));
}

/** Every Markdown page under `docs/`, as paths relative to the project's root, sorted. */
export async function docPages(): Promise<string[]> {
  const pages: string[] = [];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) pages.push(`docs/${entry.name}`);
  }
  return pages.sort();
}

/** The lines of `markdown` outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text });
  });
  return out;
}

/**
 * The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_` dropped,
 * spaces as `-`; the second heading with the same anchor gets `-1`, the third `-2`.
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, "")
      .replaceAll(" ", "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

/**
 * The list item of `markdown` that starts with `- ${lead}`, its wrapped lines joined by
 * single spaces (the item ends at a blank line or at a line indented no deeper than its
 * bullet), or undefined when there is none.
 */
export function listItem(markdown: string, lead: string): string | undefined {
  const lines = markdown.split("\n");
  const at = lines.findIndex((line) => line.trimStart().startsWith(`- ${lead}`));
  if (at < 0) return undefined;
  const indent = lines[at].length - lines[at].trimStart().length;
  const item = [lines[at].trim()];
  for (const line of lines.slice(at + 1)) {
    const depth = line.length - line.trimStart().length;
    if (line.trim() === "" || depth <= indent) break;
    item.push(line.trim());
  }
  return item.join(" ").slice(2);
}

/** `text` with every run of blanks and line breaks made one space (Markdown rewraps prose). */
export function unwrapped(text: string): string {
  return text.replace(/\s+/g, " ");
}
