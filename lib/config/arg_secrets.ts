/**
 * Secrets passed to a stdio server as command arguments: the value of a secret-bearing
 * flag (`--api-key VALUE`, `--token=VALUE`, `--bot-token VALUE`) and any argument holding a
 * credential-shaped value (`ghp_…`, `sk-…`, `Authorization: Bearer …`). They are masked
 * wherever patchbay prints a command line, and `patchbay mcp` moves them to .env like the
 * secrets of `env` and `headers` (arguments expand `${VAR}`).
 *
 * @module
 */

import { REDACTED, Redactor } from "../redact/redact.ts";

/** One secret found in a command's arguments. */
export interface ArgSecret {
  /** Index of the argument that holds it. */
  index: number;
  /** The secret itself (never printed). */
  value: string;
  /** The argument with `reference` in place of the secret. */
  replace(reference: string): string;
  /** The flag it is the value of (`--api-key`), when it is one. */
  flag?: string;
}

/**
 * A flag whose last word names a credential (`--api-key`, `--bot-token`, `--client-secret`,
 * `--password`). Its other words may say what the value is about instead
 * (`--token-endpoint`, `--auth-timeout`, `--key-file`): those are not secrets.
 */
const SECRET_FLAG =
  /(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH|PAT)$/;

/** Whether `flag` (`--api-key`, `-token`) takes a secret as its value. */
export function isSecretFlag(flag: string): boolean {
  if (!/^--?[A-Za-z]/.test(flag)) return false;
  return SECRET_FLAG.test(flag.replace(/^-+/, "").toUpperCase().replace(/[^A-Z0-9]+/g, "_"));
}

/** Patterns only: registered values have no place in deciding what an argument holds. */
const SHAPES = new Redactor();

/** The secrets in `args`, in order; a value already written as `${VAR}` is none. */
export function argSecrets(args: readonly string[]): ArgSecret[] {
  const found: ArgSecret[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const equals = arg.indexOf("=");
    if (arg.startsWith("-") && equals > 0 && isSecretFlag(arg.slice(0, equals))) {
      const flag = arg.slice(0, equals);
      const value = arg.slice(equals + 1);
      if (usable(value)) {
        found.push({ index: i, value, flag, replace: (ref) => `${flag}=${ref}` });
      }
      continue;
    }
    if (equals < 0 && isSecretFlag(arg) && i + 1 < args.length) {
      const value = args[i + 1];
      if (usable(value) && !value.startsWith("-")) {
        found.push({ index: i + 1, value, flag: arg, replace: (ref) => ref });
        i++;
        continue;
      }
    }
    const shaped = shapedSecret(arg);
    if (shaped) found.push({ index: i, ...shaped });
  }
  return found;
}

/** `args` as they may be printed: every secret replaced by `[REDACTED]`. */
export function maskedArgs(args: readonly string[]): string[] {
  const out = [...args];
  for (const secret of argSecrets(args)) out[secret.index] = secret.replace(REDACTED);
  return out.map((arg) => SHAPES.redact(arg));
}

function usable(value: string): boolean {
  return value !== "" && !value.includes("${");
}

/** The one credential-shaped part of `arg` (the redaction patterns find it), if any. */
export function shapedSecret(arg: string): Omit<ArgSecret, "index"> | undefined {
  if (arg.includes("${")) return undefined;
  const redacted = SHAPES.redact(arg);
  if (redacted === arg) return undefined;
  const parts = redacted.split(REDACTED);
  if (parts.length !== 2) return undefined;
  const [before, after] = parts;
  if (!arg.startsWith(before) || !arg.endsWith(after)) return undefined;
  const value = arg.slice(before.length, arg.length - after.length);
  if (!usable(value)) return undefined;
  return { value, replace: (ref) => `${before}${ref}${after}` };
}
