/**
 * `deno task conformance`: runs the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`, pinned in {@linkcode SUITE}) against patchbay as a client,
 * one scenario at a time (the OAuth scenarios all need the fixed callback port 3000), and
 * prints a table of scenario, revision and result. Exit code 1 when any scored scenario
 * fails.
 *
 * The scenarios are every client scenario the suite's requirement sets name for
 * 2025-11-25 and 2026-07-28 (read from the suite itself, `list --client --requirements`),
 * each run at its revision's wire, plus the ones patchbay chooses to be held to beyond
 * them ({@linkcode EXTRA_SCENARIOS}).
 *
 * ```
 * deno task conformance                               # everything
 * deno task conformance --requirements 2026-07-28     # one requirement set (extras too)
 * deno task conformance --scenario auth/iss-supported # matching scenarios only
 * deno task conformance --results dir                 # keep the suite's results there
 * ```
 *
 * The client is `scripts/conformance_client.ts`, which drives patchbay's own commands.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The suite, pinned here rather than in deno.json's import map: `deno task` installs every
 * package of the import map, and a first `deno task start` would fetch the suite (about 85
 * packages) for nothing. It runs with a lock file of its own for the same reason.
 */
export const SUITE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
/** The suite's own lock file (its dependencies stay out of deno.lock). */
export const SUITE_LOCK: string = join(PROJECT, "scripts", "conformance.lock");

/** Requirement sets whose client scenarios must all pass. */
export const REQUIREMENT_SETS = ["2025-11-25", "2026-07-28"] as const;

/** One scenario run at one revision. */
export interface ScenarioRun {
  scenario: string;
  /** The wire revision it runs at (`--spec-version`). */
  revision: string;
  /** Why it is run: a requirement set, or the reason patchbay adds it. */
  source: string;
  /** A failure fails the task. */
  scored: boolean;
  /**
   * Run although the suite does not place it on a revision's timeline (an extension).
   * @default false
   */
  force?: boolean;
  /**
   * The client's own expectations count: a command that exited otherwise than the client
   * script expected fails the run even where the suite ignores the client's exit code (it
   * does where it expects refusals), and so does a check the suite reports SKIPPED (the
   * scenario did not exercise patchbay: the Skills scenarios skip every check when the
   * client never lists skills).
   * @default false
   */
  strict?: boolean;
}

/**
 * Scenarios run beyond the requirement sets. Preserving a server's JSON Schema byte for
 * byte, the 2025-03-26 authorization fallback, the headless grants, Skills over MCP
 * (SEP-2640: no file fetched ahead of need, every file verified) and the organisation
 * sign-ins (enterprise-managed authorization, workload identity) are patchbay's own
 * commitments.
 */
export const EXTRA_SCENARIOS: readonly ScenarioRun[] = [
  ...REQUIREMENT_SETS.map((revision) => ({
    scenario: "json-schema-2020-12-preservation",
    revision,
    source: "added after release",
    scored: true,
  })),
  ...["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]
    .map((scenario) => ({ scenario, revision: "2025-03-26", source: "2025-03-26", scored: true })),
  ...[
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
  ]
    .map((scenario) => ({
      scenario,
      revision: "2026-07-28",
      source: "extension",
      scored: true,
      force: true,
    })),
  ...[
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
  ].map((scenario) => ({
    scenario,
    revision: "2026-07-28",
    source: "extension",
    scored: true,
    force: true,
    strict: true,
  })),
];

/** What `conformance_client.ts` writes when a patchbay command exited otherwise than expected. */
export const UNEXPECTED_EXIT = /^patchbay exited -?\d+, expected \d+$/m;

/** Longest a scenario may take, the suite's own client timeout included. */
const SCENARIO_TIMEOUT_MS = 120_000;

/** The client timeout the suite enforces (`--timeout`). */
const CLIENT_TIMEOUT_MS = 60_000;

/** A check of a scenario as the suite writes it to `checks.json`. */
interface Check {
  id: string;
  name: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  description?: string;
  errorMessage?: string;
  details?: { message?: string };
}

/** What one run gave. */
export interface RunResult extends ScenarioRun {
  passed: boolean;
  checks: Check[];
  /** Why it failed when no check says so (the suite could not run it). */
  problem?: string;
  /** The last lines the client wrote on stderr (for a failure). */
  clientTail: string[];
  seconds: number;
}

async function suite(
  args: string[],
  options: { cwd?: string; signal?: AbortSignal } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", `--lock=${SUITE_LOCK}`, SUITE, ...args],
    cwd: options.cwd ?? PROJECT,
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  }).output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** The client scenarios a requirement set names, read from the suite. */
export async function requiredClientScenarios(revision: string): Promise<string[]> {
  const { code, stdout, stderr } = await suite(["list", "--client", "--requirements", revision]);
  if (code !== 0) throw new Error(`listing the ${revision} requirements failed: ${stderr}`);
  const names: string[] = [];
  let inClient = false;
  for (const line of stdout.split("\n")) {
    if (/^Client scenarios/.test(line)) inClient = true;
    else if (/^\S/.test(line)) inClient = false;
    else if (inClient) {
      const match = /^\s+- (\S+)$/.exec(line);
      if (match) names.push(match[1]);
    }
  }
  if (names.length === 0) throw new Error(`the suite lists no client scenarios for ${revision}`);
  return names;
}

