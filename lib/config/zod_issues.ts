/**
 * zod's issues worded for a person editing the file: the expected type and the value
 * seen, did-you-mean for unknown fields and enum values, durations in their unit, and the
 * rules' custom issues (lib/config/schema.ts {@linkcode RuleParams}) as they ask.
 *
 * @module
 */

import type { z } from "zod";
import { didYouMean } from "../text/text.ts";
import { FIELD_ALIASES, TRANSPORT_ALIASES } from "./aliases.ts";
import type { FieldPath, ProblemList } from "./problem_list.ts";
import {
  AgentSchema,
  AuthSchema,
  ConfigFileSchema,
  DURATION_FIELDS,
  HookCommandSchema,
  HookGroupSchema,
  HooksSchema,
  LlmSchema,
  MemorySchema,
  type RuleParams,
  ServerSchema,
} from "./schema.ts";

/** The fields each part of the file takes, for unknown-field hints. */
export const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  top: Object.keys(ConfigFileSchema.shape),
  LLM: Object.keys(LlmSchema.shape),
  server: Object.keys(ServerSchema.shape),
  auth: Object.keys(AuthSchema.shape),
  AgentConfig: Object.keys(AgentSchema.shape),
  Memory: Object.keys(MemorySchema.shape),
  Hooks: Object.keys(HooksSchema.shape),
  hookGroup: Object.keys(HookGroupSchema.shape),
  hook: Object.keys(HookCommandSchema.shape),
};

/**
 * How the configuration's schemas are run: issues carry the value seen, and a missing
 * field's issue keeps the message its schema gave it (the hint of a required field,
 * lib/config/schema.ts) or has none.
 */
export const PARSE_OPTIONS: z.core.ParseContext<z.core.$ZodIssue> = {
  reportInput: true,
  jitless: true,
  error: (issue) => issue.code === "invalid_type" && issue.input === undefined ? "" : undefined,
};

/**
 * Parses `value` (at `path` in the file) with `schema`; on failure adds its issues to
 * `problems` and returns `undefined`.
 */
export function parseSection<S extends z.ZodType>(
  problems: ProblemList,
  schema: S,
  value: unknown,
  path: FieldPath,
  known: KnownKeys = knownKeys,
): z.output<S> | undefined {
  const result = schema.safeParse(value, PARSE_OPTIONS);
  if (result.success) return result.data;
  reportIssues(problems, result.error.issues, path, known);
  return undefined;
}

/** A section read on without the fields its schema refused ({@linkcode parseSoundFields}). */
export interface SoundFields<T> {
  /** The section parsed (defaults applied) without the refused fields. */
  data: T;
  /** The section as written, without the refused fields. */
  raw: Record<string, unknown>;
  /** The top-level fields that had problems (reported), left out of `data` and `raw`. */
  refused: ReadonlySet<string>;
}

/**
 * Like {@linkcode parseSection}, but a section (an object) with problems is read on: its
 * issues are reported, and it is parsed again without the top-level fields they are about,
 * so the rules that follow still judge the fields that are sound, and a file shows every
 * problem in one pass. `undefined` when even that fails (a required field refused, or the
 * section is not an object). A section with `refused` fields stays invalid: its problems
 * are in `problems`.
 */
export function parseSoundFields<S extends z.ZodType>(
  problems: ProblemList,
  schema: S,
  value: unknown,
  path: FieldPath,
): SoundFields<z.output<S>> | undefined {
  const result = schema.safeParse(value, PARSE_OPTIONS);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    if (!result.success) reportIssues(problems, result.error.issues, path);
    return undefined;
  }
  const raw = value as Record<string, unknown>;
  if (result.success) return { data: result.data, raw, refused: new Set() };
  reportIssues(problems, result.error.issues, path);
  const refused = new Set<string>();
  for (const issue of result.error.issues) {
    const [field] = issue.path;
    if (typeof field === "string") refused.add(field);
    else if (issue.code === "unrecognized_keys") issue.keys.forEach((key) => refused.add(key));
    else return undefined;
  }
  const sound = Object.fromEntries(Object.entries(raw).filter(([key]) => !refused.has(key)));
  const again = schema.safeParse(sound, PARSE_OPTIONS);
  return again.success ? { data: again.data, raw: sound, refused } : undefined;
}

