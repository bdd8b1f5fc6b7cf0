/**
 * Reads the administrator's policy file from its fixed place (`place.ts`). No file: no
 * policy. A file patchbay cannot use fails closed: one it may not read (the operating
 * system's refusal, or Deno's), one others than its owner may write (anyone could loosen
 * it: the check of lib/shared_writable.ts), one not a regular file, too large, not UTF-8,
 * not JSON, or breaking its schema ({@linkcode ManagedFileSchema}, every problem named by
 * field and line) stops patchbay with a {@linkcode PolicyInvalidError}, since running
 * without it would be running under a looser policy than the administrator wrote.
 *
 * @module
 */

import { MAX_CONFIG_BYTES, readBoundedFile } from "../files/bounded_read.ts";
import { type JsonParseResult, type JsonValue, parseJson } from "../config/json.ts";
import { ProblemList } from "../config/problem_list.ts";
import { renderProblems, sortProblems } from "../config/problems.ts";
import { decodeUtf8 } from "../config/utf8.ts";
import { type FieldPath } from "../config/problem_list.ts";
import { KNOWN_KEYS, knownKeys, parseSection } from "../config/zod_issues.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { PatchbayError, PolicyInvalidError, SharedWritableError } from "../errors.ts";
import { refuseSharedWritable } from "../files/shared_writable.ts";
import type { ServerRules } from "./match.ts";
import { managedFile } from "./place.ts";
import { ManagedFileSchema, SettingsSchema } from "./schema.ts";

/** The administrator's policy, as its file says it. */
export interface Policy {
  /** The policy file. */
  file: string;
  /** Its text and parse, for the settings' problems to point into. */
  text: string;
  parsed: JsonParseResult;
  rules: ServerRules;
  /** `denied_tools`, as written (`server.tool` globs). */
  deniedTools: readonly string[];
  /** `require_approval`. */
  requireApproval: boolean;
  /** `settings`, as written: top-level configuration blocks forced over the user's. */
  settings?: Record<string, JsonValue>;
}

/** What the policy file is called in messages. */
const WHAT = "the administrator's policy file";

/**
 * The policy at `path` (the platform's fixed place; tests of this function alone name a
 * file of theirs), `undefined` when there is no file there; throws
 * {@linkcode PolicyInvalidError} when there is one patchbay cannot use.
 */
export async function readPolicy(path: string = managedFile()): Promise<Policy | undefined> {
  if (!present(path)) return undefined;
  try {
    refuseSharedWritable(path, WHAT);
  } catch (error) {
    if (!(error instanceof SharedWritableError)) throw error;
    throw new PolicyInvalidError(
      path,
      `${error.reason}; a policy others may write is no policy, so patchbay stops rather ` +
        "than ignore it",
      [`the administrator can fix it with: ${error.remedy.replace(/^run /, "")}`],
      error,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFile(path, { what: WHAT, maxBytes: MAX_CONFIG_BYTES });
  } catch (error) {
    throw unreadable(path, error);
  }
  const decoded = decodeUtf8(bytes);
  if ("fault" in decoded) {
    const { message, hint, position } = decoded.fault;
    const problems = [{ path: "", message, hint, position }];
    throw invalid(path, problems, renderProblems(problems, new TextDecoder().decode(bytes)));
  }
  return parsePolicy(decoded.text, path);
}

/** Validates policy text (what {@linkcode readPolicy} does once the file is read). */
export function parsePolicy(text: string, file: string): Policy {
  const parsed = parseJson(text);
  if (parsed.faults.length > 0) {
    const problems = parsed.faults.map((f) => ({
      path: "",
      message: f.message,
      position: f.position,
      hint: f.hint,
    }));
    throw invalid(file, problems, renderProblems(problems, text));
  }
  const list = new ProblemList(parsed);
  for (const duplicate of parsed.duplicates) {
    list.add(
      [...duplicate.path, duplicate.key],
      `duplicate key "${duplicate.key}" (first at line ${duplicate.first.line})`,
      "a JSON reader silently keeps only the last one; remove or rename one of them",
      duplicate.second,
    );
  }
  const value = parsed.value!;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    list.add([], "the policy file must hold a JSON object");
  }
  const policy = list.problems.length === 0
    ? parseSection(list, ManagedFileSchema, value, [], policyKeys)
    : undefined;
  if (!policy || list.problems.length > 0) {
    const problems = sortProblems(list.problems);
    throw invalid(file, problems, renderProblems(problems, text));
  }
  const settings = (value as Record<string, JsonValue>).settings;
  return {
    file,
    text,
    parsed,
    rules: { allowed: policy.allowed_servers, denied: policy.denied_servers },
    deniedTools: policy.denied_tools ?? [],
    requireApproval: policy.require_approval ?? false,
    ...(settings && typeof settings === "object" && !Array.isArray(settings) ? { settings } : {}),
  };
}

/** The fields known at `path` of the policy file, for did-you-mean hints. */
function policyKeys(path: FieldPath): readonly string[] {
  if (path.length === 0) return Object.keys(ManagedFileSchema.shape);
  if (path[0] !== "settings") return ["name", "command", "url"];
  if (path.length === 1) return Object.keys(SettingsSchema.shape);
  const inner = path.slice(1);
  return inner.length === 0 ? KNOWN_KEYS.top : knownKeys(inner);
}

/** Whether something is at `path`; a refusal to look fails closed. */
function present(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    // Whether there is a policy cannot be known: going on as if there were none would
    // let a narrower grant, or a folder made unreadable, switch the policy off.
    throw unreadable(path, error);
  }
}

function unreadable(path: string, error: unknown): PolicyInvalidError {
  if (error instanceof PolicyInvalidError) return error;
  const flag = denoPermissionFlag(error);
  if (flag) {
    return new PolicyInvalidError(
      path,
      `patchbay runs without permission to read it (${flag} is not granted), so it cannot ` +
        "tell what the policy says",
      [
        `start patchbay through its launcher (\`patchbay\`, \`deno task start\`), which grants ` +
        `it, or add ${flag} to the deno command`,
      ],
      error,
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new PolicyInvalidError(
      path,
      "the operating system refuses to let this user read it (or the folder holding it)",
      [
        "the administrator can make it readable by every user: chmod a+r (it must stay " +
        "writable by its owner alone)",
      ],
      error,
    );
  }
  // Not a regular file, or too large: said so by the bounded reader.
  const reason = error instanceof PatchbayError
    ? `${error.message}: ${error.reason}`
    : (error as Error).message;
  return new PolicyInvalidError(path, reason, [], error);
}

function invalid(
  file: string,
  problems: readonly { message: string }[],
  details: string[],
): PolicyInvalidError {
  const count = problems.length === 1 ? problems[0].message : `${problems.length} problems`;
  return new PolicyInvalidError(file, `the file is invalid: ${count}`, details);
}
