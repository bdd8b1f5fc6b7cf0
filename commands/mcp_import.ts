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
import { editEnvironment, editTarget, readTarget, userConfigFile } from "../lib/config/edit.ts";
import { maskedArgs } from "../lib/config/arg_secrets.ts";
import { type Converted, convertEntry } from "../lib/config/import_convert.ts";
import {
  clientFiles,
  CLIENTS,
  type Places,
  readSources,
  type SourceFile,
} from "../lib/config/import_sources.ts";
import { ruleAbidingName, serverNameProblem } from "../lib/config/server_name.ts";
import { referencedVariables } from "../lib/config/expand.ts";
import type { JsonValue } from "../lib/config/json.ts";
import { newDocument } from "../lib/config/json_edit.ts";
import { parseConfig } from "../lib/config/load.ts";
import { findSecrets } from "../lib/config/secrets.ts";
import type { Environment } from "../lib/env.ts";
import { PatchbayError } from "../lib/errors.ts";
import { Redactor } from "../lib/redact/redact.ts";
import { stdoutStyle } from "../lib/terminal/style.ts";
import { showName } from "../lib/text/names.ts";
import { hasHiddenCharacters } from "../lib/terminal/terminal.ts";
import { plural } from "../lib/text/text.ts";
import { type NamedEntry, refuseUnreadable, writeEntries } from "./_config_edit.ts";
import { type McpEditOptions, report, serversOf } from "./mcp.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

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
  /**
   * Keep the settings that widen trust (`trusted`, `"sampling": "allow"`, `roots`, …) of a
   * file that is not patchbay's own, which are otherwise left out. @default false
   */
  keepTrust?: boolean;
}

/** What became of one entry of a source file, decided before anything is printed. */
interface Outcome {
  /** The name as written in the source. */
  name: string;
  converted: Converted;
  /** Why it is not imported. */
  why?: string;
  /** The name it is imported under, when the rule for names renamed it. */
  renamed?: string;
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
      USAGE_STEPS.importWhich,
    );
  }
  const sources = await readSources(source, places);
  const target = editTarget(options);
  const { text } = await readTarget(target.file);
  // A file with a syntax error gets its located error before anything is listed.
  if (text !== undefined) await refuseUnreadable(target, text);
  const taken = new Map(Object.keys(text ? serversOf(text) : {}).map((n) => [n, target.file]));
  const env = await editEnvironment(target.envFile);
  // Every line printed passes one redactor holding every entry's secrets (and catching
  // secret-shaped text): a token may sit anywhere in a file from a cloned project, a
  // name or a skip reason included.
  const redactor = new Redactor();
  const say = (text: string) => showName(redactor.redact(text));
  const decided = sources.map((file) => {
    const own = isOwnFile(file.path);
    const keepTrust = own || options.keepTrust === true;
    return {
      file,
      own,
      outcomes: Object.keys(file.entries).map((name) =>
        decide(name, file, { places, keepTrust, taken, env, target: target.file, redactor })
      ),
    };
  });
  const style = stdoutStyle();
  const accepted: NamedEntry[] = [];
  const trustLeftOut: string[] = [];
  const trustKept: string[] = [];
  let skipped = 0;
  for (const { file, own, outcomes } of decided) {
    console.log(style.bold(say(`From ${file.path}`)) + style.dim(say(` (${file.section})`)));
    if (outcomes.length === 0) console.log(style.dim("  no servers"));
    for (const { name, converted, why, renamed } of outcomes) {
      // A project's file may come with a cloned repository: nothing in it reaches the
      // terminal with its control characters, and what is shown is what would be written
      // (escaped, on one line), never a cleaned look-alike of it.
      if (why) {
        skipped++;
        console.log(`  ${style.red("✗")} ${say(name)}: not imported: ${say(why)}`);
        continue;
      }
      const imported = renamed ?? name;
      accepted.push([imported, converted.entry!]);
      console.log(`  ${style.green("+")} ${say(imported)}  ${say(summary(converted.entry!))}`);
      if (renamed) {
        console.log(style.dim(`      renamed: ${say(`'${name}' is '${renamed}' here`)}`));
      }
      for (const note of converted.notes) console.log(style.dim(`      converted: ${say(note)}`));
      // A ${VAR} in a cloned project's entry hands the server one of your values (an API
      // key from .env, say): named, so it is seen before it is given.
      const given = variablesGiven(converted.entry!);
      if (given.length > 0) {
        console.log(
          `      ${style.yellow("gives it:")} ${
            say(given.map((name) => `\${${name}}`).join(", "))
          }` +
            style.dim(" (values from your environment or .env)"),
        );
      }
      for (const left of converted.dropped) console.log(style.dim(`      left out: ${say(left)}`));
      for (const trust of converted.trust) {
        const shown = `${trust.shown} (${trust.effect})`;
        if (keptFrom(own, options) === undefined) {
          trustLeftOut.push(`${imported}: ${trust.shown}`);
          console.log(`      ${style.yellow("left out, widens trust:")} ${say(shown)}`);
        } else {
          trustKept.push(`${imported}: ${trust.shown}`);
          console.log(
            `      ${style.yellow(`kept (${keptFrom(own, options)}), widens trust:`)} ${
              say(shown)
            }`,
          );
        }
      }
    }
  }
  if (accepted.length > MAX_IMPORTED_SERVERS) {
    throw new PatchbayError("usage", "Too many servers to import", {
      reason: `the source holds ${accepted.length} servers that could be imported; one ` +
        `import adds at most ${MAX_IMPORTED_SERVERS} (each is a process or connection ` +
        "started with every session)",
      remedy: USAGE_STEPS.importFewer,
    });
  }
  if (accepted.length === 0) {
    throw new PatchbayError("usage", "Nothing to import", {
      reason: skipped > 0
        ? `none of the ${plural(skipped, "server")} found could be imported (reasons above)`
        : "the files hold no servers",
      remedy: USAGE_STEPS.importNothing,
    });
  }
  const counts = `${plural(accepted.length, "server")}` +
    (skipped > 0 ? ` (${skipped} not imported)` : "");
  if (options.dryRun) {
    console.log(`Would add ${counts} to ${target.file}; nothing written (--dry-run)`);
  } else {
    const written = await writeEntries(target, accepted, options);
    report(`Added ${counts} to`, target, written, "the entries");
  }
  if (trustLeftOut.length > 0) {
    console.log(say(
      `Left out ${plural(trustLeftOut.length, "setting")} that widen trust ` +
        `(${trustLeftOut.join("; ")}): a file that is not patchbay's own does not give ` +
        "trust; --keep-trust keeps them, once you have read them above",
    ));
  }
  if (trustKept.length > 0) {
    console.log(say(
      `Kept ${plural(trustKept.length, "setting")} that widen trust (${trustKept.join("; ")})`,
    ));
  }
  return EXIT.ok;
}

