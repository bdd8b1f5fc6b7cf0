/**
 * Which of a server's tools patchbay offers: the entry's `include_tools` and
 * `exclude_tools`, exact names or `*` globs (`*` matches any run of characters, `?` one),
 * and before both the administrator's policy's `denied_tools` (docs/policy.md), which no
 * entry can offer again.
 *
 * A tool is offered when `include_tools` is absent or one of its patterns matches, and no
 * pattern of `exclude_tools` matches: exclusion wins, so `"include_tools": ["*"],
 * "exclude_tools": ["delete_*"]` offers everything but the deletions. What is not offered
 * does not exist for the model, `/tools`, `tools`, `call` or the approval; calling it by
 * name says it is excluded and by which field (see docs/tools-and-sessions.md).
 *
 * @module
 */

import { type PatchbayError, PolicyRefusedError, ToolExecutionError } from "../errors.ts";
import type { DeniedTools } from "../config/types.ts";
import type { CatalogueTool } from "./types.ts";
import { CONNECTION_STEPS } from "../errors/connection_steps.ts";

/** The two fields of a server entry that choose its tools. */
export interface ToolSelection {
  /** Patterns of the tools to offer; absent: every tool. */
  includeTools?: readonly string[];
  /** Patterns of the tools never to offer; wins over `includeTools`. */
  excludeTools?: readonly string[];
  /** The administrator's policy's `denied_tools` for this server; wins over both. */
  deniedTools?: DeniedTools;
}

/** Why a tool is not offered: the field and the pattern that decided it. */
export interface Withholding {
  field: "include_tools" | "exclude_tools" | "denied_tools";
  /**
   * The pattern that matched (`exclude_tools`; `denied_tools` as written there), or every
   * pattern (`include_tools`).
   */
  patterns: readonly string[];
  /** For `denied_tools`: the policy file. */
  file?: string;
}

/**
 * Whether `name` matches the glob `pattern` (`*` any run, `?` one UTF-16 unit).
 *
 * Not by a regular expression: `name` is a server's (a tool's name, matched by
 * `include_tools`, `exclude_tools` and hook matchers), and a pattern with several stars
 * (`*a*a*a*b`) made V8 backtrack for O(n⁴) steps: 53 s for a 1,000-character name, the
 * event loop held throughout. Here a star only ever resumes from the last one seen, so
 * the work is at most the name's length times the pattern's.
 */
export function globMatches(pattern: string, name: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === name;
  let p = 0;
  let n = 0;
  /** The last star seen, and where in `name` its run ends for now. */
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = n;
    } else if (p < pattern.length && (pattern[p] === "?" || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      // The last star takes one more character; what follows it is tried again from there.
      p = star + 1;
      n = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/** `undefined` when the tool is offered; else the field that withholds it. */
export function withholding(selection: ToolSelection, name: string): Withholding | undefined {
  const denied = selection.deniedTools;
  const refusing = denied?.patterns.find((pattern) => globMatches(pattern.tool, name));
  if (denied && refusing) {
    return { field: "denied_tools", patterns: [refusing.written], file: denied.file };
  }
  const excluded = selection.excludeTools?.find((pattern) => globMatches(pattern, name));
  if (excluded !== undefined) return { field: "exclude_tools", patterns: [excluded] };
  const include = selection.includeTools;
  if (include && !include.some((pattern) => globMatches(pattern, name))) {
    return { field: "include_tools", patterns: include };
  }
  return undefined;
}

/** "excluded by mcpServers.fs.exclude_tools ("write_*")": where to look, in the file's words. */
export function describeWithholding(server: string, why: Withholding): string {
  const patterns = why.patterns.map((p) => JSON.stringify(p)).join(", ");
  if (why.field === "denied_tools") {
    return `refused by the administrator's policy (denied_tools ${patterns} in ${why.file})`;
  }
  return why.field === "exclude_tools"
    ? `excluded by mcpServers.${server}.exclude_tools (${patterns})`
    : `not in mcpServers.${server}.include_tools (${patterns})`;
}

/**
 * A tool the entry does not offer, called by name (`call`, `/call`, a model that guessed);
 * one the administrator's policy refuses (`policy`: its file) says so.
 */
export function withheldError(
  tool: CatalogueTool,
  reason: string,
  policy?: string,
): PatchbayError {
  if (policy !== undefined) {
    return new PolicyRefusedError(
      `Tool '${tool.server}.${tool.originalName}'`,
      policy,
      `the tool is ${reason}, so it is neither offered nor called, and your configuration ` +
        "cannot change that",
    );
  }
  return new ToolExecutionError(
    `${tool.server}/${tool.originalName}`,
    `the tool is ${reason}, so it is not offered`,
    undefined,
    CONNECTION_STEPS.toolFiltered(tool.server),
  );
}

/** A pattern of `include_tools` or `exclude_tools` that matches none of the server's tools. */
export interface UnmatchedPattern {
  server: string;
  field: "include_tools" | "exclude_tools";
  pattern: string;
  /** The tool the pattern was probably meant for, if one looks like it. */
  meant?: string;
}

/**
 * The patterns of `selection` that match none of `names` (the tools `server` lists). An
 * exclusion written `write-file` for a tool named `write_file`, or with the model's
 * `server__tool` name, would otherwise leave the tool offered without a word: the
 * listings name such patterns, with the tool they were probably meant for.
 */
export function unmatchedPatterns(
  server: string,
  selection: ToolSelection,
  names: readonly string[],
): UnmatchedPattern[] {
  const fields = [
    ["include_tools", selection.includeTools ?? []],
    ["exclude_tools", selection.excludeTools ?? []],
  ] as const;
  return fields.flatMap(([field, patterns]) =>
    patterns.filter((pattern) => !names.some((name) => globMatches(pattern, name)))
      .map((pattern) => {
        const meant = names.find((name) => looksLike(pattern, name, server));
        return { server, field, pattern, ...(meant === undefined ? {} : { meant }) };
      })
  );
}

/** Same name but for case, `-`/`_`/`.`, or a `server__`, `server.` or `server/` prefix. */
function looksLike(pattern: string, name: string, server: string): boolean {
  const loose = (text: string) => text.toLowerCase().replace(/[-_.\s]/g, "");
  const bare = [`${server}__`, `${server}.`, `${server}/`]
    .reduce((text, prefix) => text.startsWith(prefix) ? text.slice(prefix.length) : text, pattern);
  return globMatches(loose(bare), loose(name));
}
