/**
 * The stdio servers a configuration starts, read without its schema (start-up cost): zod and
 * the configuration's schemas are most of what a command loads before it can start a
 * server, so the early start (`lib/early_start.ts`) reads the servers here and starts their
 * processes while the command's own code loads.
 *
 * Read by the same parts as the full validation (`load.ts`, `servers.ts`): the file located
 * and the .env chosen as `startUp` does, the same JSON reader, other clients' forms mapped
 * by `canonicalEntry`, values expanded and paths resolved by `ConfigValues`. What the full
 * validation would refuse, or what this reader cannot judge alone, it does not guess at: it
 * returns `undefined` and starts nothing. A process it started that the validated
 * configuration does not have is never taken by a transport and is ended (`endUnclaimed`).
 * `tests/cli/early_start_test.ts` compares it with the full reading.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { MAX_CONFIG_BYTES, readBoundedFile } from "../files/bounded_read.ts";
import { DEFAULTS } from "../defaults.ts";
import { chooseEnvFile, type Environment, loadEnvironment } from "../env.ts";
import { refuseSharedWritable } from "../files/shared_writable.ts";
import { hasHiddenCharacters } from "../terminal/terminal.ts";
import type { StartableServer } from "../transports/spawn.ts";
import { canonicalEntry, TYPE_TO_TRANSPORT } from "./dialect.ts";
import { parseJson } from "./json.ts";
import { managedFile } from "../policy/place.ts";
import { locateConfig, locateSources } from "./locate.ts";
import { type FieldPath, ProblemList } from "./problem_list.ts";
import { serverNameProblem } from "./server_name.ts";
import { decodeUtf8 } from "./utf8.ts";
import { ConfigValues } from "./values.ts";

/** The files a command reads its configuration from (its root flags). */
export interface ConfigFiles {
  /** `--config`. */
  config?: string;
  /** `--env-file`. */
  envFile?: string;
}

/** A configuration's servers as far as starting them goes, and its environment. */
export interface StdioEntries {
  /** Every enabled stdio server, in the file's order. */
  servers: StartableServer[];
  /** The environment the values were expanded from (.env, then the process). */
  env: Environment;
}

/** The transports patchbay knows, as `transport_type` writes them. */
const TRANSPORTS: ReadonlySet<unknown> = new Set(Object.values(TYPE_TO_TRANSPORT));

/** The fields only an entry at a URL has: on a stdio entry, the validation refuses them. */
const HTTP_ONLY_FIELDS = ["url", "headers", "auth", "sse_read_timeout", "ping_interval"];

/** An entry or a file this reader does not judge: nothing is started early. */
class Unsure extends Error {}

/**
 * The enabled stdio servers of the configuration `files` name (as `startUp` finds it from
 * `projectDir`), with their values expanded; `undefined` when the file cannot be read, or
 * holds anything the full validation would refuse or this reader does not judge.
 */
export async function readStdioEntries(
  files: ConfigFiles,
  projectDir: string,
): Promise<StdioEntries | undefined> {
  try {
    // Files read together (user and project scopes) or an administrator's policy: which
    // entries run, and whether they may, only the full reading knows (docs/policy.md).
    if (locateSources(files.config, projectDir).files.length !== 1 || policyMayExist()) {
      return undefined;
    }
    // The configuration and the .env it implies, found as `startUp` finds them.
    const location = locateConfig(files.config, projectDir);
    const configFile = files.config ?? (location.userScope ? location.path : undefined);
    const envChoice = chooseEnvFile(files.envFile, configFile, DEFAULTS.envFile);
    const env = await loadEnvironment({ path: envChoice.path, required: envChoice.required });
    // A configuration others may write is refused (`loadConfig`): nothing of it is started.
    refuseSharedWritable(location.path, "the configuration file");
    const bytes = await readBoundedFile(location.path, {
      what: "the configuration file",
      maxBytes: MAX_CONFIG_BYTES,
    });
    const decoded = decodeUtf8(bytes);
    if ("fault" in decoded) return undefined;
    const parsed = parseJson(decoded.text);
    if (parsed.faults.length > 0 || parsed.duplicates.length > 0) return undefined;
    const raw = parsed.value;
    if (!isRecord(raw)) return undefined;
    if (raw.mcpServers === undefined) return { servers: [], env };
    if (!isRecord(raw.mcpServers)) return undefined;
    const problems = new ProblemList(parsed);
    const values = new ConfigValues(problems, env, dirname(resolve(location.path)));
    const servers: StartableServer[] = [];
    for (const [name, entry] of Object.entries(raw.mcpServers)) {
      const server = stdioEntry(name, entry, problems, values);
      if (server) servers.push(server);
    }
    return { servers, env };
  } catch {
    // Unreadable, refused, or an entry this reader is not sure of: the command's own start
    // reads the file again and says what is wrong, if anything is.
    return undefined;
  }
}

/** Whether the administrator's policy file exists, or cannot be told not to. */
function policyMayExist(): boolean {
  try {
    Deno.lstatSync(managedFile());
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
}

/**
 * The entry `name` when it is an enabled stdio server, its values expanded; `undefined` for
 * a disabled one or one at a URL. Throws {@linkcode Unsure} for what the full validation
 * would refuse.
 */
function stdioEntry(
  name: string,
  entry: unknown,
  problems: ProblemList,
  values: ConfigValues,
): StartableServer | undefined {
  const path: FieldPath = ["mcpServers", name];
  if (name.trim() === "" || serverNameProblem(name) !== undefined) throw new Unsure();
  if (!isRecord(entry)) throw new Unsure();
  const canonical = canonicalEntry(problems, entry, path);
  if (!canonical) throw new Unsure();
  const { transport_type: transport, command, args, env, cwd, disabled } = canonical.raw;
  if (disabled !== undefined && typeof disabled !== "boolean") throw new Unsure();
  if (transport !== undefined && !TRANSPORTS.has(transport)) throw new Unsure();
  if (transport === undefined && command === undefined && canonical.raw.url === undefined) {
    throw new Unsure();
  }
  // At a URL (written, or inferred from a url without a command): nothing to start.
  if (transport !== undefined ? transport !== "stdio" : command === undefined) return undefined;
  if (HTTP_ONLY_FIELDS.some((field) => canonical.raw[field] !== undefined)) throw new Unsure();
  if (typeof command !== "string" || command.length === 0) throw new Unsure();
  if (args !== undefined && !isStringArray(args)) throw new Unsure();
  if (env !== undefined && !(isRecord(env) && Object.values(env).every(isString))) {
    throw new Unsure();
  }
  if (cwd !== undefined && (typeof cwd !== "string" || cwd.length === 0)) throw new Unsure();
  if (disabled) return undefined;
  const before = problems.problems.length;
  const server: StartableServer = {
    transport: "stdio",
    command: values.expand(command, [...path, "command"]),
    args: (args ?? []).map((arg, i) => values.expand(arg, [...path, "args", i])),
    env: Object.fromEntries(
      Object.entries(env ?? {}).map((
        [k, v],
      ) => [k, values.expand(v as string, [...path, "env", k])]),
    ),
    ...(cwd !== undefined ? { cwd: values.path(cwd, [...path, "cwd"]) } : {}),
  };
  // A variable unset or malformed, or a command with hidden characters: refused in full.
  if (problems.problems.length > before || hasHiddenCharacters(server.command!)) {
    throw new Unsure();
  }
  return server;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}
