/**
 * Edits of a JSON text that keep everything they do not touch as it was written: key
 * order, indentation, line breaks, the final newline. Each edit splices the text at the
 * offsets {@linkcode parseJson} records, and writes the new part in the indentation and
 * line breaks of its neighbours (a one-line object stays on one line, a CRLF file CRLF).
 *
 * @module
 */

import { type JsonParseResult, type JsonSpan, type JsonValue, parseJson, pathKey } from "./json.ts";

/** A path of object keys from the top of the document. */
export type KeyPath = readonly string[];

/** The indentation of a new file, and of files whose indentation cannot be seen. */
const DEFAULT_INDENT = "  ";

/** Sets `key` of the object at `object` to `value`: replaced in place, or appended. */
export function setMember(text: string, object: KeyPath, key: string, value: JsonValue): string {
  const doc = parsed(text);
  const target = objectSpan(doc, object);
  const unit = indentUnit(text, doc);
  const existing = doc.spans.get(pathKey([...object, key]));
  if (existing && existing.key !== undefined) {
    const indent = lineIndent(text, existing.key);
    const inline = !hasLineBreak(text, target.start, target.end);
    return spliceIn(text, existing.start, existing.end, render(value, indent, unit, inline));
  }
  const members = membersOf(doc, object);
  const member = (indent: string, inline: boolean) =>
    `${JSON.stringify(key)}: ${render(value, indent, unit, inline)}`;
  if (members.length === 0) {
    const outer = lineIndent(text, target.start);
    const inner = outer + unit;
    return spliceIn(
      text,
      target.start,
      target.end,
      `{\n${inner}${member(inner, false)}\n${outer}}`,
    );
  }
  const last = members[members.length - 1];
  if (!hasLineBreak(text, target.start, target.end)) {
    return spliceIn(text, last.end, last.end, `, ${member("", true)}`);
  }
  const indent = lineIndent(text, members[0].key!);
  return spliceIn(text, last.end, last.end, `,\n${indent}${member(indent, false)}`);
}

/** Removes `key` from the object at `object`; the text unchanged when it has none. */
export function removeMember(text: string, object: KeyPath, key: string): string {
  const doc = parsed(text);
  const target = objectSpan(doc, object);
  const members = membersOf(doc, object);
  const index = members.findIndex((m) => m.name === key);
  if (index < 0) return text;
  if (members.length === 1) return splice(text, target.start, target.end, "{}");
  const member = members[index];
  // The comma before it goes with it, or, for the first member, the one after it.
  if (index > 0) return splice(text, members[index - 1].end, member.end, "");
  return splice(text, member.key!, members[1].key!, "");
}

/** A JSON text holding `value`, as a new file is written. */
export function newDocument(value: JsonValue): string {
  return pretty(value, "", DEFAULT_INDENT) + "\n";
}

function parsed(text: string): JsonParseResult {
  const doc = parseJson(text);
  if (doc.faults.length > 0 || doc.value === undefined) {
    throw new Error("the text is not valid JSON; it cannot be edited in place");
  }
  return doc;
}

function valueAt(doc: JsonParseResult, path: KeyPath): JsonValue | undefined {
  let value: JsonValue | undefined = doc.value;
  for (const key of path) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, key) ? value[key] : undefined;
  }
  return value;
}

function objectSpan(doc: JsonParseResult, path: KeyPath): JsonSpan {
  const value = valueAt(doc, path);
  const span = doc.spans.get(pathKey(path));
  if (!span || value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${path.join(".") || "the document"} is not an object`);
  }
  return span;
}

/** The object's members in the order the text has them. */
function membersOf(doc: JsonParseResult, path: KeyPath): (JsonSpan & { name: string })[] {
  const value = valueAt(doc, path) as Record<string, JsonValue>;
  return Object.keys(value)
    .map((name) => ({ name, ...doc.spans.get(pathKey([...path, name]))! }))
    .sort((a, b) => a.start - b.start);
}

/** The indentation of one level: that of the top object's first member, else two spaces. */
function indentUnit(text: string, doc: JsonParseResult): string {
  const first = membersOf(doc, [])[0];
  if (!first || !hasLineBreak(text, doc.spans.get(pathKey([]))!.start, first.key!)) {
    return DEFAULT_INDENT;
  }
  return lineIndent(text, first.key!) || DEFAULT_INDENT;
}

/** The white space that begins the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start, offset))![0];
}

function hasLineBreak(text: string, from: number, to: number): boolean {
  return text.slice(from, to).includes("\n");
}

/** `value` as JSON at a member indented by `indent`: one line when `inline`. */
function render(value: JsonValue, indent: string, unit: string, inline: boolean): string {
  if (inline) return JSON.stringify(value, null, 1).replace(/\n\s*/g, " ");
  return pretty(value, indent, unit);
}

/** Widest array of plain values written on one line, as people write `args`. */
const INLINE_ARRAY_WIDTH = 80;

/** JSON over several lines, except arrays of plain values that fit on one. */
function pretty(value: JsonValue, indent: string, unit: string): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = indent + unit;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const plain = value.every((item) => item === null || typeof item !== "object");
    const line = `[${value.map((item) => JSON.stringify(item)).join(", ")}]`;
    if (plain && line.length <= INLINE_ARRAY_WIDTH) return line;
    const items = value.map((item) => inner + pretty(item, inner, unit));
    return `[\n${items.join(",\n")}\n${indent}]`;
  }
  const members = Object.entries(value).map(([key, item]) =>
    `${inner}${JSON.stringify(key)}: ${pretty(item, inner, unit)}`
  );
  return members.length === 0 ? "{}" : `{\n${members.join(",\n")}\n${indent}}`;
}

/** {@linkcode splice} of new text, its line breaks those of the file (CRLF stays CRLF). */
function spliceIn(text: string, start: number, end: number, insert: string): string {
  return splice(text, start, end, text.includes("\r\n") ? insert.replace(/\n/g, "\r\n") : insert);
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}
