/**
 * `patchbay mcp add|add-json|remove|enable|disable`: servers_config.json edited in place
 * from the command line (validated first, written atomically, the rest of the file kept
 * as written). Listing is `commands/mcp_list.ts`, importing `commands/mcp_import.ts`.
 * The guide is docs/managing-servers.md.
 *
 * @module
 */

import { EXIT, PatchbayError, UsageError } from "../lib/errors.ts";
import { MCP_EDIT_STEPS } from "../lib/errors/mcp_edit_steps.ts";
import { maskedArgs } from "../lib/config/arg_secrets.ts";
import { isSseAddress } from "../lib/config/servers.ts";
import {
  commitEdit,
  editEnvironment,
  type EditTarget,
  editTarget,
  readTarget,
  withEditLock,
} from "../lib/config/edit.ts";
import { type JsonValue, parseJson } from "../lib/config/json.ts";
import { removeMember, setMember } from "../lib/config/json_edit.ts";
import { Redactor } from "../lib/redact/redact.ts";
import { showName } from "../lib/text/names.ts";
import { ruleAbidingName, SERVER_NAME_RULE, serverNameProblem } from "../lib/config/server_name.ts";
import type { GlobalOptions } from "../lib/cli/startup.ts";
import { didYouMean, plural } from "../lib/text/text.ts";
import type { Config } from "../lib/config/types.ts";
import {
  refuseUnreadable,
  type SecretOptions,
  warnPolicy,
  writeEntries,
  type Written,
} from "./_config_edit.ts";

/** Options of the editing commands. */
export interface McpEditOptions extends GlobalOptions, SecretOptions {
  /** project (./servers_config.json) or user (~/.config/patchbay). @default "project" */
  scope?: string;
}

/** Options of `mcp add`. */
export interface McpAddOptions extends McpEditOptions {
  /**
   * The command line as typed and patchbay's own options (`-y`, `-c`, ...), which the
   * parser takes wherever they appear: one of them after the server's command was meant
   * for the server.
   */
  typed?: { words: readonly string[]; rootFlags: ReadonlySet<string> };
  /** stdio, http (streamable_http) or sse. @default stdio; for a URL, http (sse: `…/sse`) */
  transport?: string;
  /** `KEY=VALUE` for a stdio server's environment. */
  env?: string[];
  /** `Name: value` request headers of a server at a URL. */
  header?: string[];
}

/** What `--transport` takes, mapped to transport_type. */
const TRANSPORTS: Readonly<Record<string, string>> = {
  stdio: "stdio",
  http: "streamable_http",
  "streamable-http": "streamable_http",
  streamable_http: "streamable_http",
  sse: "sse",
};

/** `mcp add <name> <command-or-url> [args...]`. */
export async function mcpAdd(
  name: string,
  commandOrUrl: string,
  args: string[],
  options: McpAddOptions,
): Promise<number> {
  checkName(name);
  if (options.typed) refuseStrayFlags(options.typed, name, commandOrUrl);
  const transport = transportOf(commandOrUrl, options.transport);
  const env = pairs(options.env ?? [], "=", "-e", "KEY=VALUE");
  const headers = pairs(options.header ?? [], ":", "-H", '"Name: value"');
  let entry: Record<string, JsonValue>;
  if (transport === "stdio") {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(commandOrUrl)) {
      throw new UsageError(
        `'${new Redactor().redact(commandOrUrl)}' is a URL, and a stdio server is started by ` +
          "a command",
        MCP_EDIT_STEPS.urlNotStdio,
      );
    }
    if (headers.length > 0) {
      throw new UsageError("-H sets request headers, which a stdio server has none of", usage);
    }
    entry = { transport_type: transport, command: commandOrUrl };
    if (args.length > 0) entry.args = args;
    if (env.length > 0) entry.env = Object.fromEntries(env);
  } else {
    if (args.length > 0 || env.length > 0) {
      const what = args.length > 0
        ? `arguments (${maskedArgs(args).join(" ")})`
        : "environment variables (-e)";
      throw new UsageError(
        `${what} only apply to a stdio server; '${commandOrUrl}' is reached at a URL`,
        MCP_EDIT_STEPS.stdioOnly,
      );
    }
    entry = { transport_type: transport, url: commandOrUrl };
    if (headers.length > 0) entry.headers = Object.fromEntries(headers);
  }
  const target = editTarget(options);
  await refuseExisting(target, name);
  const written = await writeEntries(target, [[name, entry]], options);
  report(`Added ${transport} server '${name}' to`, target, written);
  return EXIT.ok;
}

