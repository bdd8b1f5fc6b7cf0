/**
 * A keychain for the `${keychain:…}` tests.
 *
 * Where D-Bus, GNOME Keyring and secret-tool are installed (`scripts/test_deps.ts` installs
 * them when it runs as root), it is a real one: a private D-Bus session bus, and a
 * gnome-keyring-daemon on it serving the Secret Service, unlocked, keeping its keyring in
 * the test's HOME. Entries are stored with the real `secret-tool store`, and patchbay reads
 * them through the real `secret-tool lookup`, exactly as on a Linux desktop.
 *
 * Where they are not installed, no keychain exists on this machine, and a FAKE secret-tool
 * stands in: a sh script first on PATH that keeps entries as files in HOME. `kind` says
 * which, and the tests say so in their output.
 *
 * @module
 */

import { join } from "node:path";

/** A keychain the tests store entries in. */
export interface TestKeychain {
  /** `gnome-keyring`: the real Secret Service; `fake`: the stand-in script. */
  kind: "gnome-keyring" | "fake";
  /** Variables patchbay needs to reach it (the bus address, or the fake's PATH). */
  env: Record<string, string>;
  /** Stores `value` as the entry of service patchbay and account `name`. */
  store(name: string, value: string): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const FAKE_SECRET_TOOL = `#!/bin/sh
# A FAKE secret-tool for tests on a machine with no keychain: entries are files in HOME.
dir="$HOME/.fake-keychain"
case "$1" in
  lookup) [ -f "$dir/$5" ] || exit 1; cat "$dir/$5" ;;
  store) mkdir -p "$dir"; cat > "$dir/$6" ;;
  *) echo "fake secret-tool: $1 is not supported" >&2; exit 2 ;;
esac
`;

async function onPath(program: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("sh", {
      args: ["-c", `command -v ${program}`],
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** Whether the real keychain can be had here. */
export async function realKeychainAvailable(): Promise<boolean> {
  for (const program of ["dbus-daemon", "gnome-keyring-daemon", "secret-tool"]) {
    if (!(await onPath(program))) return false;
  }
  return true;
}

/** A keychain in `home`: the real one when it can be had, else the fake (see the module). */
export async function testKeychain(home: string): Promise<TestKeychain> {
  return (await realKeychainAvailable()) ? await gnomeKeyring(home) : await fakeKeychain(home);
}

/** The fake secret-tool, first on PATH. */
export async function fakeKeychain(home: string): Promise<TestKeychain> {
  const bin = join(home, "fake-keychain-bin");
  await Deno.mkdir(bin, { recursive: true });
  const tool = join(bin, "secret-tool");
  await Deno.writeTextFile(tool, FAKE_SECRET_TOOL, { mode: 0o755 });
  const env = { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
  return {
    kind: "fake",
    env,
    async store(name, value) {
      await Deno.mkdir(join(home, ".fake-keychain"), { recursive: true });
      await Deno.writeTextFile(join(home, ".fake-keychain", name), value);
    },
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

/** A private session bus with an unlocked GNOME Keyring on it. */
async function gnomeKeyring(home: string): Promise<TestKeychain> {
  const runtime = join(home, "keychain-run");
  await Deno.mkdir(runtime, { recursive: true, mode: 0o700 });
  const address = `unix:path=${join(runtime, "bus")}`;
  const base = { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const bus = new Deno.Command("dbus-daemon", {
    args: ["--session", "--nofork", "--nopidfile", `--address=${address}`, "--print-address=1"],
    env: base,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = bus.stdout.getReader();
  let printed = "";
  while (!printed.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("dbus-daemon ended before printing its address");
    printed += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  void bus.stdout.cancel().catch(() => {});
  const env = { DBUS_SESSION_BUS_ADDRESS: printed.trim().split("\n")[0] };
  // --unlock reads the login keyring's password from stdin; --foreground keeps it our child.
  const keyring = new Deno.Command("gnome-keyring-daemon", {
    args: ["--foreground", "--unlock", "--components=secrets"],
    env: { ...base, ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = keyring.stdin.getWriter();
  await writer.write(new TextEncoder().encode("test-keyring-password"));
  await writer.close();
  // It prints its control socket once it serves.
  const ready = keyring.stdout.getReader();
  await ready.read();
  ready.releaseLock();
  void keyring.stdout.cancel().catch(() => {});
  const stop = async () => {
    for (const child of [keyring, bus]) {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
    }
  };
  const keychain: TestKeychain = {
    kind: "gnome-keyring",
    env,
    async store(name, value) {
      const store = new Deno.Command("secret-tool", {
        args: ["store", `--label=patchbay ${name}`, "service", "patchbay", "account", name],
        env: { ...base, ...env },
        clearEnv: true,
        stdin: "piped",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const input = store.stdin.getWriter();
      await input.write(new TextEncoder().encode(value));
      await input.close();
      const { success, stderr } = await store.output();
      if (!success) throw new Error(`secret-tool store: ${new TextDecoder().decode(stderr)}`);
    },
    [Symbol.asyncDispose]: stop,
  };
  // The Secret Service may need a moment after the control socket: a first store proves it.
  try {
    await keychain.store("patchbay-test-probe", "probe-value");
  } catch (error) {
    await stop();
    throw error;
  }
  return keychain;
}
