/**
 * What a hook's run says, read as Claude Code reads it (docs/hooks.md):
 *
 * - exit code 0: success; stdout may hold a JSON object (the fields below); plain text on
 *   stdout is context for the model after `UserPromptSubmit` and `SessionStart`, and only
 *   logged otherwise;
 * - exit code 2: a block; stderr is the reason (what it blocks depends on the event);
 * - any other ending (another exit code, a signal, the timeout, a flood of output, a
 *   program that cannot start, stdout that starts like JSON but is not, or JSON whose
 *   fields have the wrong values): a failure, reported with its cause. The caller decides
 *   what a failure means for its event; for `PreToolUse` it never means "allow".
 *
 * @module
 */

import { abridge } from "../text/text.ts";
import type { HookRun } from "./run_command.ts";
import type { HookEvent } from "./types.ts";

/** What a hook answered (every field optional: a hook that printed nothing said nothing). */
export interface HookAnswer {
  /** Exit code 2, `decision: "block"` or `permissionDecision: "deny"`: the reason. */
  block?: string;
  /** `PreToolUse`: `hookSpecificOutput.permissionDecision` (or the older `decision`). */
  decision?: "allow" | "deny" | "ask";
  /** `permissionDecisionReason` (or `reason`). */
  decisionReason?: string;
  /** `PreToolUse`: `hookSpecificOutput.updatedInput`, the input to run the tool with. */
  updatedInput?: Record<string, unknown>;
  /** `additionalContext`, or plain stdout where that is context: for the model. */
  context?: string;
  /** `continue: false`: the turn ends; `stopReason` is for the person. */
  stop?: { reason?: string };
  /** `systemMessage`: for the person. */
  systemMessage?: string;
  /** `suppressOutput`: the hook's stdout is not logged. */
  suppressOutput?: boolean;
}

/** Why a hook's run counts as failed. */
export interface HookFailure {
  kind: "timeout" | "exit" | "flood" | "not_started" | "garbage";
  /** The cause in words: "it exited with code 1: …". */
  cause: string;
  /** The run, for the specific remedy (a program not found, not executable, not granted). */
  run: HookRun;
}

/** How one hook's run reads. */
export type HookReading =
  | { kind: "answer"; answer: HookAnswer }
  | { kind: "failed"; failure: HookFailure }
  /** Ended by the session's signal: nothing to report. */
  | { kind: "cancelled" };

/** Characters of a hook's stderr quoted in a failure's cause. */
const QUOTED_STDERR_CHARS = 300;

/** Events whose plain stdout (exit 0, not JSON) is context for the model, as in Claude Code. */
const STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"]);