const usage = "usage: patchbay mcp add <name> [--transport stdio|http|sse] [-e KEY=VALUE]... " +
  '[-H "Name: value"]... (<url> | -- <command> [args...])';

/** `mcp add-json <name> '<json>'`: an entry in any client's dialect, validated as written. */
export async function mcpAddJson(name: string, json: string, options: McpEditOptions) {
  checkName(name);
  const parsed = parseJson(json);
  if (parsed.faults.length > 0) {
    const fault = parsed.faults[0];
    throw new UsageError(
      `the entry is not JSON: ${fault.message} at column ${fault.position.column}`,
      MCP_EDIT_STEPS.entryNotJson(fault.hint),
    );
  }
  const entry = parsed.value;
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    throw new UsageError(
      "the entry must be a JSON object",
      MCP_EDIT_STEPS.entryNotObject,
    );
  }
  const target = editTarget(options);
  await refuseExisting(target, name);
  const written = await writeEntries(target, [[name, entry]], options);
  report(`Added server '${name}' to`, target, written);
  return EXIT.ok;
}

/** `mcp remove <name>`. */
export async function mcpRemove(name: string, options: McpEditOptions): Promise<number> {
  const { target } = await holding(name, options);
  const { entry, next } = await withEditLock(target, `remove server '${name}'`, async () => {
    // Read again under the lock: another edit may have changed the file since.
    const { text, mode, entry } = await heldIn(target, name);
    const next = removeMember(text, ["mcpServers"], name);
    await commitEdit({ target, text: next, mode });
    return { entry, next };
  });
  console.log(`Removed server '${name}' from ${target.file}`);
  // Its secrets stay where the person put them: say which ones nothing refers to now.
  const env = await editEnvironment(target.envFile);
  const left = [...referencesIn(entry)].filter((variable) =>
    env.fileValue(variable) !== undefined && !referencesIn(parseJson(next).value).has(variable)
  );
  if (left.length > 0) {
    console.log(
      `${target.envFile} still holds ${left.join(", ")}, which no server refers to now ` +
        `(delete ${left.length === 1 ? "its line" : "their lines"} there if you no longer ` +
        "need them)",
    );
  }
  return EXIT.ok;
}

/** `mcp enable <name>` and `mcp disable <name>`: the entry's own field set. */
export async function mcpSetEnabled(
  name: string,
  enabled: boolean,
  options: McpEditOptions,
): Promise<number> {
  const { target } = await holding(name, options);
  const state = enabled ? "enabled" : "disabled";
  const changed = await withEditLock(
    target,
    `${enabled ? "enable" : "disable"} '${name}'`,
    async () => {
      const { text, mode, entry } = await heldIn(target, name);
      const path = ["mcpServers", name];
      const disabled = entry.disabled === true ||
        (entry.disabled === undefined && entry.enabled === false);
      if (disabled === !enabled) return false;
      // The entry keeps the field it has: another client's `enabled`, else `disabled`.
      const next = typeof entry.enabled === "boolean" && entry.disabled === undefined
        ? setMember(text, path, "enabled", enabled)
        : setMember(text, path, "disabled", !enabled);
      // Enabling a server the administrator's policy refuses is written, with a warning.
      const beforeWrite = enabled ? (config: Config) => warnPolicy(config, [name]) : undefined;
      await commitEdit({ target, text: next, mode, beforeWrite });
      return true;
    },
  );
  if (!changed) {
    console.log(`Server '${name}' is already ${state} in ${target.file}`);
    return EXIT.ok;
  }
  console.log(
    `Server '${name}' is ${state} in ${target.file}` +
      (enabled ? "" : " (kept, not started; `patchbay mcp enable` undoes it)"),
  );
  return EXIT.ok;
}