/** The variables whose values the entry passes to its server (env, args, headers, url…). */
function variablesGiven(entry: Record<string, JsonValue>): string[] {
  const names = new Set<string>();
  const visit = (value: JsonValue) => {
    if (typeof value === "string") referencedVariables(value).forEach((n) => names.add(n));
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(visit);
  };
  visit(entry);
  return [...names];
}

/** Why trust settings are kept, in words; `undefined` when they are left out. */
function keptFrom(own: boolean, options: McpImportOptions): string | undefined {
  return own ? "your own configuration" : options.keepTrust ? "--keep-trust" : undefined;
}

/**
 * patchbay's own file: the user's configuration (`~/.config/patchbay`), whose settings are
 * the person's already. Any other file, a project's servers_config.json included, may have
 * come with a cloned repository.
 */
function isOwnFile(path: string): boolean {
  try {
    return Deno.realPathSync(path) === Deno.realPathSync(userConfigFile());
  } catch {
    return false;
  }
}

/** Converts one entry and decides whether (and under which name) it is imported. */
function decide(
  name: string,
  file: SourceFile,
  context: {
    places: Places;
    keepTrust: boolean;
    taken: Map<string, string>;
    env: Environment;
    target: string;
    redactor: Redactor;
  },
): Outcome {
  const raw = file.entries[name];
  const converted = convertEntry(name, raw, file, context.places, {
    keepTrust: context.keepTrust,
  });
  for (const entry of [raw, converted.entry]) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
    for (const secret of findSecrets("", entry, context.env)) {
      context.redactor.addSecret(secret.value);
    }
    if (typeof entry.url === "string") context.redactor.addUrlSecrets(entry.url);
  }
  if (hasHiddenCharacters(name)) {
    return { name, converted, why: "its name holds control characters" };
  }
  // The rule `mcp add` applies (lib/config/server_name.ts): another client's "github.com"
  // is imported as "github-com"; a path, a shell character or a look-alike letter is not.
  const problem = serverNameProblem(name);
  const renamed = problem === undefined ? undefined : ruleAbidingName(name);
  if (problem !== undefined && renamed === undefined) {
    return { name, converted, why: `its name cannot be a server's: ${problem}` };
  }
  const imported = renamed ?? name;
  const why = converted.skipped ?? collision(imported, context.taken) ??
    problemsOf(imported, converted, context.target, context.env);
  if (why) return { name, converted, why };
  context.taken.set(imported, file.path);
  return { name, converted, renamed };
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
