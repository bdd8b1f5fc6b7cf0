/**
 * The environment patchbay runs with: the process environment over the `.env` file.
 *
 * The file is parsed here instead of with Deno's `--env-file`, so that its path can be a
 * command-line option, its faults can be reported with line numbers, and its values can
 * be registered for redaction. Nothing is written back into `Deno.env`: stdio servers
 * get a minimal environment, and secrets stay in this object.
 *
 * @module
 */

import { basename, dirname, join, resolve } from "node:path";
import { MAX_ENV_FILE_BYTES, readBoundedText } from "./files/bounded_read.ts";
import { DenoPermissionError, PatchbayError } from "./errors.ts";
import { denoPermissionFlag } from "./deno_permission/denial.ts";
import { refuseSharedWritable } from "./files/shared_writable.ts";
import { CONFIG_STEPS } from "./errors/config_steps.ts";

/** One line of a .env file that could not be understood. */
export interface DotenvProblem {
  line: number;
  message: string;
}

/** What {@linkcode parseDotenv} found. */
export interface DotenvResult {
  values: Map<string, string>;
  problems: DotenvProblem[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/**
 * Parses dotenv syntax: `KEY=value`, optional `export `, `#` comments, single quotes
 * (literal), double quotes (escapes `\n \t \" \\`, may span lines), and unquoted values
 * whose trailing ` # comment` is dropped.
 */
export function parseDotenv(text: string): DotenvResult {
  const values = new Map<string, string>();
  const problems: DotenvProblem[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNumber = i + 1;
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const body = line.startsWith("export ") ? line.slice(7).trimStart() : line;
    const eq = body.indexOf("=");
    if (eq <= 0) {
      problems.push({ line: lineNumber, message: "expected NAME=value" });
      continue;
    }
    const name = body.slice(0, eq).trim();
    if (!NAME.test(name)) {
      problems.push({ line: lineNumber, message: `'${name}' is not a valid variable name` });
      continue;
    }
    let rest = body.slice(eq + 1).trimStart();
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      // A quoted value may continue over following lines until its closing quote.
      let raw = rest.slice(1);
      let close = findClosingQuote(raw, quote);
      while (close < 0 && i + 1 < lines.length) {
        i++;
        raw += "\n" + lines[i];
        close = findClosingQuote(raw, quote);
      }
      if (close < 0) {
        problems.push({ line: lineNumber, message: `value of ${name} has no closing ${quote}` });
        continue;
      }
      const inner = raw.slice(0, close);
      values.set(name, quote === '"' ? unescapeDouble(inner) : inner);
      continue;
    }
    const comment = rest.search(/\s#/);
    if (comment >= 0) rest = rest.slice(0, comment);
    values.set(name, rest.trim());
  }
  return { values, problems };
}

function findClosingQuote(text: string, quote: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && quote === '"') {
      i++;
      continue;
    }
    if (text[i] === quote) return i;
  }
  return -1;
}

