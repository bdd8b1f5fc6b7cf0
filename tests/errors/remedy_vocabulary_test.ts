/**
 * Rows own their remedies: no remedy is written as literal words in `lib/` or `commands/`
 * outside the failure table (`lib/errors/failure_table.ts`), but for the few listed here,
 * each with why it cannot be a row or a step. `tests/support/remedy_scan.ts` says what
 * counts as a remedy written out.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Finding, findRemedies, remedyParameters, tokenize } from "../support/remedy_scan.ts";

const ROOT = join(import.meta.dirname!, "../..");
/**
 * The failure table: its rows and `STEPS`, and the steps of an area kept in a file of their
 * own (`lib/errors/<area>_steps.ts`) so the table stays within the size of a file.
 */
const TABLE = /^lib\/errors\/(?:failure_table|\w+_steps)\.ts$/;

/**
 * The remedies still written outside the table: `file: ` and the literal's first words (no
 * line number, so edits elsewhere in a file do not move them). This is the backlog of issue
 * 37 ("rows own their remedies"), grouped by the kind of failure; it may only shrink (the
 * next test fails on an entry no longer found). A remedy moved goes into a row, `STEPS`, or
 * the steps of its area (`lib/errors/<area>_steps.ts`), worded per surface when it names a
 * slash command or a flag.
 */
const ALLOWED: readonly string[] = [
  // Usage errors of one command's own flags and arguments (scripting surface only).
  "commands/_boundary.ts: run again with --debug and report the lo",
  'commands/_help_words.ts: the commands of ${where}: ${names.join("',
  "commands/_program.ts: usage: ${usage}${json}",
  'commands/_program.ts: commands: ${names.join(", ")}; run \\`${n',
  "commands/approvals.ts: patchbay approvals revoke <id|server|ser",
  "commands/completions.ts: e.g. patchbay completions bash > ~/.loca",
  "commands/mcp_import.ts: patchbay mcp import <client> (one of the",
  "commands/mcp_import.ts: keep only the servers you want in a copy",
  "commands/mcp_import.ts: add servers with `patchbay mcp add`, or ",
  "commands/prompt.ts: give each as name=value; `patchbay promp",
  'commands/run.ts: e.g. patchbay run "what tools do you hav',
  "commands/run.ts: fix the servers (patchbay doctor), disab",
  "commands/tools.ts: servers in the configuration: ${names.jo",
  "commands/trace.ts: e.g. patchbay trace show trace.jsonl --l",
  // The agent's own refusals: approvals, sampling, images, hooks of direct calls.
  "lib/agent/approval_store.ts: delete it (rm ${this.path}), which forge",
  "lib/agent/approval_store.ts: fix or delete ${this.path} (deleting it ",
  "lib/agent/direct_call_hooks.ts: answer the question at a terminal, or ch",
  'lib/agent/image_refusal.ts: set "vision": false in the LLM section o',
  'lib/agent/sampling.ts: set "sampling" to "ask" (or "allow") in ',
  "lib/agent/sampling.ts: the server must sample without tools",
  'lib/agent/sampling.ts: approve it when asked, or set "sampling"',
  // Configuration load, import and validation: hints that quote the field at fault.
  'lib/config/hooks.ts: write "<server>.<tool>" globs, e.g. "eve',
  "lib/config/import_sources.ts: name another file to import",
  "lib/config/import_sources.ts: check the path and that the file is read",
  "lib/config/import_sources.ts: fix the file in the client that wrote it",
  'lib/config/import_sources.ts: name a client (${CLIENTS.join(", ")}) or',
  "lib/config/import_sources.ts: check the path",
  "lib/config/import_sources.ts: name the file: patchbay mcp import <path",
  "lib/config/load.ts: name another file with --config",
  "lib/config/load.ts: create it (copy ${DEFAULTS.exampleConfig",
  "lib/config/load.ts: make the file readable by your user (e.g",
  "lib/config/load.ts: pass the file inside it, e.g. --config $",
  "lib/config/load.ts: check the path and that the file is read",
  "lib/config/servers.ts: event streams may then be reopened befor",
  "lib/config/values.ts: remove the repetition",
  "lib/config/values.ts: servers skip roots they cannot find; cre",
  // Connection reports and server request errors.
  "lib/connections/optional_lists.ts: nothing to fix in patchbay (the server's",
  "lib/connections/reconnect.ts: ${error.remedies}; meanwhile ${RESTARTIN",
  "lib/connections/request_errors.ts: check the name and arguments (the server",
  "lib/connections/tool_filter.ts: to use it, change mcpServers.${tool.serv",
  // Doctor findings (check results, not typed errors).
  "lib/doctor/check.ts: run the doctor again with --debug and lo",
  "lib/doctor/model_checks.ts: unset ${API_KEY_VARIABLE} in your shell ",
  "lib/doctor/model_checks.ts: set LLM.model to a model the provider of",
  "lib/doctor/model_checks.ts: nothing to do if chat requests work; oth",
  "lib/doctor/network_checks.ts: set the proxy ",
  'lib/doctor/network_checks.ts: add "env": {"HTTPS_PROXY": "${proxy.url}',
  "lib/doctor/network_checks.ts: if a proxy is needed, set ${url.protocol",
  "lib/doctor/network_checks.ts: ${remedy}; ${ROWS.network.remedy}",
  "lib/doctor/oauth_checks.ts: allow connections to localhost:${listene",
  "lib/doctor/oauth_checks.ts: set BROWSER to a browser command (e.g. B",
  "lib/doctor/server_checks.ts: run `patchbay --debug tools` and read th",
  "lib/doctor/setup_checks.ts: write each line as NAME=value (quote val",
  "lib/doctor/setup_checks.ts: copy ${location.path} to ./${DEFAULTS.co",
  "lib/doctor/setup_checks.ts: see each warning below",
  "lib/doctor/setup_checks.ts: fix the permissions of the file and its ",
  // Single remedies of small modules (env, protocol, permissions).
  "lib/env.ts: name another file with --env-file",
  "lib/env.ts: create the file (see .env.example) or pa",
  // Default remedies of typed errors without a row (config, store, run, server, oauth).
  "lib/errors/config.ts: correct each field listed; docs/configur",
  "lib/errors/config.ts: run \\`${found.chmod}\\` (and check that n",
  "lib/errors/config.ts: check what ${path} is (ls -lL ${path}) a",
  "lib/errors/config.ts: run the command again once the other one",
  "lib/errors/oauth.ts: log in now with \\`patchbay auth login ${",
  "lib/errors/run.ts: run `patchbay --help` for usage",
  "lib/errors/run.ts: run it again when ready",
  "lib/errors/run.ts: run the command again",
  "lib/errors/server.ts: run it again and let the server connect ",
  "lib/errors/server.ts: remove the mention and send the message ",
  "lib/errors/store.ts: continue it there, or start patchbay --r",
  // A lock file held by another process.
  "lib/files/file_lock.ts: make ${dirname(lockPath)} a folder you m",
  // A hook's rewritten input the tool's schema refuses (around ROWS.hook_failed).
  "lib/hooks/failure.ts: ${FIT_THE_SCHEMA}; run the hook by hand ",
];