/** Runs one scenario and reads its checks. */
export async function runScenario(run: ScenarioRun, keepIn?: string): Promise<RunResult> {
  const started = performance.now();
  // --results names a folder that need not exist yet (docs/conformance.md's example does not).
  if (keepIn) await Deno.mkdir(keepIn, { recursive: true });
  const out = keepIn
    ? await Deno.makeTempDir({ dir: keepIn, prefix: `${run.scenario.replaceAll("/", "-")}-` })
    : await Deno.makeTempDir({ prefix: "patchbay-conformance-results-" });
  const client = [
    Deno.execPath(),
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    "--allow-net",
    join(PROJECT, "scripts", "conformance_client.ts"),
  ].join(" ");
  const result = (passed: boolean, checks: Check[], clientTail: string[], problem?: string) => ({
    ...run,
    passed,
    checks,
    clientTail,
    problem,
    seconds: (performance.now() - started) / 1000,
  });
  try {
    const { code, stdout, stderr } = await suite([
      "client",
      "--command",
      client,
      "--scenario",
      run.scenario,
      "--spec-version",
      run.revision,
      "--timeout",
      String(CLIENT_TIMEOUT_MS),
      "-o",
      out,
      ...(run.force ? ["--force"] : []),
    ], { signal: AbortSignal.timeout(SCENARIO_TIMEOUT_MS) });
    const folder = findResults(out);
    if (!folder) {
      return result(
        false,
        [],
        [],
        `the suite wrote no results (exit ${code}): ${tail(stderr || stdout, 5).join(" / ")}`,
      );
    }
    const checks = JSON.parse(await Deno.readTextFile(join(folder, "checks.json"))) as Check[];
    const clientStderr = await Deno.readTextFile(join(folder, "stderr.txt")).catch(() => "");
    const failed = checks.some((c) => c.status === "FAILURE");
    // The suite ignores the client's exit code where it expects refusals (the verify
    // scenarios of SEP-2640): the client says when patchbay did not do what was expected.
    const unexpected = run.strict ? UNEXPECTED_EXIT.exec(clientStderr)?.[0] : undefined;
    const skipped = run.strict ? checks.filter((c) => c.status === "SKIPPED") : [];
    return result(
      code === 0 && !failed && unexpected === undefined && skipped.length === 0,
      checks,
      tail(clientStderr, 12),
      unexpected !== undefined
        ? `the client: ${unexpected}`
        : skipped.length > 0
        ? `skipped, so patchbay was not tested: ${
          skipped.map((c) => `${c.name} (${c.errorMessage ?? "no reason given"})`).join("; ")
        }`
        : code !== 0 && !failed
        ? `the suite exited ${code}`
        : undefined,
    );
  } catch (error) {
    return result(false, [], [], (error as Error).message);
  } finally {
    if (!keepIn) await Deno.remove(out, { recursive: true }).catch(() => {});
  }
}

