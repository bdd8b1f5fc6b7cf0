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

import { PatchbayError } from "./errors.ts";

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
  names(): string[];
  /** The .env file consulted and what became of it. */
  readonly file: EnvFileStatus;
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
  /** The process environment. @default Deno.env.toObject() */
  processEnv?: Record<string, string>;
}

/**
 * Reads the .env file (if present) and merges it under the process environment:
 * a variable set in both keeps its process value, as with every dotenv tool.
 */
export async function loadEnvironment(options: LoadEnvironmentOptions): Promise<Environment> {
  const processEnv = options.processEnv ?? Deno.env.toObject();
  let text: string | undefined;
  try {
    text = await Deno.readTextFile(options.path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound) || options.required) {
      throw new PatchbayError(
        "config_not_found",
        `Could not read environment file ${options.path}`,
        {
          reason: error instanceof Deno.errors.NotFound
            ? "the file does not exist"
            : (error as Error).message,
          remedy: "create the file (see .env.example) or pass --env-file with the right path",
          cause: error,
        },
      );
    }
  }
  const parsed = text === undefined ? { values: new Map(), problems: [] } : parseDotenv(text);
  return createEnvironment(processEnv, parsed.values, {
    path: options.path,
    loaded: text !== undefined,
    count: parsed.values.size,
    problems: parsed.problems,
  });
}

/** Builds an {@linkcode Environment} from explicit maps (tests, and `loadEnvironment`). */
export function createEnvironment(
  processEnv: Record<string, string>,
  fileValues: Map<string, string> = new Map(),
  file: EnvFileStatus = { path: "", loaded: false, count: 0, problems: [] },
): Environment {
  return {
    get: (name) => processEnv[name] ?? fileValues.get(name),
    source: (name) => name in processEnv ? "process" : fileValues.has(name) ? "file" : undefined,
    names: () => [...new Set([...Object.keys(processEnv), ...fileValues.keys()])],
    file,
  };
}

/** Variable names whose values are secrets wherever they come from. */
export function isSecretName(name: string): boolean {
  return /(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(?:_|$)/i.test(name) ||
    name === "LLM_API_KEY";
}