async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts") && !TABLE.test(path)) {
        files.set(path, await Deno.readTextFile(join(ROOT, path)));
      }
    }
  };
  await walk("lib");
  await walk("commands");
  return files;
}

async function findings(): Promise<Finding[]> {
  const files = await sources();
  const parameters = new Map<string, number>();
  for (const source of files.values()) {
    for (const [name, index] of remedyParameters(tokenize(source), true)) {
      parameters.set(name, index);
    }
  }
  return [...files].flatMap(([file, source]) => findRemedies(file, source, parameters))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

const key = (finding: Finding) => `${finding.file}: ${finding.text}`;

Deno.test("remedies: none is written outside the failure table but the listed", async () => {
  const found = await findings();
  const outside = found.filter((finding) => !ALLOWED.includes(key(finding)));
  assert.deepEqual(
    outside.map((f) => `${f.file}:${f.line}: ${f.text}`),
    [],
    "remedies written outside lib/errors/failure_table.ts: make them rows or STEPS",
  );
});

Deno.test("remedies: every listed remedy is still written out (the list only shrinks)", async () => {
  const keys = new Set((await findings()).map(key));
  assert.deepEqual(ALLOWED.filter((entry) => !keys.has(entry)), []);
});

Deno.test("remedies: the scanner finds each form of a remedy written out", () => {
  const source = [
    'const a = { remedy: "one" };',
    "const b = { remedy:\n  `two ${x}` };",
    'const c = { remedy: { repl: "three /x", script: "three" } };',
    'const d = { remedy: remedyOf("four") };',
    "const e = { remedy: perSurface`${STEPS.connect}; five` };",
    'const SIX_REMEDY = "six";',
    "class E extends PatchbayError { constructor(a: string, remedy: string) { super(a); } }",
    'const f = new E("a", "seven");',
    "const fail = (reason: string, remedy: RemedyText) => new E(reason, remedy);",
    'fail("a", "eight");',
    '// remedy: "a comment"',
    'const g = { remedy: ROWS.tool.remedy, other: "x", re: /remedy: "no"/ };',
    "const h = { remedy: perSurface`${STEPS.connect}` };",
    'const i = { remedy: perSurface`${STEPS.connect}${"; nine"}` };',
  ].join("\n");
  const parameters = remedyParameters(tokenize(source), true);
  assert.deepEqual(
    findRemedies("x.ts", source, parameters).map((f) => `${f.line} ${f.text}`),
    [
      "1 one",
      "3 two ${x}",
      "4 three /x",
      "5 four",
      "6 ${STEPS.connect}; five",
      "7 six",
      "9 seven",
      "11 eight",
      '15 ${STEPS.connect}${"; nine"}',
    ],
  );
});

/** For a maintainer: `deno run --allow-read tests/errors/remedy_vocabulary_test.ts` lists them. */
if (import.meta.main) {
  for (const f of await findings()) console.log(`${f.file}:${f.line}: ${JSON.stringify(key(f))}`);
}
