/**
 * A secret helper run as patchbay runs it, with real sh scripts: what a good one prints,
 * and each way a bad one fails (hangs, crashes, prints garbage or too much, leaves a child
 * holding its output, is missing or not executable), each worded with its cause and
 * remedy and bounded: nothing it started outlives the run.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { SecretHelperError } from "../../lib/errors.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { runHelper } from "../../lib/secrets/helper.ts";
import { parseHelperHeaders } from "../../lib/secrets/headers_helper.ts";
import { bounded } from "../support/bounded.ts";
import { tempDir } from "../support/temp_dir.ts";

const role = { kind: "headers", server: "remote" } as const;
const parentEnv = (name: string) => Deno.env.get(name);

async function script(dir: string, name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return path;
}

function helper(command: string, dir: string, args: string[] = []) {
  return { command, args, env: {}, cwd: dir };
}

async function failure(promise: Promise<unknown>): Promise<SecretHelperError> {
  const error = await promise.then(() => undefined, (error) => error);
  assert.ok(error instanceof SecretHelperError, `expected a SecretHelperError, got ${error}`);
  return error;
}

Deno.test("a good helper: its stdout, run in the configuration's folder with a minimal environment", async () => {
  await using dir = await tempDir();
  const path = await script(
    dir.path,
    "good.sh",
    'printf \'{"Authorization": "Bearer %s", "X-Where": "%s", "X-Secret": "%s"}\' ' +
      '"$PATCHBAY_MCP_SERVER_NAME" "$(pwd)" "${LLM_API_KEY:-absent}"',
  );
  const output = await runHelper(helper(path, dir.path), {
    role,
    parentEnv: (name) => name === "LLM_API_KEY" ? "sk-must-not-reach-helpers" : parentEnv(name),
    facts: { PATCHBAY_MCP_SERVER_NAME: "remote" },
    redactor: new Redactor(),
  });
  assert.deepEqual(parseHelperHeaders(output), {
    headers: {
      Authorization: "Bearer remote",
      "X-Where": await Deno.realPath(dir.path),
      // Only the minimal environment is inherited: patchbay's own key stays with patchbay.
      "X-Secret": "absent",
    },
  });
});

Deno.test("a hanging helper is ended at its time, with what it started", async () => {
  await using dir = await tempDir();
  const pidFile = join(dir.path, "child.pid");
  const path = await script(dir.path, "hang.sh", `sleep 3600 & echo $! > ${pidFile}; wait`);
  const error = await failure(bounded(
    runHelper(helper(path, dir.path), {
      role,
      parentEnv,
      redactor: new Redactor(),
      timeoutMs: 300,
    }),
    "the hanging helper's run",
  ));
  assert.equal(error.message, "Headers helper failed for server 'remote'");
  assert.match(error.reason, /ran for more than 0\.3 s and was ended with what it started/);
  assert.match(error.remedies.script, /must not wait for any/);
  assert.match(error.remedies.repl, /then \/refresh$/);
  // The sleep it started in the background is gone too (its process group was ended).
  const pid = Number((await Deno.readTextFile(pidFile)).trim());
  await bounded(
    (async () => {
      while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 25));
    })(),
    "the helper's child to end",
  );
});

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("a helper leaving a child that holds its output open is not waited for", async () => {
  await using dir = await tempDir();
  const pidFile = join(dir.path, "child.pid");
  const path = await script(
    dir.path,
    "detach.sh",
    `sleep 3600 &\necho $! > ${pidFile}\necho '{"X-A": "b"}'`,
  );
  const output = await bounded(
    runHelper(helper(path, dir.path), { role, parentEnv, redactor: new Redactor() }),
    "a helper whose child holds its stdout",
  );
  assert.deepEqual(parseHelperHeaders(output), { headers: { "X-A": "b" } });
  // And the child is ended with the helper's process group.
  const pid = Number((await Deno.readTextFile(pidFile)).trim());
  await bounded(
    (async () => {
      while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 25));
    })(),
    "the helper's child to end",
  );
});

Deno.test("a crashing helper: its exit status, and its stderr as a detail", async () => {
  await using dir = await tempDir();
  const path = await script(dir.path, "crash.sh", "echo 'vault: permission denied' >&2; exit 3");
  const error = await failure(
    runHelper(helper(path, dir.path), { role, parentEnv, redactor: new Redactor() }),
  );
  assert.match(error.reason, /exited with status 3/);
  assert.deepEqual(error.details, ["stderr: vault: permission denied"]);
  assert.match(error.remedies.script, /run it by hand in the configuration's folder/);
});

Deno.test("a helper printing more than the bound is ended and refused", async () => {
  await using dir = await tempDir();
  const path = await script(dir.path, "huge.sh", "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  const error = await failure(bounded(
    runHelper(helper(path, dir.path), { role, parentEnv, redactor: new Redactor() }),
    "the endless output",
  ));
  assert.match(error.reason, /printed more than 65536 bytes and was ended/);
});

Deno.test("a missing or non-executable helper says which, and how to fix it", async () => {
  await using dir = await tempDir();
  const missing = await failure(runHelper(helper(join(dir.path, "nope.sh"), dir.path), {
    role,
    parentEnv,
    redactor: new Redactor(),
  }));
  assert.match(missing.reason, /was not found: ".*nope\.sh" is no file/);
  assert.match(
    missing.remedies.script,
    /write its full path in mcpServers\.remote\.headers_helper/,
  );
  const path = join(dir.path, "plain.sh");
  await Deno.writeTextFile(path, "#!/bin/sh\necho {}\n", { mode: 0o644 });
  const plain = await failure(
    runHelper(helper(path, dir.path), { role, parentEnv, redactor: new Redactor() }),
  );
  assert.match(plain.reason, /could not be started/);
  assert.match(plain.remedies.script, /chmod \+x/);
});

Deno.test("headers output: the shape is checked without quoting what was printed", () => {
  const token = "ghp_" + "x".repeat(30);
  const cases: [string, RegExp][] = [
    ["", /empty/],
    [token, /not JSON/],
    [`["${token}"]`, /JSON an array, not an object/],
    [`{"${token} x": "v"}`, /name 1 of its object is not a valid HTTP header name/],
    ['{"Authorization": 42}', /value of Authorization is number/],
    ['{"X-A": "a\\nb"}', /line break/],
    ['{"Content-Type": "text/plain"}', /the MCP transport sets itself/],
  ];
  for (const [output, expected] of cases) {
    const parsed = parseHelperHeaders(output);
    assert.ok("problem" in parsed, output);
    assert.match(parsed.problem, expected);
    assert.ok(!parsed.problem.includes(token), parsed.problem);
  }
});