/** Reads `run` of a hook of `event` that ran `timeoutSeconds` at most. */
export function readHookRun(event: HookEvent, run: HookRun, timeoutSeconds: number): HookReading {
  switch (run.kind) {
    case "cancelled":
      return { kind: "cancelled" };
    case "timed_out":
      return failed("timeout", `it did not finish within ${timeoutSeconds} s and was ended`, run);
    case "flooded":
      return failed(
        "flood",
        `it printed more than ${run.limitBytes.toLocaleString("en-US")} bytes on ` +
          `${run.stream} and was ended`,
        run,
      );
    case "not_started":
      return failed("not_started", notStarted(run), run);
    case "exited":
      break;
  }
  if (run.signal) return failed("exit", `it was killed by ${run.signal}${said(run.stderr)}`, run);
  if (run.code === 2) return { kind: "answer", answer: { block: run.stderr.trim() } };
  if (run.code !== 0) {
    return failed("exit", `it exited with code ${run.code}${said(run.stderr)}`, run);
  }
  const text = run.stdout.trim();
  if (!/^[{[]/.test(text)) {
    return {
      kind: "answer",
      answer: STDOUT_IS_CONTEXT.has(event) && text !== "" ? { context: text } : {},
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return failed(
      "garbage",
      `its output starts like JSON but is not JSON (${(error as Error).message})`,
      run,
    );
  }
  const read = readJsonAnswer(event, value);
  return typeof read === "string" ? failed("garbage", `its JSON answer ${read}`, run) : {
    kind: "answer",
    answer: read,
  };
}

function failed(kind: HookFailure["kind"], cause: string, run: HookRun): HookReading {
  return { kind: "failed", failure: { kind, cause, run } };
}

/** `: <stderr>` (abridged), or that it said nothing. */
function said(stderr: string): string {
  const text = stderr.trim().replace(/\s+/g, " ");
  if (text === "") return " and printed nothing on stderr";
  return `: ${abridge(text, QUOTED_STDERR_CHARS)}`;
}

function notStarted(run: Extract<HookRun, { kind: "not_started" }>): string {
  const { error, program } = run;
  if (error instanceof Deno.errors.NotFound) return `'${program}' was not found`;
  if (error instanceof Deno.errors.PermissionDenied) {
    return `'${program}' could not be started: it is not executable (or its folder cannot be read)`;
  }
  if (error instanceof Deno.errors.NotCapable) {
    return `Deno did not grant --allow-run for '${program}'`;
  }
  return `'${program}' could not be started: ${(error as Error)?.message ?? String(error)}`;
}

/** The fields of a JSON answer, or what is wrong with it (`is not an object`, …). */
function readJsonAnswer(event: HookEvent, value: unknown): HookAnswer | string {
  if (!isObject(value)) return "is not a JSON object";
  const answer: HookAnswer = {};
  const text = (field: string, from: Record<string, unknown> = value) => {
    const v = from[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw `has ${field} ${describe(v)}, not a string`;
    return v;
  };
  const flag = (field: string) => {
    const v = value[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "boolean") throw `has ${field} ${describe(v)}, not true or false`;
    return v;
  };
  try {
    if (flag("continue") === false) answer.stop = { reason: text("stopReason") };
    if (flag("suppressOutput")) answer.suppressOutput = true;
    answer.systemMessage = text("systemMessage");
    const reason = text("reason");
    const decision = text("decision");
    if (decision === "block") {
      if (event === "PreToolUse") answer.decision = "deny";
      answer.block = reason ?? "";
      answer.decisionReason = reason;
    } else if (decision === "approve" && event === "PreToolUse") {
      answer.decision = "allow";
      answer.decisionReason = reason;
    } else if (decision !== undefined && decision !== "approve") {
      throw `has decision ${JSON.stringify(decision)} (expected "block" or "approve")`;
    }
    const specific = value.hookSpecificOutput;
    if (specific !== undefined && specific !== null) {
      if (!isObject(specific)) throw `has hookSpecificOutput ${describe(specific)}, not an object`;
      readSpecific(event, specific, answer, text);
    }
  } catch (problem) {
    if (typeof problem === "string") return problem;
    throw problem;
  }
  return withoutUndefined(answer);
}

function readSpecific(
  event: HookEvent,
  specific: Record<string, unknown>,
  answer: HookAnswer,
  text: (field: string, from?: Record<string, unknown>) => string | undefined,
): void {
  const named = text("hookEventName", specific);
  if (named !== undefined && named !== event) {
    throw `is for ${JSON.stringify(named)} (hookSpecificOutput.hookEventName), not ${event}`;
  }
  answer.context = text("additionalContext", specific) ?? answer.context;
  if (event !== "PreToolUse") return;
  const decision = text("permissionDecision", specific);
  if (decision !== undefined) {
    if (decision !== "allow" && decision !== "deny" && decision !== "ask") {
      throw `has permissionDecision ${JSON.stringify(decision)} (expected allow, deny or ask)`;
    }
    answer.decision = decision;
    answer.decisionReason = text("permissionDecisionReason", specific) ?? answer.decisionReason;
    if (decision === "deny") answer.block = answer.decisionReason ?? "";
    else delete answer.block;
  }
  const updated = specific.updatedInput;
  if (updated !== undefined && updated !== null) {
    if (!isObject(updated)) throw `has updatedInput ${describe(updated)}, not an object`;
    answer.updatedInput = updated;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 60)}…` : json;
}

function withoutUndefined(answer: HookAnswer): HookAnswer {
  return Object.fromEntries(
    Object.entries(answer).filter(([, v]) => v !== undefined),
  ) as HookAnswer;
}
