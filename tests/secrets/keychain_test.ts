/**
 * `${keychain:NAME}` read from the keychain through its own tool: the value of a stored
 * entry (registered as a secret before it is returned, read once per process), the exact
 * command that stores a missing one, and a keychain that cannot be reached or whose tool is
 * missing, each with its cause and remedy.
 *
 * The keychain is real where it can be had (GNOME Keyring on a private D-Bus session, read
 * by the real secret-tool: tests/support/keychain.ts); on a machine without it, no keychain
 * exists, and a FAKE secret-tool stands in, which each test says in its output.
 */

import assert from "node:assert/strict";
import { KeychainError } from "../../lib/errors.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { KEYCHAIN_TOOLS, readKeychain } from "../../lib/secrets/keychain.ts";
import { realKeychainAvailable, testKeychain } from "../support/keychain.ts";
import { tempDir } from "../support/temp_dir.ts";

const linux = KEYCHAIN_TOOLS.linux!;

function announce(kind: string): void {
  if (kind === "fake") {
    console.log("no keychain exists on this machine: a FAKE secret-tool stands in");
  }
}

Deno.test("a stored entry is read through secret-tool, registered as a secret, and read once", async () => {
  await using home = await tempDir();
  await using keychain = await testKeychain(home.path);
  announce(keychain.kind);
  const value = `kc-value-${crypto.randomUUID()}`;
  await keychain.store("KC_ONCE", value);
  const redactor = new Redactor();
  const parentEnv = (name: string) =>
    ({ HOME: home.path, PATH: Deno.env.get("PATH"), ...keychain.env } as Record<string, string>)[
      name
    ];
  const values = await readKeychain(["KC_ONCE"], { parentEnv, redactor, tool: linux });
  assert.equal(values.get("KC_ONCE"), value);
  assert.equal(redactor.redact(`token ${value}`), "token [REDACTED]");
  // Read once per process: a second read does not ask the keychain (which is now unreachable).
  const again = await readKeychain(["KC_ONCE"], {
    parentEnv: () => undefined,
    redactor,
    tool: linux,
  });
  assert.equal(again.get("KC_ONCE"), value);
});

Deno.test("a missing entry: the exact command that stores it, the others listed too", async () => {
  await using home = await tempDir();
  await using keychain = await testKeychain(home.path);
  announce(keychain.kind);
  const parentEnv = (name: string) =>
    ({ HOME: home.path, PATH: Deno.env.get("PATH"), ...keychain.env } as Record<string, string>)[
      name
    ];
  const error = await readKeychain(["KC_ABSENT_ONE", "KC_ABSENT_TWO"], {
    parentEnv,
    redactor: new Redactor(),
    tool: linux,
  }).then(() => undefined, (error) => error);
  assert.ok(error instanceof KeychainError, String(error));
  assert.equal(error.message, "Keychain entry 'KC_ABSENT_ONE' not found");
  assert.equal(error.code, "keychain_failed");
  assert.match(error.reason, /no entry of service patchbay and account KC_ABSENT_ONE/);
  assert.match(
    error.remedies.script,
    /store it with `secret-tool store --label='patchbay KC_ABSENT_ONE' service patchbay account KC_ABSENT_ONE` \(it asks for the value\), then run the command again/,
  );
  assert.match(error.remedies.repl, /then \/refresh$/);
  assert.ok(
    error.details.some((line) =>
      line.includes("Keychain entry 'KC_ABSENT_TWO' not found") &&
      line.includes("account KC_ABSENT_TWO")
    ),
    error.details.join("\n"),
  );
});

Deno.test({
  name: "no keychain to reach: secret-tool's own words, and what to do",
  // The real secret-tool with no D-Bus session to reach; the fake has no bus to miss.
  ignore: !(await realKeychainAvailable()),
}, async () => {
  await using home = await tempDir();
  const error = await readKeychain(["KC_NO_BUS"], {
    parentEnv: (name) =>
      ({ HOME: home.path, PATH: Deno.env.get("PATH") } as Record<string, string>)[name],
    redactor: new Redactor(),
    tool: linux,
  }).then(() => undefined, (error) => error);
  assert.ok(error instanceof KeychainError, String(error));
  assert.equal(error.message, "Could not read 'KC_NO_BUS' from the keychain");
  assert.match(error.reason, /secret-tool could not read the keychain \(status 1\)/);
  assert.ok(error.details.some((line) => /D-Bus/.test(line)), error.details.join("\n"));
  assert.match(error.remedies.script, /GNOME Keyring/);
});

Deno.test("the keychain's tool is not installed: how to get it, or .env instead", async () => {
  await using home = await tempDir();
  const error = await readKeychain(["KC_NO_TOOL"], {
    parentEnv: (name) => ({ HOME: home.path, PATH: home.path } as Record<string, string>)[name],
    redactor: new Redactor(),
    tool: { ...linux, program: "patchbay-no-such-secret-tool" },
  }).then(() => undefined, (error) => error);
  assert.ok(error instanceof KeychainError, String(error));
  assert.equal(error.problem, "unavailable");
  assert.match(error.reason, /patchbay-no-such-secret-tool is not installed/);
  assert.match(error.remedies.script, /apt install libsecret-tools/);
  assert.match(error.remedies.script, /\.env/);
});

Deno.test("the store command of each platform asks for the value instead of taking it", () => {
  assert.equal(
    KEYCHAIN_TOOLS.darwin!.store("GH_TOKEN"),
    "security add-generic-password -s patchbay -a GH_TOKEN -w",
  );
  assert.deepEqual(KEYCHAIN_TOOLS.darwin!.lookup("GH_TOKEN"), [
    "find-generic-password",
    "-s",
    "patchbay",
    "-a",
    "GH_TOKEN",
    "-w",
  ]);
  const windows = KEYCHAIN_TOOLS.windows!;
  assert.match(windows.store("GH_TOKEN"), /Read-Host -AsSecureString/);
  assert.match(windows.lookup("GH_TOKEN").join(" "), /Retrieve\('patchbay', 'GH_TOKEN'\)/);
});
