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
  // Conversation memory and its store.
  "lib/memory/conversation.ts: run with --debug for details, or ${STEPS",
  "lib/memory/file_store.ts: make ${path} and its folder belong to yo",
  "lib/memory/memory.ts: `patchbay sessions` lists the stored ses",
  "lib/memory/memory.ts: give more characters of the id",
  "lib/memory/memory.ts: `patchbay sessions` lists the stored ses",
  "lib/memory/memory.ts: `patchbay sessions --all` lists them; `p",
  "lib/memory/memory.ts: start a conversation with `patchbay` (wi",
  // OAuth beyond the login errors: callback, token stores, policy, credential sources.
  "lib/oauth/bearer.ts: use a token that carries the required sc",
  "lib/oauth/callback_page.ts: see the terminal",
  "lib/oauth/callback.ts: open the authorization URL shown (the br",
  "lib/oauth/callback.ts: start the login again from patchbay; if ",
  "lib/oauth/callback.ts: ${STEPS.retryLogin(expected.server)}; if",
  "lib/oauth/callback.ts: approve patchbay when the authorization ",
  "lib/oauth/callback.ts: free port ${port}: stop ${holder ? descr",
  "lib/oauth/client_auth.ts: give a PKCS#8 PEM (-----BEGIN PRIVATE KE",
  "lib/oauth/credential_source.ts: check ${source.field}: it must hold or p",
  "lib/oauth/credential_source.ts: check that the platform writes the token",
  "lib/oauth/credential_source.ts: run \\`${shown}\\` yourself and fix what i",
  "lib/oauth/endpoint_policy.ts: ask the server's operator to serve the a",
  "lib/oauth/messages.ts: see the terminal",
  "lib/oauth/org_grants.ts: check that the server publishes OAuth me",
  'lib/oauth/org_grants.ts: set ${field} in the entry\'s "auth" (docs',
  "lib/oauth/policy.ts: check the server's OAuth setup with its ",
  "lib/oauth/policy.ts: ask the server\\'s operator to enable PKC",
  "lib/oauth/policy.ts: register patchbay with the service (redi",
  "lib/oauth/policy.ts: point client_metadata_url at the https a",
  "lib/oauth/redis_token_store.ts: delete the key (redis-cli DEL '${key}') ",
  "lib/oauth/redis_token_store.ts: make ${store} reachable or ${local.dir} ",
  "lib/oauth/token_exchange.ts: check your network connection and auth.i",
  "lib/oauth/token_store.ts: delete the file (rm ${path}) and log in ",
  "lib/oauth/token_store.ts: make ${path} readable and writable by yo",
  // Single remedies of small modules (env, protocol, permissions).
  'lib/protocol.ts: set "protocol": "auto" (or remove it) to',
  // The memory store's connection.
  "lib/redis/client.ts: set REDIS_TLS_CA_FILE to the path of the",
  "lib/redis/errors.ts: set Memory.key_prefix to a prefix nothin",
  // Slash commands' usage (interactive surface only, may name slash commands).
  "lib/repl/image_command.ts: /image shows the latest image, /image 2 ",
  "lib/repl/mcp_command.ts: e.g. /mcp disable filesystem; /mcp alone",
  "lib/repl/mcp_command.ts: \\`patchbay mcp enable ${name}\\` enables ",
  "lib/repl/server_commands.ts: see the names with /prompts",
  'lib/repl/server_commands.ts: required: ${missing.join(", ")}',
  "lib/repl/server_commands.ts: see the URIs with /resources",
  'lib/repl/server_commands.ts: e.g. /call everything.echo {"message": "',
  "lib/repl/server_prompts.ts: Tab after the prompt's name completes it",
  "lib/repl/skills_command.ts: list the skills with /skills, then name ",
  "lib/repl/skills_command.ts: /skills use sends a skill's SKILL.md",
  "lib/repl/tasks_command.ts: /tasks lists the recorded tasks with the",
  'lib/repl/unknown_server.ts: servers: ${names.join(", ") || "none"}',
  // Secret helpers and the keychain (around ROWS.secret_helper and ROWS.keychain).
  "lib/secrets/helper.ts: run it again",
  "lib/secrets/keychain.ts: rename the entry",
  "lib/secrets/keychain.ts: take the value from .env with ${NAME} in",
  // Names that resolve to nothing (a server, tool, prompt or resource).
  'lib/session/resolve.ts: name the server: ${names.join(" or ")}',
  'lib/session/resolve.ts: write e.g. /prompt greeting name="Ada Lo',
  'lib/session/resolve.ts: write them as a JSON object, e.g. {"mess',
  'lib/session/resolve.ts: wrap them in braces, e.g. {"message": "h',
  "lib/session/resolve.ts: name the server too: /resource <server>:",
  // Skills over MCP (around ROWS.skill_refused).
  "lib/skills/entries.ts: ask the server's authors for a smaller s",
  "lib/skills/entries.ts: patchbay loads only skills whose server ",
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
