/**
 * Reading a refusal of Deno's sandbox (`Deno.errors.NotCapable`): which grant would have
 * allowed it. The typed error that reports it is `DenoPermissionError` (lib/errors.ts),
 * and what to do about it is `denoPermissionRemedy` (remedy.ts). A leaf: it imports
 * nothing from lib/ but the cause-chain walker, so any module may read a denial.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { causeChain } from "../cause_chain.ts";

/**
 * Turns a Deno sandbox refusal (`Deno.errors.NotCapable`) into the flag that would allow
 * it, e.g. `--allow-net=127.0.0.1:8080`. Returns `undefined` for any other error.
 */
export function denoPermissionFlag(error: unknown): string | undefined {
  const denial = findDenoDenial(error);
  if (!denial) return undefined;
  const match = /Requires (\w+) access to "([^"]+)"/.exec(denial.message);
  if (!match) return /--allow-[a-z-]+/.exec(denial.message)?.[0];
  const [, kind, value] = match;
  // Paths Deno guards itself (devices such as /dev/full, /proc) need --allow-all, which
  // takes no value: `--allow-all=<path>` is no flag.
  if (kind === "all") return "--allow-all";
  // A relative path in the flag would be resolved against wherever deno is started next.
  const absolute = (kind === "read" || kind === "write") && !isAbsolute(value)
    ? resolve(value)
    : value;
  return `--allow-${kind}=${absolute}`;
}

/**
 * The sandbox refusal behind `error`, if any: libraries (fetch, the SDKs, node:net) wrap
 * it in errors of their own, so `cause` chains and aggregated errors are searched too.
 */
export function findDenoDenial(
  error: unknown,
): InstanceType<typeof Deno.errors.NotCapable> | undefined {
  return causeChain(error).find((e): e is InstanceType<typeof Deno.errors.NotCapable> =>
    e instanceof Deno.errors.NotCapable
  );
}
