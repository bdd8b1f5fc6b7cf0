/**
 * `patchbay doctor`: runs every check and prints one line per check (pass, warn, fail or
 * skip, and what was found), the remedy under each warning and failure, and a summary.
 * Exit code 1 when any check fails. `--json` prints one JSON object per check and line.
 *
 * @module
 */

import { resolve } from "node:path";
import type { CheckResult, CheckStatus } from "../lib/doctor/check.ts";
import { type DoctorOptions, runDoctor } from "../lib/doctor/run.ts";
import { EXIT } from "../lib/errors.ts";
import { stdoutStyle, type Style } from "../lib/terminal/style.ts";
import { plural } from "../lib/text/text.ts";

/** Options of `patchbay doctor`. */
export interface DoctorCommandOptions extends DoctorOptions {
  /** One JSON object per check, one per line. @default false */
  json?: boolean;
}

/** Widest check-name column; longer server names run into the finding. */
const MAX_NAME_WIDTH = 28;

/** Runs the checks, printing each result as it is known. */
export async function doctor(options: DoctorCommandOptions): Promise<number> {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  Deno.addSignalListener("SIGINT", onInterrupt);
  const style = stdoutStyle();
  const results: CheckResult[] = [];
  let width = 0;
  try {
    const checks = runDoctor({ ...options, signal: controller.signal }, (start) => {
      width = Math.min(MAX_NAME_WIDTH, Math.max(...start.checks.map((name) => name.length)));
      if (!options.json) {
        console.log(
          style.bold(`patchbay ${start.version} doctor`) + style.dim(
            ` · ${resolve(start.configPath)}${options.offline ? " · offline" : ""}`,
          ),
        );
      }
    });
    for await (const result of checks) {
      results.push(result);
      console.log(
        options.json ? JSON.stringify(resultJson(result)) : renderResult(result, style, width),
      );
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
  }
  if (controller.signal.aborted) return EXIT.interrupted;
  if (!options.json) console.log(summary(results, style));
  return results.some((r) => r.status === "fail") ? EXIT.failure : EXIT.ok;
}

/** A result as the JSON object `--json` prints. */
export function resultJson(result: CheckResult): Record<string, unknown> {
  return {
    name: result.name,
    status: result.status,
    finding: result.finding,
    remedy: result.remedy ?? null,
    details: result.details,
    ...(result.code ? { code: result.code } : {}),
  };
}

const MARK: Record<CheckStatus, (style: Style) => string> = {
  pass: (s) => s.green("✓ pass"),
  warn: (s) => s.yellow("! warn"),
  fail: (s) => s.red("✗ fail"),
  skip: (s) => s.dim("- skip"),
};

/** The line of one check, then its remedy and details indented under it. */
export function renderResult(result: CheckResult, style: Style, width = 0): string {
  const lines = [`${MARK[result.status](style)}  ${result.name.padEnd(width)}  ${result.finding}`];
  const indent = " ".repeat(6 + 2 + Math.max(width, result.name.length) + 2);
  if (result.remedy && result.status !== "pass" && result.status !== "skip") {
    lines.push(`${indent}${style.green("remedy:")} ${result.remedy}`);
  }
  for (const detail of result.details) lines.push(`${indent}${style.dim(detail)}`);
  return lines.join("\n");
}

function summary(results: readonly CheckResult[], style: Style): string {
  const count = (status: CheckStatus) => results.filter((r) => r.status === status).length;
  const failed = count("fail");
  const text = `${plural(count("pass"), "check")} passed, ${plural(count("warn"), "warning")}, ` +
    `${failed} failed, ${count("skip")} skipped`;
  return "\n" + (failed > 0 ? style.red(text) : style.green(text));
}