/**
 * The file that holds `name`: the one the scope names, else (no scope or --config given)
 * the user's own when only it has the server.
 */
async function holding(name: string, options: McpEditOptions): Promise<{
  target: EditTarget;
  text: string;
  mode?: number;
  entry: Record<string, JsonValue>;
}> {
  const targets = [editTarget(options)];
  if (options.scope === undefined && options.config === undefined) {
    targets.push(editTarget({ ...options, scope: "user" }));
  }
  const names: string[] = [];
  for (const target of targets) {
    const { text, mode } = await readTarget(target.file);
    if (text === undefined) continue;
    // A file with a syntax error gets its located error, not "no server there".
    await refuseUnreadable(target, text);
    const servers = serversOf(text);
    const entry = servers[name];
    if (entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
      return { target, text, mode, entry };
    }
    names.push(...Object.keys(servers));
  }
  const suggestion = didYouMean(name, names);
  const where = targets.map((t) => t.file).join(" or ");
  throw new PatchbayError("usage", `No server '${name}' in ${where}`, {
    reason: names.length === 0
      ? "no server is configured there"
      : `its servers are ${names.join(", ")}`,
    remedy: suggestion
      ? `did you mean '${suggestion}'?`
      : "`patchbay mcp list` shows the servers; --scope user edits the user's own file",
    exitCode: EXIT.failure,
  });
}

/** The entry `name` in `target`'s file as it is now; refused when it is gone meanwhile. */
async function heldIn(target: EditTarget, name: string): Promise<{
  text: string;
  mode?: number;
  entry: Record<string, JsonValue>;
}> {
  const { text, mode } = await readTarget(target.file);
  const entry = text === undefined ? undefined : serversOf(text)[name];
  if (text !== undefined && entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
    return { text, mode, entry };
  }
  throw new PatchbayError("usage", `No server '${name}' in ${target.file} any more`, {
    reason: "another command changed the file while this one waited for it",
    remedy: MCP_EDIT_STEPS.removedMeanwhile,
  });
}

/** The variables a JSON value refers to as `${VAR}` or `${env:VAR}`, anywhere in it. */
function referencesIn(value: JsonValue | undefined, into = new Set<string>()): Set<string> {
  if (typeof value === "string") {
    for (const [, name] of value.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)/g)) {
      into.add(name);
    }
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) referencesIn(item, into);
  }
  return into;
}

/** The `mcpServers` object of a configuration text; empty when it has none. */
export function serversOf(text: string): Record<string, JsonValue> {
  const value = parseJson(text).value;
  const servers = value !== null && typeof value === "object" && !Array.isArray(value)
    ? value.mcpServers
    : undefined;
  return servers !== null && typeof servers === "object" && !Array.isArray(servers) ? servers : {};
}

async function refuseExisting(target: EditTarget, name: string): Promise<void> {
  const { text } = await readTarget(target.file);
  if (text === undefined) return;
  await refuseUnreadable(target, text);
  if (!Object.hasOwn(serversOf(text), name)) return;
  throw new PatchbayError("usage", `Server '${name}' already exists in ${target.file}`, {
    reason: "adding it again would replace its entry",
    remedy: MCP_EDIT_STEPS.nameTaken(name),
  });
}

/** The one rule for names (lib/config/server_name.ts), as import and `config check` apply it. */
function checkName(name: string): void {
  const problem = serverNameProblem(name);
  if (problem === undefined) return;
  const suggestion = ruleAbidingName(name);
  throw new UsageError(
    `'${
      showName(name.length > 80 ? `${name.slice(0, 80)}…` : name)
    }' cannot name a server: ${problem}`,
    MCP_EDIT_STEPS.serverName(SERVER_NAME_RULE, suggestion),
  );
}

