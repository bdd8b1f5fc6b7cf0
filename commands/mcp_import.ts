/**
 * `patchbay mcp import <client|path>`: the servers of Claude Desktop, Claude Code, Cursor,
 * VS Code or gemini-cli (from their standard places, or a file named by path) added to
 * servers_config.json in patchbay's own field names. It shows what it will add and what
 * it converted, says what it left out and why, and moves secrets to .env when the person
 * agrees (commands/_config_edit.ts).
 *
 * @module
 */

import { EXIT, UsageError } from "../lib/errors.ts";
import { editEnvironment, editTarget, readTarget } from "../lib/config/edit.ts";
import { maskedArgs } from "../lib/config/arg_secrets.ts";
import { type Converted, convertEntry } from "../lib/config/import_convert.ts";
import { clientFiles, CLIENTS, readSources } from "../lib/config/import_sources.ts";
import type { JsonValue } from "../lib/config/json.ts";
import { newDocument } from "../lib/config/json_edit.ts";
import { parseConfig } from "../lib/config/load.ts";
import { findSecrets } from "../lib/config/secrets.ts";
import type { Environment } from "../lib/env.ts";
import { PatchbayError } from "../lib/errors.ts";
import { Redactor } from "../lib/redact.ts";
import { stdoutStyle } from "../lib/style.ts";
import { showName } from "../lib/names.ts";
import { hasHiddenCharacters } from "../lib/terminal.ts";
import { plural } from "../lib/text.ts";
import { type NamedEntry, refuseUnreadable, writeEntries } from "./_config_edit.ts";
import { type McpEditOptions, report, serversOf } from "./mcp.ts";

/**
 * Most servers one import adds. Every configured server is started (a process, or a
 * connection) with each session, and a file from a cloned project is not the person's
 * own: ten thousand entries in it must not become ten thousand processes.
 */
export const MAX_IMPORTED_SERVERS = 100;

/** Options of `mcp import`. */
export interface McpImportOptions extends McpEditOptions {
  /** Show what would be added, write nothing. @default false */
  dryRun?: boolean;
}

