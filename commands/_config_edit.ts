/**
 * What the `mcp` commands that write entries share: the file created with an `LLM` block
 * when there is none, the secrets in new entries moved to .env when the person agrees (a
 * question at a terminal, `--move-secrets` or `--keep-secrets-inline` in scripts), and the
 * edit validated and written (lib/config/edit.ts).
 *
 * @module
 */

import { join } from "node:path";
import { DEFAULTS } from "../lib/defaults.ts";
import { EXIT, PatchbayError, policyRefusal, UsageError } from "../lib/errors.ts";
import { CONFIG_EDIT_STEPS } from "../lib/errors/config_edit_steps.ts";
import {
  commitEdit,
  editEnvironment,
  type EditTarget,
  readTarget,
  withEditLock,
} from "../lib/config/edit.ts";
import type { Environment } from "../lib/env.ts";
import { type JsonValue, parseJson } from "../lib/config/json.ts";
import { newDocument, setMember } from "../lib/config/json_edit.ts";
import { parseConfig } from "../lib/config/load.ts";
import type { Config } from "../lib/config/types.ts";
import { findSecrets, type FoundSecret, withReferences } from "../lib/config/secrets.ts";
import { PROJECT_DIR } from "../lib/cli/startup.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { MAX_CONFIG_BYTES, readBoundedText } from "../lib/files/bounded_read.ts";

/** How secrets found in new entries are handled. */
export interface SecretOptions {
  /** Move them to .env without asking. @default false */
  moveSecrets?: boolean;
  /** Keep them in the entry (the file must then be readable by its owner only). @default false */
  keepSecretsInline?: boolean;
}

/** One entry to write. */
export type NamedEntry = [name: string, entry: Record<string, JsonValue>];

/** What {@linkcode writeEntries} did. */
export interface Written {
  created: boolean;
  secrets: FoundSecret[];
  moved: boolean;
  /**
   * What reading the files together says of the new entries: one of the same name in the
   * other scope's file that it replaces, or that replaces it in this folder.
   */
  notes: string[];
}

/**
 * Warns, before anything is written, about the new entries `config` (the configuration
 * as the next start will read it) does not run as written: refused by the administrator's
 * policy, or replaced by the policy's own entry of that name.
 */
export function warnPolicy(config: Config, names: readonly string[]): void {
  for (const name of names) {
    const server = config.servers.find((s) => s.name === name);
    if (server?.refused) {
      const refusal = policyRefusal(name, server.refused);
      console.error(
        `warning: ${refusal.message}: ${server.refused.reason}. The entry is written, but ` +
          "patchbay will not start it while the policy says so (`patchbay mcp list` shows it)",
      );
    } else if (server?.scope === "managed" && config.policy) {
      console.error(
        `warning: the administrator's policy (${config.policy.file}) has its own entry ` +
          `'${name}', which is used instead of this one`,
      );
    }
  }
}

/** The notices about `names` (an entry of the same name replaced, or replacing). */
function notesOn(config: Config, names: readonly string[]): string[] {
  return (config.notices ?? []).filter((notice) =>
    names.some((name) => notice.startsWith(`Server '${name}': the entry of`))
  );
}

/** The configuration's text before the edit, or a new file's with the example's `LLM`. */
export async function startingText(target: EditTarget): Promise<{
  text: string;
  mode?: number;
  created: boolean;
}> {
  const { text, mode } = await readTarget(target.file);
  if (text === undefined) {
    return { text: newDocument({ LLM: await exampleLlm(), mcpServers: {} }), created: true };
  }
  await refuseUnreadable(target, text);
  const value = parseJson(text).value;
  const servers = isObject(value) ? value.mcpServers : undefined;
  if (servers === undefined) {
    return { text: setMember(text, [], "mcpServers", {}), mode, created: false };
  }
  return { text, mode, created: false };
}

/**
 * Throws the located error `config check` gives when `text` (the file `target` names) is
 * not JSON whose `mcpServers`, if any, is an object: an edit, or a search for an entry,
 * must not go on as if the broken file had no servers.
 */
export async function refuseUnreadable(target: EditTarget, text: string): Promise<void> {
  const parsed = parseJson(text);
  const value = parsed.value;
  const servers = isObject(value) ? value.mcpServers : undefined;
  if (
    parsed.faults.length > 0 || !isObject(value) || !(servers === undefined || isObject(servers))
  ) {
    parseConfig(text, target.file, await editEnvironment(target.envFile));
  }
}

function isObject(value: JsonValue | undefined): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The `LLM` block of the example configuration, for a new file. */
async function exampleLlm(): Promise<JsonValue> {
  try {
    const example = JSON.parse(
      await readBoundedText(join(PROJECT_DIR, DEFAULTS.exampleConfigFile), {
        what: "the example configuration",
        maxBytes: MAX_CONFIG_BYTES,
      }),
    );
    if (example?.LLM) return example.LLM;
  } catch {
    // A stripped install: the smallest block that names a provider and a model.
  }
  return { provider: "openai", model: "gpt-4o-mini" };
}

/**
 * Adds `entries` to the target's `mcpServers`: secrets handled as the person says, the
 * whole file validated, then written. The question about secrets is asked first; the file
 * is then read, checked and written under the edit lock (lib/config/edit.ts), so an entry
 * added meanwhile by another command is kept, and a name it took is refused, not replaced.
 */