/** Adds zod's `issues` (found at `base` in the file) to `problems`. */
export function reportIssues(
  problems: ProblemList,
  issues: readonly z.core.$ZodIssue[],
  base: FieldPath,
  known: KnownKeys = knownKeys,
): void {
  for (const issue of issues) {
    const path = [...base, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
    const value = issue.input;
    switch (issue.code) {
      case "invalid_type":
        if (value === undefined) problems.missing(path, issue.message || undefined);
        else {
          problems.add(path, `expected ${typeName(issue.expected)}, got ${describeValue(value)}`);
        }
        break;
      case "unrecognized_keys":
        for (const key of issue.keys) {
          const fields = known(path);
          const suggestion = didYouMean(key, fields, FIELD_ALIASES);
          problems.add(
            [...path, key],
            `unknown field "${key}"`,
            suggestion
              ? `did you mean "${suggestion}"?`
              : `known fields${path.length === 0 ? "" : " here"}: ${fields.join(", ")}`,
            problems.keyPos([...path, key]),
          );
        }
        break;
      case "invalid_value": {
        const allowed = issue.values.map(String);
        const isTransport = path.at(-1) === "transport_type";
        const suggestion = typeof value === "string"
          ? (isTransport ? TRANSPORT_ALIASES[value.toLowerCase()] : undefined) ??
            didYouMean(value, allowed)
          : undefined;
        problems.add(
          path,
          `expected one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}, got ${
            describeValue(value)
          }`,
          suggestion
            ? `did you mean "${suggestion}"?`
            : path[0] === "Hooks" && path.at(-1) === "type"
            ? "patchbay runs command hooks only: Claude Code's http, prompt, agent and " +
              "mcp_tool hooks have no counterpart here (docs/hooks.md)"
            : undefined,
        );
        break;
      }
      case "too_small":
        problems.add(
          path,
          issue.origin === "string" || issue.origin === "array"
            ? `must not be empty, got ${describeValue(value)}`
            : `must be ${issue.inclusive ? "at least" : "greater than"} ${issue.minimum}, got ${
              describeValue(value)
            }`,
        );
        break;
      case "too_big": {
        const duration = DURATION_FIELDS.has(String(path.at(-1)));
        const unit = duration ? ` seconds (${describeSeconds(Number(issue.maximum))})` : "";
        problems.add(
          path,
          `must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}${unit}, got ${
            describeValue(value)
          }`,
          duration && typeof value === "number"
            ? durationHint(value, Number(issue.maximum))
            : undefined,
        );
        break;
      }
      case "custom": {
        const { hint, at, kind } = (issue.params ?? {}) as RuleParams;
        if (kind === "missing") problems.missing(path, issue.message || undefined);
        else if (kind === "warning") problems.warn(path, issue.message, hint ?? "");
        else {problems.add(
            path,
            issue.message,
            hint,
            at === "key" ? problems.keyPos(path) : undefined,
          );}
        break;
      }
      default:
        problems.add(path, `${issue.message}, got ${describeValue(value)}`);
    }
  }
}

/** The fields known where an object at `path` sits (for did-you-mean hints). */
export type KnownKeys = (path: FieldPath) => readonly string[];

/** The fields known where an object at `path` of servers_config.json sits. */
export function knownKeys(path: FieldPath): readonly string[] {
  if (path.length === 0) return KNOWN_KEYS.top;
  if (path[0] === "mcpServers") return path.at(-1) === "auth" ? KNOWN_KEYS.auth : KNOWN_KEYS.server;
  if (path[0] === "Hooks") {
    return path.length === 1
      ? KNOWN_KEYS.Hooks
      : path.length === 3
      ? KNOWN_KEYS.hookGroup
      : KNOWN_KEYS.hook;
  }
  return KNOWN_KEYS[String(path[0])] ?? [];
}

function typeName(expected: string): string {
  return ({
    string: "a string",
    number: "a number",
    int: "an integer",
    boolean: "true or false",
    object: "an object",
    array: "an array",
    record: "an object",
  } as Record<string, string>)[expected] ?? expected;
}

/** `null`, `an array`, `an object`, `a string`… */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The value seen, in a few words: `the string "x"`, `the number 3`, `an object`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") {
    return `the string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value)}`;
  }
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "boolean") return `${value}`;
  return describeType(value);
}

/** `86400` → "one day"; the maxima are whole days or years. */
function describeSeconds(seconds: number): string {
  const days = seconds / 86_400;
  if (days >= 365 && Number.isInteger(days / 365)) {
    return days === 365 ? "one year" : `${days / 365} years`;
  }
  if (Number.isInteger(days)) return days === 1 ? "one day" : `${days} days`;
  return `${seconds} s`;
}

/** Why a duration is too long, in the unit people confuse it with. */
function durationHint(value: number, maximum: number): string {
  const days = (value / 86_400).toFixed(1);
  return value % 1000 === 0 && value / 1000 <= maximum
    ? `durations are in seconds: ${value} s is ${days} days; for ${value} ms write ${value / 1000}`
    : `durations are in seconds: ${value} s is ${days} days`;
}