function unescapeDouble(text: string): string {
  return text.replace(
    /\\([nrt"\\$])/g,
    (_, c: string) => ({ n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\", $: "$" })[c] ?? c,
  );
}

/** Where a variable's value came from. */
export type VariableSource = "process" | "file";

/** Read-only view of the merged environment. */
export interface Environment {
  get(name: string): string | undefined;
  source(name: string): VariableSource | undefined;
  /** What the .env file itself says for `name` (the process environment may override it). */
  fileValue(name: string): string | undefined;
  /**
   * Every name set, when Deno allows enumerating the environment; under a list of allowed
   * variables, the .env file's names and the process variables read so far.
   */
  names(): string[];
  /**
   * Deno refused reading `name` from the process (patchbay was granted a list of
   * variables without it), so an unset value may not really be unset.
   */
  denied(name: string): boolean;
  /** The .env file consulted and what became of it (the one of highest precedence). */
  readonly file: EnvFileStatus;
  /**
   * Every .env file consulted, lowest precedence first: the user's
   * (`~/.config/patchbay/.env`) before the project's, when both are read.
   */
  readonly files: readonly EnvFileStatus[];
}

/** The process environment as Deno lets patchbay read it. */
export interface ProcessVariables {
  get(name: string): string | undefined;
  /** Every name when the environment can be enumerated; else the names found so far. */
  names(): string[];
  /** Deno refused reading `name`. */
  denied(name: string): boolean;
}

/**
 * The process environment: the whole of it under `--allow-env`, or variable by variable
 * under `--allow-env=<names>`, where enumerating is refused. Reading by name is what lets
 * patchbay run with only the variables its configuration needs; a variable outside the
 * grant reads as unset and is remembered, so messages can name the flag that would allow it.
 */
export function readProcessVariables(): ProcessVariables {
  try {
    return recordVariables(Deno.env.toObject());
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) throw error;
    return namedVariables();
  }
}

function recordVariables(values: Record<string, string>): ProcessVariables {
  return {
    get: (name) => Object.hasOwn(values, name) ? values[name] : undefined,
    names: () => Object.keys(values),
    denied: () => false,
  };
}

function namedVariables(): ProcessVariables {
  const found = new Map<string, string | undefined>();
  const refused = new Set<string>();
  const read = (name: string): string | undefined => {
    if (found.has(name)) return found.get(name);
    let value: string | undefined;
    try {
      value = Deno.env.get(name);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotCapable)) throw error;
      refused.add(name);
    }
    found.set(name, value);
    return value;
  };
  return {
    get: read,
    names: () => [...found].filter(([, value]) => value !== undefined).map(([name]) => name),
    denied: (name) => {
      read(name);
      return refused.has(name);
    },
  };
}

/** Which .env file to read, and why. */
export interface EnvFileChoice {
  path: string;
  /** Named with --env-file: a missing file is an error. */
  required: boolean;
  /** Read from beside the --config file, since the working directory has none. */
  besideConfig: boolean;
  /** Files read before it, under it (the user's `.env`); each may be missing. */
  under: string[];
}

/**
 * The .env files of a run: `--env-file` alone when given. With `--config`: `./.env`, else,
 * when that file is in another folder, the `.env` beside it (a configuration kept with its
 * secrets elsewhere is used as a whole, not without its variables). Otherwise the user's
 * (`userEnv`, `~/.config/patchbay/.env`) and then `./.env` over it, as the user's and the
 * project's configuration files are read (docs/configuration.md, "Scopes").
 */
export function chooseEnvFile(
  envFile: string | undefined,
  configFile: string | undefined,
  defaultPath: string,
  userEnv?: string,
): EnvFileChoice {
  if (envFile !== undefined) {
    return { path: envFile, required: true, besideConfig: false, under: [] };
  }
  const under = configFile === undefined && userEnv !== undefined &&
      resolve(userEnv) !== resolve(defaultPath)
    ? [userEnv]
    : [];
  const plain = { path: defaultPath, required: false, besideConfig: false, under };
  if (configFile === undefined || isFile(defaultPath)) return plain;
  const beside = join(dirname(configFile), basename(defaultPath));
  if (resolve(beside) === resolve(defaultPath) || !isFile(beside)) return plain;
  return { path: beside, required: false, besideConfig: true, under: [] };
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** What happened to the .env file at start-up. */
export interface EnvFileStatus {
  path: string;
  loaded: boolean;
  /** Variables the file defined (whether or not the process environment overrode them). */
  count: number;
  problems: DotenvProblem[];
}

/** Options of {@linkcode loadEnvironment}. */
export interface LoadEnvironmentOptions {
  /** Path of the .env file. */
  path: string;
  /** The user named the file explicitly: a missing file is then an error. @default false */
  required?: boolean;
  /** The process environment. @default readProcessVariables() */
  processEnv?: Record<string, string> | ProcessVariables;
  /**
   * Files read first, whose variables {@linkcode path}'s override (the user's `.env`
   * under the project's); a missing one is skipped. @default []
   */
  under?: readonly string[];
}

/**
 * Reads the .env files (those present) and merges them under the process environment: a
 * variable set in both keeps its process value, as with every dotenv tool; one set in two
 * files keeps the value of {@linkcode LoadEnvironmentOptions.path}'s.
 */
export async function loadEnvironment(options: LoadEnvironmentOptions): Promise<Environment> {
  const processEnv = options.processEnv ?? readProcessVariables();
  const values = new Map<string, string>();
  const files: EnvFileStatus[] = [];
  for (const path of [...options.under ?? [], options.path]) {
    const required = path === options.path && options.required;
    const read = await readEnvFile(path, required ?? false);
    for (const [name, value] of read.values) values.set(name, value);
    files.push(read.status);
  }
  return createEnvironment(processEnv, values, files.at(-1), files);
}

/** One .env file's variables and status; a missing one has none (an error if `required`). */
async function readEnvFile(
  path: string,
  required: boolean,
): Promise<{ values: Map<string, string>; status: EnvFileStatus }> {
  const options = { path, required };
  let text: string | undefined;
  // Its variables reach the servers patchbay starts (and name the model's address).
  refuseSharedWritable(options.path, "the environment file");
  try {
    text = await readBoundedText(options.path, {
      what: "the environment file",
      maxBytes: MAX_ENV_FILE_BYTES,
      remedy: CONFIG_STEPS.otherEnvFile,
    });
  } catch (error) {
    if (error instanceof PatchbayError) throw error;
    const flag = denoPermissionFlag(error);
    if (flag) throw new DenoPermissionError(flag, `reading the environment file ${options.path}`);
    if (!(error instanceof Deno.errors.NotFound) || options.required) {
      throw new PatchbayError(
        "config_not_found",
        `Could not read environment file ${options.path}`,
        {
          reason: error instanceof Deno.errors.NotFound
            ? "the file does not exist"
            : (error as Error).message,
          remedy: CONFIG_STEPS.createEnvFile,
          cause: error,
        },
      );
    }
  }
  const parsed = text === undefined ? { values: new Map(), problems: [] } : parseDotenv(text);
  return {
    values: parsed.values,
    status: {
      path: options.path,
      loaded: text !== undefined,
      count: parsed.values.size,
      problems: parsed.problems,
    },
  };
}

/** Builds an {@linkcode Environment} from explicit maps (tests, and `loadEnvironment`). */
export function createEnvironment(
  processEnv: Record<string, string> | ProcessVariables,
  fileValues: Map<string, string> = new Map(),
  file: EnvFileStatus = { path: "", loaded: false, count: 0, problems: [] },
  files: readonly EnvFileStatus[] = [file],
): Environment {
  const process = isProcessVariables(processEnv) ? processEnv : recordVariables(processEnv);
  return {
    get: (name) => process.get(name) ?? fileValues.get(name),
    source: (name) =>
      process.get(name) !== undefined ? "process" : fileValues.has(name) ? "file" : undefined,
    fileValue: (name) => fileValues.get(name),
    names: () => [...new Set([...process.names(), ...fileValues.keys()])],
    denied: (name) => process.denied(name),
    file,
    files,
  };
}

function isProcessVariables(
  value: Record<string, string> | ProcessVariables,
): value is ProcessVariables {
  return typeof value.get === "function" && typeof value.denied === "function";
}

/** Variable names whose values are secrets wherever they come from. */
export function isSecretName(name: string): boolean {
  return /(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(?:_|$)/i.test(name) ||
    name === "LLM_API_KEY";
}
