/**
 * `${keychain:NAME}` (docs/secrets.md): the value of the OS keychain's entry of service
 * `patchbay` and account NAME, read through the keychain's own command-line tool (no FFI):
 * `secret-tool` (libsecret: GNOME Keyring, KWallet, KeePassXC) on Linux, `security` on
 * macOS, Windows PowerShell's Credential Manager vault (`PasswordVault`, built in) on
 * Windows. An entry is read once per process and kept in memory only; its value is
 * registered with the redactor before it is returned. A missing entry is reported with the
 * exact command that stores it.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { KeychainError, STDERR_DETAIL } from "../errors.ts";
import type { Remedy } from "../errors/failure_table.ts";
import { SECRETS_STEPS } from "../errors/secrets_steps.ts";
import type { Environment } from "../env.ts";
import type { Redactor } from "../redact/redact.ts";
import { KEYCHAIN_ENTRY } from "../config/expand.ts";
import { type RunFailure, runProgram } from "./run_program.ts";

/** How one operating system's keychain is asked. */
export interface KeychainTool {
  /** The program run (looked up on PATH). */
  program: string;
  /** The keychain as messages name it. */
  label: string;
  /** Arguments that print entry `name`'s value. */
  lookup(name: string): string[];
  /** Whether an unsuccessful run means "no such entry" (not "no keychain"). */
  missing(code: number, stderr: string): boolean;
  /** The command a person runs to store entry `name` (it asks for the value). */
  store(name: string): string;
  /** How to get the program, where it is missing. */
  install: string;
  /** What to do when the keychain cannot be reached at all. */
  reach: string;
  /** The variables the program needs, passed on from patchbay's environment. */
  env: readonly string[];
}

const SERVICE = DEFAULTS.secrets.keychainService;

/** PowerShell's way to the Credential Manager's vault, with no module to install. */
const VAULT = "[void][Windows.Security.Credentials.PasswordVault,Windows.Security.Credentials," +
  "ContentType=WindowsRuntime]; $v = New-Object Windows.Security.Credentials.PasswordVault";

/** Exit status the Windows lookup script gives for "no such entry" (as macOS `security`). */
const WINDOWS_MISSING = 44;

/** The keychain tool of each operating system patchbay knows one for. */
export const KEYCHAIN_TOOLS: Readonly<Partial<Record<typeof Deno.build.os, KeychainTool>>> = {
  linux: {
    program: "secret-tool",
    label: "the Secret Service keychain (secret-tool)",
    lookup: (name) => ["lookup", "service", SERVICE, "account", name],
    // Not found: status 1 and nothing said; no keychain: status 1 with a D-Bus message.
    missing: (code, stderr) => code === 1 && stderr.trim() === "",
    store: (name) =>
      `secret-tool store --label='${SERVICE} ${name}' service ${SERVICE} account ${name}`,
    install: "install secret-tool (Debian and Ubuntu: apt install libsecret-tools)",
    reach: "unlock the keychain, or start one in your session (GNOME Keyring, KeePassXC's " +
      "Secret Service); secret-tool reaches it over D-Bus (DBUS_SESSION_BUS_ADDRESS)",
    env: [
      "HOME",
      "PATH",
      "USER",
      "LOGNAME",
      "DBUS_SESSION_BUS_ADDRESS",
      "XDG_RUNTIME_DIR",
      "DISPLAY",
      "WAYLAND_DISPLAY",
    ],
  },
  darwin: {
    program: "security",
    label: "the macOS keychain (security)",
    lookup: (name) => ["find-generic-password", "-s", SERVICE, "-a", name, "-w"],
    // SecKeychainSearchCopyNext: "The specified item could not be found" (errSecItemNotFound).
    missing: (code) => code === 44,
    store: (name) => `security add-generic-password -s ${SERVICE} -a ${name} -w`,
    install: "security comes with macOS: check that /usr/bin is on PATH",
    reach: "unlock the login keychain (security unlock-keychain) and allow the access asked for",
    env: ["HOME", "PATH", "USER", "LOGNAME", "TMPDIR"],
  },
  windows: {
    program: "powershell.exe",
    label: "the Windows Credential Manager (PowerShell)",
    lookup: (name) => [
      "-NoProfile",
      "-NonInteractive",
      "-Command",
      // NAME is letters, digits and `_.@-` (KEYCHAIN_ENTRY): nothing in it can end the quote.
      `${VAULT}; try { $c = $v.Retrieve('${SERVICE}', '${name}') } catch { exit ${WINDOWS_MISSING} }; ` +
      "$c.RetrievePassword(); [Console]::OutputEncoding = [Text.Encoding]::UTF8; " +
      "[Console]::Out.Write($c.Password)",
    ],
    missing: (code) => code === WINDOWS_MISSING,
    store: (name) =>
      `powershell -NoProfile -Command "${VAULT}; $s = Read-Host -AsSecureString 'Value'; ` +
      `$v.Add((New-Object Windows.Security.Credentials.PasswordCredential('${SERVICE}', ` +
      `'${name}', [Net.NetworkCredential]::new('', $s).Password)))"`,
    install: "patchbay reads the Credential Manager through Windows PowerShell " +
      "(powershell.exe), part of Windows: check that it is on PATH",
    reach: "run the lookup by hand in Windows PowerShell to see why the vault refuses it",
    env: [
      "PATH",
      "SystemRoot",
      "windir",
      "USERPROFILE",
      "USERNAME",
      "APPDATA",
      "LOCALAPPDATA",
      "TEMP",
      "TMP",
      "PSModulePath",
    ],
  },
};