/** The folder holding `checks.json` under `dir` (a scenario `auth/x` nests one level). */
function findResults(dir: string): string | undefined {
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isDirectory) continue;
    const path = join(dir, entry.name);
    try {
      Deno.statSync(join(path, "checks.json"));
      return path;
    } catch {
      const nested = findResults(path);
      if (nested) return nested;
    }
  }
  return undefined;
}

function tail(text: string, lines: number): string[] {
  return text.trimEnd().split("\n").slice(-lines);
}

/** Every run the task makes, in order, filtered. */
export async function plannedRuns(filter: {
  requirements?: string;
  scenario?: string;
}): Promise<ScenarioRun[]> {
  const sets = filter.requirements ? [filter.requirements] : [...REQUIREMENT_SETS];
  const runs: ScenarioRun[] = [];
  for (const revision of sets) {
    for (const scenario of await requiredClientScenarios(revision)) {
      runs.push({ scenario, revision, source: `required ${revision}`, scored: true });
    }
  }
  runs.push(
    ...EXTRA_SCENARIOS.filter((r) => !filter.requirements || r.revision === filter.requirements),
  );
  return runs.filter((r) => !filter.scenario || r.scenario.includes(filter.scenario));
}

function verdict(r: RunResult): string {
  const counted = r.checks.filter((c) => c.status === "SUCCESS" || c.status === "FAILURE");
  const ok = counted.filter((c) => c.status === "SUCCESS").length;
  const word = r.passed ? "pass" : r.scored ? "FAIL" : "fail (not scored)";
  return `${word} (${ok}/${counted.length} checks)`;
}

/** The results as a Markdown table: readable in a terminal, and what docs/conformance.md shows. */
function table(results: RunResult[]): string {
  const rows = results.map((r) => [r.scenario, r.revision, r.source, verdict(r)]);
  const head = ["scenario", "revision", "why", "result"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  const rule = `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}

function describeFailure(r: RunResult): string {
  const lines = [`✗ ${r.scenario} (${r.revision})`];
  if (r.problem) lines.push(`    ${r.problem}`);
  for (const check of r.checks.filter((c) => c.status === "FAILURE")) {
    const why = check.errorMessage ?? check.details?.message ?? check.description ?? "";
    lines.push(`    ${check.name}: ${why}`.trimEnd());
  }
  if (r.clientTail.length > 0) {
    lines.push("    client stderr (last lines):");
    for (const line of r.clientTail) lines.push(`      ${line.slice(0, 240)}`);
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      requirements: { type: "string" },
      scenario: { type: "string" },
      results: { type: "string" },
    },
  });
  const runs = await plannedRuns(values);
  if (runs.length === 0) {
    console.error("no scenario matches");
    Deno.exit(2);
  }
  const version = (await suite(["--version"])).stdout.trim();
  const counts = Object.entries(Object.groupBy(runs, (r) => r.source))
    .map(([source, group]) => `${group!.length} ${source}`).join(", ");
  console.error(`${SUITE} ${version}: ${runs.length} scenario runs (${counts}), one at a time`);
  const started = performance.now();
  const results: RunResult[] = [];
  for (const run of runs) {
    const result = await runScenario(run, values.results);
    console.error(
      `${result.passed ? "✓" : "✗"} ${run.scenario} (${run.revision}) ${
        result.seconds.toFixed(1)
      } s`,
    );
    results.push(result);
  }
  console.log(table(results));
  const failures = results.filter((r) => !r.passed);
  for (const failure of failures) console.error(describeFailure(failure));
  const scoredFailures = failures.filter((r) => r.scored);
  const total = results.filter((r) => r.scored).length;
  const minutes = (performance.now() - started) / 60_000;
  console.error(
    `${total - scoredFailures.length} of ${total} scored scenario runs passed` +
      (failures.length > scoredFailures.length
        ? `; ${failures.length - scoredFailures.length} reported only failed`
        : "") +
      ` (${minutes.toFixed(1)} min)`,
  );
  Deno.exit(scoredFailures.length > 0 ? 1 : 0);
}