function transportOf(commandOrUrl: string, written: string | undefined): string {
  if (written === undefined) {
    if (!/^https?:\/\//i.test(commandOrUrl)) return "stdio";
    // As a `url` without transport_type is read: `/sse` is the legacy transport's address.
    return isSseAddress(commandOrUrl) ? "sse" : "streamable_http";
  }
  const transport = TRANSPORTS[written];
  if (!transport) {
    throw new UsageError(`unknown transport '${written}'`, MCP_EDIT_STEPS.transport);
  }
  return transport;
}

/**
 * Refuses patchbay's own options written after the server's command without `--`
 * (`mcp add fs npx -y pkg`): the parser took them (`-y` as `--yes`, `-c` as `--config`), so
 * the server would silently lose them, or another file would be edited.
 */
function refuseStrayFlags(
  typed: NonNullable<McpAddOptions["typed"]>,
  name: string,
  commandOrUrl: string,
): void {
  const end = typed.words.indexOf("--");
  const words = end < 0 ? typed.words : typed.words.slice(0, end);
  const add = words.findIndex((w, i) => w === "add" && words.slice(0, i).includes("mcp"));
  const named = words.indexOf(name, add + 1);
  const command = named < 0 ? -1 : words.indexOf(commandOrUrl, named + 1);
  if (add < 0 || command < 0) return;
  for (const word of words.slice(command + 1)) {
    const flag = word.includes("=") ? word.slice(0, word.indexOf("=")) : word;
    if (!word.startsWith("-") || !typed.rootFlags.has(flag)) continue;
    throw new UsageError(
      `'${word}' after '${commandOrUrl}' is taken as patchbay's own option, not the server's`,
      MCP_EDIT_STEPS.separateFlags(name, commandOrUrl),
    );
  }
}

/** `KEY=VALUE` (or `Name: value`) words as pairs. */
function pairs(words: string[], separator: string, flag: string, form: string): [string, string][] {
  return words.map((word) => {
    const at = word.indexOf(separator);
    const key = at > 0 ? word.slice(0, at).trim() : "";
    if (key === "") {
      // The word is not echoed: `-e $TOKEN` expands to the secret itself.
      throw new UsageError(
        `${flag} takes ${form}; the value given has ${at < 0 ? "no" : "nothing before its"} ` +
          `'${separator}' (not shown: it may be a secret)`,
        MCP_EDIT_STEPS.flagForm(flag, form),
      );
    }
    return [key, word.slice(at + 1).trim()] as [string, string];
  }).map((pair, i, all) => {
    // Header names are case-insensitive; a second value would silently replace the first.
    const same = (key: string) => flag === "-H" ? key.toLowerCase() : key;
    if (all.findIndex(([key]) => same(key) === same(pair[0])) !== i) {
      throw new UsageError(
        `${flag} gives ${pair[0]} twice; only one value can be kept`,
        MCP_EDIT_STEPS.once(pair[0]),
      );
    }
    return pair;
  });
}

/**
 * What an edit wrote: the file (and whether it was created), the notices about other
 * configuration files, and where the secrets went (in `kept`, the entry or entries).
 */
export function report(
  what: string,
  target: EditTarget,
  written: Written,
  kept = "the entry",
): void {
  const created = written.created ? ` (created, with the example's LLM block)` : "";
  console.log(`${what} ${target.file}${created}`);
  for (const note of written.notes) console.log(`Note: ${note}`);
  if (written.secrets.length === 0) return;
  const names = [...new Set(written.secrets.map((s) => s.variable))];
  const variables = names.join(", ");
  console.log(
    written.moved
      ? `Moved ${plural(names.length, "secret")} to ${target.envFile} ` +
        `(readable by you only): ${variables}`
      : `Kept ${plural(names.length, "secret")} in ${kept}; ${target.file} is ` +
        "readable by you only",
  );
}
