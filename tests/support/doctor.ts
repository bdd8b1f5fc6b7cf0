/**
 * Runs `patchbay doctor --json` through the real entry point and indexes its results.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type CliResult, type RunOptions, runPatchbay, type Sandbox } from "./cli.ts";

/** One line of `patchbay doctor --json`. */
export interface DoctorLine {
  name: string;
  status: "pass" | "warn" | "fail" | "skip";
  finding: string;
  remedy: string | null;
  details: string[];
  code?: string;
}

/** What a doctor run printed, by check name. */
export interface DoctorRun extends CliResult {
  lines: DoctorLine[];
  check(name: string): DoctorLine;
}

/** Parses `patchbay doctor --json` output: one object per line. */
export function parseDoctor(result: CliResult): DoctorRun {
  const lines = result.stdout.trim().split("\n").filter(Boolean).map((line) => {
    try {
      return JSON.parse(line) as DoctorLine;
    } catch {
      throw new Error(`not a JSON line: ${line}\nstderr: ${result.stderr}`);
    }
  });
  return {
    ...result,
    lines,
    check(name: string): DoctorLine {
      const found = lines.find((line) => line.name === name);
      assert.ok(found, `no ${name} check in:\n${result.stdout}\n${result.stderr}`);
      return found;
    },
  };
}

/** Options of {@linkcode runDoctor}. */
export interface DoctorRunOptions extends RunOptions {
  /** Global options, placed before the command (`--log-file x`). */
  global?: string[];
}

/** `patchbay <global> doctor --json <args>` in the sandbox. */
export async function runDoctor(
  box: Sandbox,
  args: string[] = [],
  options: DoctorRunOptions = {},
): Promise<DoctorRun> {
  const global = options.global ?? [];
  return parseDoctor(await runPatchbay(box, [...global, "doctor", "--json", ...args], options));
}