/** The keychain tool of `os`, if patchbay knows one. */
export function keychainTool(os: typeof Deno.build.os = Deno.build.os): KeychainTool | undefined {
  return KEYCHAIN_TOOLS[os];
}

/** Options of {@linkcode readKeychain}. */
export interface KeychainReadOptions {
  /** Where the tool's variables come from (process environment over .env). */
  parentEnv: (name: string) => string | undefined;
  redactor: Redactor;
  /** @default keychainTool() */
  tool?: KeychainTool;
  /** @default DEFAULTS.secrets.keychainTimeoutSeconds × 1000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** How `loadConfig` reads `${keychain:NAME}` entries: the OS keychain, through its tool. */
export function keychainReader(
  env: Pick<Environment, "get">,
  redactor: Redactor,
): (names: readonly string[]) => Promise<ReadonlyMap<string, string>> {
  return (names) => readKeychain(names, { parentEnv: (name) => env.get(name), redactor });
}

/** Values read in this process, by entry: each is asked for once (one unlock prompt). */
const READ = new Map<string, string>();

/**
 * The values of entries `names`, each read once per process (in order, so a locked
 * keychain asks to be unlocked once). Throws {@linkcode KeychainError} for the first entry
 * that cannot be read, the others that cannot listed in its details.
 */
export async function readKeychain(
  names: readonly string[],
  options: KeychainReadOptions,
): Promise<Map<string, string>> {
  const tool = options.tool ?? keychainTool();
  const values = new Map<string, string>();
  const failures: KeychainError[] = [];
  for (const name of names) {
    const known = READ.get(name);
    if (known !== undefined) {
      values.set(name, known);
      continue;
    }
    if (!tool) {
      failures.push(unsupported(name));
      continue;
    }
    const outcome = await readEntry(name, tool, options);
    if (outcome instanceof KeychainError) {
      failures.push(outcome);
      // Without a keychain to ask, the other entries would only say so again.
      if (outcome.problem === "unavailable") break;
      continue;
    }
    options.redactor.addSecret(outcome);
    READ.set(name, outcome);
    values.set(name, outcome);
  }
  if (failures.length > 0) {
    const [first, ...others] = failures;
    throw new KeychainError(first.entry, first.problem, {
      reason: first.reason,
      remedy: first.remedies,
      details: [
        ...first.details,
        ...others.map((other) =>
          other.problem === "missing" && tool
            ? `also ${other.message}: store it with \`${tool.store(other.entry)}\``
            : `also ${other.message}: ${other.reason}`
        ),
      ],
    });
  }
  return values;
}

async function readEntry(
  name: string,
  tool: KeychainTool,
  options: KeychainReadOptions,
): Promise<string | KeychainError> {
  if (!KEYCHAIN_ENTRY.test(name)) {
    // The configuration's reader refuses such names; never pass one to a shell.
    return new KeychainError(name, "missing", {
      reason: "an entry's name is letters, digits and _ . @ -, not starting with -",
      remedy: SECRETS_STEPS.renameEntry,
    });
  }
  const env: Record<string, string> = {};
  for (const variable of tool.env) {
    const value = options.parentEnv(variable);
    if (value !== undefined) env[variable] = value;
  }
  const result = await runProgram(
    { command: tool.program, args: tool.lookup(name), env },
    {
      timeoutMs: options.timeoutMs ?? DEFAULTS.secrets.keychainTimeoutSeconds * 1000,
      maxStdoutBytes: DEFAULTS.secrets.helperMaxOutputBytes,
      signal: options.signal,
    },
  );
  const details = result.stderr ? [`${STDERR_DETAIL}${result.stderr}`] : [];
  if (result.ok) {
    const value = new TextDecoder().decode(result.stdout).replace(/\r?\n$/, "");
    if (value !== "") return value;
    return missing(name, tool, `${tool.label} holds entry '${name}' of service ${SERVICE}, empty`);
  }
  const failure = result.failure;
  if (failure.kind === "exit" && !failure.signal && tool.missing(failure.code, result.stderr)) {
    return missing(
      name,
      tool,
      `${tool.label} has no entry of service ${SERVICE} and account ${name}`,
    );
  }
  return new KeychainError(name, "unavailable", { ...unreachable(failure, tool), details });
}

function missing(name: string, tool: KeychainTool, reason: string): KeychainError {
  return new KeychainError(name, "missing", {
    reason,
    remedy: again(`store it with \`${tool.store(name)}\` (it asks for the value)`),
  });
}

function unreachable(
  failure: RunFailure,
  tool: KeychainTool,
): { reason: string; remedy: Remedy | string } {
  const fallback = SECRETS_STEPS.orFromEnv;
  switch (failure.kind) {
    case "not_found":
      return {
        reason: `${tool.program} is not installed (it is on no folder of PATH)`,
        remedy: again(`${tool.install}, ${fallback}`),
      };
    case "not_granted":
      return {
        reason: `Deno did not grant running ${tool.program} (${failure.flag})`,
        remedy: denoPermissionRemedy(failure.flag),
      };
    case "timeout":
      return {
        reason: `${tool.label} did not answer within ${failure.seconds} s (an unlock prompt ` +
          "left unanswered?)",
        remedy: again(tool.reach),
      };
    case "exit":
      return {
        reason: `${tool.program} could not read the keychain (${
          failure.signal ? `ended by ${failure.signal}` : `status ${failure.code}`
        })`,
        remedy: again(`${tool.reach}, ${fallback}`),
      };
    default:
      return {
        reason: `${tool.program} could not be used: ${describeRun(failure)}`,
        remedy: again(tool.reach),
      };
  }
}

function describeRun(failure: RunFailure): string {
  if (failure.kind === "not_executable") return failure.detail;
  if (failure.kind === "too_large") return `it printed more than ${failure.limit} bytes`;
  return "it was stopped";
}

function unsupported(name: string): KeychainError {
  return new KeychainError(name, "unavailable", {
    reason: `patchbay knows no keychain tool on ${Deno.build.os}`,
    remedy: SECRETS_STEPS.fromEnv,
  });
}

/** `fix`, then what reads the keychain again, on each surface. */
function again(fix: string): Remedy {
  return SECRETS_STEPS.keychainThen(fix);
}