export async function writeEntries(
  target: EditTarget,
  entries: readonly NamedEntry[],
  options: SecretOptions,
): Promise<Written> {
  const asked = await editEnvironment(target.envFile);
  const found = secretsOf(entries, asked);
  // Asked before the lock is taken: no other edit waits on a person's answer.
  const move = found.length > 0 && await decideSecrets(found, options, target);
  return await withEditLock(target, "write the new entries", async () => {
    const start = await startingText(target);
    refuseTaken(start.text, entries, target);
    const env = await editEnvironment(target.envFile);
    const secrets = secretsOf(entries, env);
    let text = start.text;
    for (const [name, entry] of entries) {
      const own = secrets.filter((s) => s.server === name);
      text = setMember(text, ["mcpServers"], name, move ? withReferences(entry, own) : entry);
    }
    const additions = new Map(
      move ? secrets.filter((s) => !s.present).map((s) => [s.variable, s.value]) : [],
    );
    if (secrets.length > 0 && !move) refuseWideFile(target, start.mode);
    const names = entries.map(([name]) => name);
    const config = await commitEdit({
      target,
      text,
      mode: start.mode,
      newMode: secrets.length > 0 && !move ? 0o600 : 0o644,
      envAdditions: additions,
      secrets: move ? [] : secrets.map((s) => s.value),
      beforeWrite: (config) => warnPolicy(config, names),
    });
    return { created: start.created, secrets, moved: move, notes: notesOn(config, names) };
  });
}

/** The secrets of `entries`, each with the variable it would move to. */
function secretsOf(entries: readonly NamedEntry[], env: Environment): FoundSecret[] {
  const chosen = new Map<string, string>();
  return entries.flatMap(([name, entry]) => findSecrets(name, entry, env, chosen));
}

/**
 * Refuses a name the file holds now (read under the lock): another command may have added
 * it since this one looked, and adding never replaces.
 */
function refuseTaken(text: string, entries: readonly NamedEntry[], target: EditTarget): void {
  const value = parseJson(text).value;
  const servers = isObject(value) && isObject(value.mcpServers) ? value.mcpServers : {};
  const taken = entries.map(([name]) => name).filter((name) => Object.hasOwn(servers, name));
  if (taken.length === 0) return;
  throw new PatchbayError(
    "usage",
    `Server '${taken[0]}' already exists in ${target.file}`,
    {
      reason: "adding it again would replace its entry" +
        (taken.length > 1
          ? ` (so would ${taken.length - 1} more: ${taken.slice(1).join(", ")})`
          : ""),
      remedy: CONFIG_EDIT_STEPS.nameTaken(taken[0]),
    },
  );
}

/** Secrets stay inline only in a file no one else may read. */
function refuseWideFile(target: EditTarget, mode: number | undefined): void {
  if (mode === undefined || (mode & 0o077) === 0 || Deno.build.os === "windows") return;
  throw new PatchbayError(
    "usage",
    `${target.file} is readable by others (mode ${mode.toString(8)}), so secrets are not ` +
      "written into it",
    {
      reason: "--keep-secrets-inline (or the answer n) keeps them in the entries, and the " +
        "file's mode lets other users read it",
      remedy: CONFIG_EDIT_STEPS.secretsInSharedFile(target.envFile, target.file),
      exitCode: EXIT.usage,
    },
  );
}

/** Whether to move `secrets` to .env: the flags, else the person at the terminal. */
async function decideSecrets(
  secrets: readonly FoundSecret[],
  options: SecretOptions,
  target: EditTarget,
): Promise<boolean> {
  if (options.moveSecrets && options.keepSecretsInline) {
    throw new UsageError(
      "--move-secrets and --keep-secrets-inline contradict each other",
      CONFIG_EDIT_STEPS.oneSecretsFlag,
    );
  }
  if (options.moveSecrets) return true;
  if (options.keepSecretsInline) return false;
  // Header names come from another client's file, perhaps a cloned project's.
  const listing = stripTerminalEscapes(
    secrets.map((s) => `  ${s.server}: ${s.field} -> \${${s.variable}}`).join("\n"),
  );
  if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) {
    throw new PatchbayError(
      "usage",
      `the new entries hold ${secrets.length === 1 ? "a secret" : `${secrets.length} secrets`} ` +
        `and nobody is at a terminal to say where they go:\n${listing}`,
      {
        reason: "stdin or stderr is not a terminal, so patchbay cannot ask, and it does not " +
          "guess where a secret goes",
        remedy: CONFIG_EDIT_STEPS.secretsFlag(target.envFile, target.file),
        exitCode: EXIT.usage,
      },
    );
  }
  console.error(
    `The new entries hold secrets:\n${listing}\n` +
      `Move them to ${target.envFile} (readable by you only), the entries referring to them? ` +
      "[Y/n] ",
  );
  const line = await readLine();
  const answer = line?.trim().toLowerCase();
  if (answer === "" || answer === "y" || answer === "yes") return true;
  if (answer === "n" || answer === "no") return false;
  // End of input (Ctrl+D) or a typo is no consent to either: nothing is written.
  throw new PatchbayError(
    "usage",
    line === undefined
      ? "No answer to the secrets question (end of input)"
      : `'${stripTerminalEscapes(line.trim())}' answers neither yes nor no`,
    {
      reason: "where the secrets go is the person's choice, so patchbay does not guess it",
      remedy: CONFIG_EDIT_STEPS.answerSecrets,
      exitCode: EXIT.usage,
    },
  );
}

/** One line from the terminal; `undefined` at the end of input. */
async function readLine(): Promise<string | undefined> {
  const buffer = new Uint8Array(1024);
  const count = await Deno.stdin.read(buffer);
  return count === null ? undefined : new TextDecoder().decode(buffer.subarray(0, count));
}