/** Runs the import. */
export async function mcpImport(
  source: string | undefined,
  options: McpImportOptions,
): Promise<number> {
  const places = { home: homeFolder(), cwd: Deno.cwd(), appData: variable("APPDATA") };
  if (source === undefined) {
    const found = CLIENTS.map((client) => {
      const files = clientFiles(client, places).filter(exists);
      return `  ${client.padEnd(15)} ${files.length > 0 ? files.join(", ") : "(no file found)"}`;
    });
    throw new UsageError(
      `say where to import from:\n${found.join("\n")}`,
      "patchbay mcp import <client> (one of the names above), or patchbay mcp import <path>",
    );
  }
  const sources = await readSources(source, places);
  const target = editTarget(options);
  const { text } = await readTarget(target.file);
  // A file with a syntax error gets its located error before anything is listed.
  if (text !== undefined) await refuseUnreadable(target, text);
  const taken = new Map(Object.keys(text ? serversOf(text) : {}).map((n) => [n, target.file]));
  const env = await editEnvironment(target.envFile);
  const style = stdoutStyle();
  const accepted: NamedEntry[] = [];
  let skipped = 0;
  for (const file of sources) {
    console.log(style.bold(`From ${file.path}`) + style.dim(` (${file.section})`));
    const names = Object.keys(file.entries);
    if (names.length === 0) console.log(style.dim("  no servers"));
    for (const name of names) {
      // A project's file may come with a cloned repository: nothing in it reaches the
      // terminal with its control characters, and what is shown is what would be written
      // (escaped, on one line), never a cleaned look-alike of it.
      const shown = showName(name);
      const converted = convertEntry(name, file.entries[name], file, places);
      const why = (hasHiddenCharacters(name) ? "its name holds control characters" : undefined) ??
        converted.skipped ?? collision(name, taken) ??
        problemsOf(name, converted, target.file, env);
      if (why) {
        skipped++;
        const said = converted.entry ? secretsOf(converted.entry, env, why) : why;
        console.log(`  ${style.red("✗")} ${shown}: not imported: ${showName(said)}`);
        continue;
      }
      taken.set(name, file.path);
      accepted.push([name, converted.entry!]);
      // What is printed names the secrets' places, never their values.
      const masked = (text: string) => showName(secretsOf(converted.entry!, env, text));
      console.log(`  ${style.green("+")} ${shown}  ${masked(summary(converted.entry!))}`);
      for (const note of converted.notes) {
        console.log(style.dim(`      converted: ${masked(note)}`));
      }
      for (const left of converted.dropped) {
        console.log(style.dim(`      left out: ${masked(left)}`));
      }
    }
  }
  if (accepted.length > MAX_IMPORTED_SERVERS) {
    throw new PatchbayError("usage", "Too many servers to import", {
      reason: `the source holds ${accepted.length} servers that could be imported; one ` +
        `import adds at most ${MAX_IMPORTED_SERVERS} (each is a process or connection ` +
        "started with every session)",
      remedy: "keep only the servers you want in a copy of the file and import that, or add " +
        "them one at a time with `patchbay mcp add`",
    });
  }
  if (accepted.length === 0) {
    throw new PatchbayError("usage", "Nothing to import", {
      reason: skipped > 0
        ? `none of the ${plural(skipped, "server")} found could be imported (reasons above)`
        : "the files hold no servers",
      remedy: "add servers with `patchbay mcp add`, or name another source",
    });
  }
  const counts = `${plural(accepted.length, "server")}` +
    (skipped > 0 ? ` (${skipped} not imported)` : "");
  if (options.dryRun) {
    console.log(`Would add ${counts} to ${target.file}; nothing written (--dry-run)`);
    return EXIT.ok;
  }
  const written = await writeEntries(target, accepted, options);
  report(`Added ${counts} to`, target, written, "the entries");
  return EXIT.ok;
}

function collision(name: string, taken: Map<string, string>): string | undefined {
  const where = taken.get(name);
  if (where === undefined) return undefined;
  return `a server '${name}' is already in ${where} (patchbay mcp remove ${name}, then import ` +
    "again, to take this one)";
}

/** The problems `config check` would find in the entry alone; `undefined` when none. */
function problemsOf(
  name: string,
  converted: Converted,
  file: string,
  env: Environment,
): string | undefined {
  const text = newDocument({
    LLM: { provider: "openai", model: "check" },
    mcpServers: { [name]: converted.entry! },
  });
  try {
    parseConfig(text, file, env);
    return undefined;
  } catch (error) {
    const problems = (error as { problems?: { path: string; message: string; hint?: string }[] })
      .problems;
    if (!problems) throw error;
    return problems.map((p) => `${p.path}: ${p.message}${p.hint ? ` (${p.hint})` : ""}`)
      .join("; ");
  }
}

/** `text` with the secrets of `entry` (and anything shaped like one) masked. */
function secretsOf(entry: Record<string, JsonValue>, env: Environment, text: string): string {
  const redactor = new Redactor();
  for (const secret of findSecrets("", entry, env)) redactor.addSecret(secret.value);
  if (typeof entry.url === "string") redactor.addUrlSecrets(entry.url);
  return redactor.redact(text);
}

function summary(entry: Record<string, JsonValue>): string {
  const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
  const where = entry.transport_type === "stdio"
    ? [entry.command, ...maskedArgs(args)].join(" ")
    : String(entry.url);
  return `${String(entry.transport_type).padEnd(15)}  ${where}` +
    (entry.disabled === true ? "  (disabled)" : "");
}

function homeFolder(): string {
  return variable("HOME") ?? variable("USERPROFILE") ?? Deno.cwd();
}

function variable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
