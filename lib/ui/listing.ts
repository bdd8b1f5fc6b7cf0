/**
 * How tools, prompts, resources and their results read on a terminal; shared by the
 * slash commands and the scriptable commands so both print the same thing. Every text
 * from a server is stripped of terminal escapes here; names keep their invisible
 * characters, escaped (`lib/names.ts`), and look-alike names are warned about.
 *
 * @module
 */

import type { GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/client";
import { describeBlock } from "../agent/content.ts";
import type {
  CataloguePrompt,
  CatalogueResource,
  CatalogueResourceTemplate,
} from "../connections/manager.ts";
import type { CatalogueTool, WithheldTool } from "../connections/types.ts";
import type { UnmatchedPattern } from "../connections/tool_filter.ts";
import type { Style } from "../terminal/style.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { abridge, plural, wrapWords } from "../text/text.ts";
import { lookalikeWarnings, showName } from "../text/names.ts";

const clean = (text: unknown) => stripTerminalEscapes(String(text ?? ""));
/** Names are escaped, not stripped: two names that differ must print differently. */
const name = showName;
/**
 * Longest description shown in a listing, in characters: a server's text is untrusted, and
 * one of megabytes would bury the rest of the list (`tools --json` gives it whole).
 * Real descriptions, examples included, stay well below.
 */
export const DESCRIPTION_MAX_CHARS = 2000;
/** Where a description starts, under its tool or prompt. */
const DESCRIPTION_INDENT = "    ";
/** Where a signature too long for a line goes on: beyond its description's indent. */
const SIGNATURE_INDENT = "      ";

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** The description, whole (up to its bound), wrapped between words to `columns`. */
function description(style: Style, text: string | undefined, columns: number): string[] {
  if (!text) return [];
  const flat = clean(text).replace(/\s+/g, " ").trim();
  const shown = flat.length > DESCRIPTION_MAX_CHARS
    ? `${flat.slice(0, DESCRIPTION_MAX_CHARS)}… (${
      (flat.length - DESCRIPTION_MAX_CHARS).toLocaleString("en-US")
    } more characters)`
    : flat;
  return wrapWords(DESCRIPTION_INDENT + shown, columns, DESCRIPTION_INDENT)
    .map((line) => `${DESCRIPTION_INDENT}${style.dim(line.slice(DESCRIPTION_INDENT.length))}`);
}

function warnings(style: Style, kind: string, names: readonly string[]): string[] {
  return lookalikeWarnings(kind, names).map((line) => `  ${style.yellow(`⚠ ${line}`)}`);
}

/**
 * Tools grouped by server: `name(required, optional?)`, then the description, each wrapped
 * between words to `columns` (the terminal's width; `Infinity`: one line each).
 */
export function formatTools(
  tools: readonly CatalogueTool[],
  style: Style,
  columns = Infinity,
): string[] {
  const lines: string[] = [];
  for (const [server, group] of groupBy(tools, (t) => t.server)) {
    lines.push(style.bold(`${name(server)} (${plural(group.length, "tool")})`));
    lines.push(...warnings(style, "tools", group.map((t) => t.originalName)));
    for (const tool of group) {
      const schema = tool.inputSchema as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      const required = schema.required ?? [];
      const optional = Object.keys(schema.properties ?? {}).filter((k) => !required.includes(k));
      const signature = [...required, ...optional.map((o) => `${o}?`)].join(", ");
      lines.push(
        ...wrapWords(
          `  ${style.cyan(name(tool.originalName))}(${name(signature)})`,
          columns,
          SIGNATURE_INDENT,
        ),
      );
      lines.push(...description(style, tool.description, columns));
    }
  }
  return lines;
}

/** Prompts grouped by server, with their arguments (`?` marks optional ones), fitted to `columns`. */
export function formatPrompts(
  prompts: readonly CataloguePrompt[],
  style: Style,
  columns = Infinity,
): string[] {
  const lines: string[] = [];
  for (const [server, group] of groupBy(prompts, (p) => p.server)) {
    lines.push(style.bold(`${name(server)} (${plural(group.length, "prompt")})`));
    lines.push(...warnings(style, "prompts", group.map((p) => p.name)));
    for (const prompt of group) {
      const args = (prompt.arguments ?? []).map((a) => `${a.name}${a.required ? "" : "?"}`).join(
        " ",
      );
      lines.push(
        ...wrapWords(
          `  ${style.cyan(name(prompt.name))}${args ? ` ${name(args)}` : ""}`,
          columns,
          SIGNATURE_INDENT,
        ),
      );
      lines.push(...description(style, prompt.description, columns));
    }
  }
  return lines;
}

/** Resources and resource templates grouped by server. */
export function formatResources(
  resources: readonly CatalogueResource[],
  templates: readonly CatalogueResourceTemplate[],
  style: Style,
): string[] {
  const lines: string[] = [];
  for (const [server, group] of groupBy(resources, (r) => r.server)) {
    lines.push(style.bold(`${name(server)} (${plural(group.length, "resource")})`));
    lines.push(...warnings(style, "resources", group.map((r) => r.uri)));
    for (const r of group) {
      const mime = r.mimeType ? ` (${clean(r.mimeType)})` : "";
      lines.push(`  ${style.cyan(name(r.uri))}  ${style.dim(`${name(r.name)}${mime}`)}`);
    }
  }
  for (const [server, group] of groupBy(templates, (t) => t.server)) {
    lines.push(style.bold(`${name(server)} (${plural(group.length, "resource template")})`));
    for (const t of group) {
      lines.push(`  ${style.cyan(name(t.uriTemplate))}  ${style.dim(name(t.name))}`);
    }
  }
  return lines;
}

/** A resource's contents as sent: text verbatim, binary as its size and a base64 start. */
export function formatResourceContents(result: ReadResourceResult, style: Style): string[] {
  const lines: string[] = [];
  for (const content of result.contents) {
    const mime = content.mimeType ? ` (${showName(content.mimeType)})` : "";
    lines.push(style.dim(`${showName(content.uri)}${mime}`));
    if ("text" in content && typeof content.text === "string") {
      lines.push(clean(content.text));
    } else if ("blob" in content && typeof content.blob === "string") {
      const bytes = Math.floor(content.blob.length * 3 / 4);
      const start = content.blob.slice(0, 60) + (content.blob.length > 60 ? "…" : "");
      lines.push(`[binary content, ${bytes} bytes, base64: ${start}]`);
    }
  }
  return lines;
}

/**
 * A prompt's messages as the text of one user turn: the text alone for one message; for
 * several, each in a `<prompt_message role="…">` element, so that a message's text cannot
 * end its element and pass for a message of another role (its closing tags are broken).
 * With `attached`, an embedded resource is only named (its content travels as an
 * attachment, wrapped as untrusted: lib/repl/prompt_message.ts); else it is written out.
 */
export function promptText(result: GetPromptResult, options: { attached?: boolean } = {}): string {
  const parts = result.messages.map((message) => {
    const content = message.content as { type: string; resource?: { uri: string } };
    // Attached: named here, its content travels wrapped as untrusted. Else described as a
    // tool result's blocks are: a blob as its URI, type and size.
    const text = options.attached && content.type === "resource" && content.resource
      ? `[resource ${content.resource.uri}: attached below, from the server]`
      : describeBlock(message.content);
    if (result.messages.length === 1) return text;
    const role = message.role === "assistant" ? "assistant" : "user";
    const body = text.replace(/<(\/?)(prompt_message)/gi, "<\\$1$2");
    return `<prompt_message role="${role}">\n${body}\n</prompt_message>`;
  });
  return parts.join("\n\n");
}

/** How many characters of a prompt's text are shown before it is sent. */
const PROMPT_PREVIEW_CHARS = 600;

/**
 * A prompt's text as the person sees it before it is sent: abridged, its escapes removed,
 * each line behind a gutter, so that no line of a server's text can pass for one of
 * patchbay's own (an approval, a notice).
 */
export function promptPreview(text: string, style: Style): string {
  const shown = abridge(stripTerminalEscapes(text), PROMPT_PREVIEW_CHARS);
  return shown.split("\n").map((line) => style.dim(`  │ ${line}`)).join("\n");
}

/**
 * One line per server whose entry keeps tools from being offered (`include_tools`,
 * `exclude_tools`), so a shorter list is not mistaken for what the server has; and one per
 * server whose tools the administrator's policy refuses (`denied_tools`), naming its file.
 */
export function withheldLines(withheld: readonly WithheldTool[]): string[] {
  const groups = new Map<string, { server: string; policy?: string; names: string[] }>();
  for (const { tool, policy } of withheld) {
    const key = JSON.stringify([tool.server, policy ?? null]);
    const group = groups.get(key) ?? { server: tool.server, policy, names: [] };
    group.names.push(tool.originalName);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ server, policy, names }) =>
    `${stripTerminalEscapes(server)}: ${names.length} tool${names.length === 1 ? "" : "s"} ${
      policy !== undefined
        ? `refused by the administrator's policy (${policy})`
        : "not offered by its include_tools / exclude_tools"
    } (${abridge(names.map(stripTerminalEscapes).join(", "), 200)})`
  );
}

/**
 * One line per filter pattern that matches none of its server's tools: a misspelt
 * exclusion leaves the tool offered, which the person must hear about.
 */
export function unmatchedLines(unmatched: readonly UnmatchedPattern[]): string[] {
  return unmatched.map(({ server, field, pattern, meant }) =>
    `${stripTerminalEscapes(server)}: ${field} pattern ${
      stripTerminalEscapes(JSON.stringify(pattern))
    } matches none of its tools${
      meant === undefined ? "" : ` (did you mean ${stripTerminalEscapes(JSON.stringify(meant))}?)`
    }${field === "exclude_tools" ? ", so it excludes nothing" : ""}`
  );
}
