/**
 * Where other MCP clients keep their server lists, and how each writes them: Claude
 * Desktop, Claude Code (`.mcp.json`, `~/.claude.json`), Cursor, VS Code (`servers` and
 * `inputs`) and gemini-cli. `patchbay mcp import` reads them through here.
 *
 * @module
 */

import { basename, dirname, join, resolve } from "node:path";
import { MAX_IMPORTED_FILE_BYTES, readBoundedText } from "../files/bounded_read.ts";
import { PatchbayError, UsageError } from "../errors.ts";
import { type JsonValue, parseJson } from "./json.ts";
import { blankJsonComments } from "./jsonc.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";

/** The clients whose files patchbay knows. */
export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode", "gemini"] as const;
export type Client = (typeof CLIENTS)[number];

/** How a file writes its entries. */
export type Dialect = "mcpServers" | "vscode" | "gemini";

/** One file's servers, as written there. */
export interface SourceFile {
  path: string;
  dialect: Dialect;
  /** Which part of the file (`projects["/w"].mcpServers` in ~/.claude.json). */
  section: string;
  entries: Record<string, JsonValue>;
  /** VS Code's `inputs`, by id: what the editor asks its user for. */
  inputs: Record<string, { description?: string; password?: boolean }>;
}

/** What the files of a client are, for a home folder and a working folder. */
export interface Places {
  home: string;
  cwd: string;
  /** @default Deno.build.os */
  os?: typeof Deno.build.os;
  /** %APPDATA% on Windows. */
  appData?: string;
}

/** The files `client` keeps its servers in, most specific first. */
export function clientFiles(client: Client, places: Places): string[] {
  const { home, cwd } = places;
  const os = places.os ?? Deno.build.os;
  const appSupport = os === "darwin"
    ? join(home, "Library", "Application Support")
    : os === "windows"
    ? places.appData ?? join(home, "AppData", "Roaming")
    : join(home, ".config");
  switch (client) {
    case "claude-desktop":
      return [join(appSupport, "Claude", "claude_desktop_config.json")];
    case "claude-code":
      return [join(cwd, ".mcp.json"), join(home, ".claude.json")];
    case "cursor":
      return [join(cwd, ".cursor", "mcp.json"), join(home, ".cursor", "mcp.json")];
    case "vscode":
      return [join(cwd, ".vscode", "mcp.json"), join(appSupport, "Code", "User", "mcp.json")];
    case "gemini":
      return [join(cwd, ".gemini", "settings.json"), join(home, ".gemini", "settings.json")];
  }
}

/** The dialect of a file named by path: from its name and content. */
function dialectOf(path: string, value: Record<string, JsonValue>): Dialect {
  if (basename(path) === "settings.json" && basename(dirname(resolve(path))) === ".gemini") {
    return "gemini";
  }
  if (!("mcpServers" in value) && isObject(value.servers)) return "vscode";
  return "mcpServers";
}

/** Reads the servers of one file; `undefined` when it does not exist. */
export async function readSource(
  path: string,
  dialect?: Dialect,
  cwd = Deno.cwd(),
): Promise<SourceFile[] | undefined> {
  let text: string;
  try {
    text = await readBoundedText(path, {
      what: "the file to import",
      maxBytes: MAX_IMPORTED_FILE_BYTES,
      remedy: CONFIG_STEPS.otherImport,
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    if (error instanceof PatchbayError) throw error;
    throw new PatchbayError("config_not_found", `Could not read ${path}`, {
      reason: (error as Error).message,
      remedy: CONFIG_STEPS.unreadable,
      cause: error,
    });
  }
  // VS Code, Cursor and gemini-cli accept comments and trailing commas in their files.
  const parsed = parseJson(blankJsonComments(text));
  const value = parsed.value;
  if (parsed.faults.length > 0 || !isObject(value)) {
    const fault = parsed.faults[0];
    throw new PatchbayError("config_syntax", `Could not import from ${path}: it is not JSON`, {
      reason: fault
        ? `${fault.message} at line ${fault.position.line}, column ${fault.position.column}`
        : "the file does not hold a JSON object",
      remedy: CONFIG_STEPS.fixImported,
    });
  }
  const kind = dialect ?? dialectOf(path, value);
  if (kind === "vscode") {
    const inputs: SourceFile["inputs"] = {};
    for (const input of Array.isArray(value.inputs) ? value.inputs : []) {
      if (isObject(input) && typeof input.id === "string") {
        inputs[input.id] = {
          description: typeof input.description === "string" ? input.description : undefined,
          password: input.password === true,
        };
      }
    }
    return [{ path, dialect: kind, section: "servers", entries: objectOr(value.servers), inputs }];
  }
  const files: SourceFile[] = [{
    path,
    dialect: kind,
    section: "mcpServers",
    entries: objectOr(value.mcpServers),
    inputs: {},
  }];
  // ~/.claude.json keeps each project's own servers ("local scope") under its folder.
  const project = isObject(value.projects) ? value.projects[resolve(cwd)] : undefined;
  if (isObject(project) && isObject(project.mcpServers)) {
    files.push({
      path,
      dialect: kind,
      section: `projects[${JSON.stringify(resolve(cwd))}].mcpServers`,
      entries: project.mcpServers,
      inputs: {},
    });
  }
  return files;
}

/** The files of `source` (a client's name, or a path) that exist, read. */
export async function readSources(source: string, places: Places): Promise<SourceFile[]> {
  const client = CLIENTS.find((c) => c === source);
  const looksLikePath = source.includes("/") || source.includes("\\") || source.endsWith(".json");
  if (!client && !looksLikePath) {
    throw new UsageError(
      `unknown source '${source}'`,
      CONFIG_STEPS.importSource(CLIENTS.join(", ")),
    );
  }
  if (!client) {
    const files = await readSource(resolve(places.cwd, source), undefined, places.cwd);
    if (!files) {
      throw new PatchbayError("config_not_found", `Could not import from ${source}`, {
        reason: `there is no file at ${resolve(places.cwd, source)}`,
        remedy: CONFIG_STEPS.checkPath,
      });
    }
    return files;
  }
  const dialect: Dialect = client === "vscode"
    ? "vscode"
    : client === "gemini"
    ? "gemini"
    : "mcpServers";
  const found: SourceFile[] = [];
  const paths = clientFiles(client, places);
  for (const path of paths) found.push(...(await readSource(path, dialect, places.cwd)) ?? []);
  if (found.length === 0) {
    throw new PatchbayError("config_not_found", `Found no ${client} configuration`, {
      reason: `none of these files exists: ${paths.join(", ")}`,
      remedy: CONFIG_STEPS.importPath,
    });
  }
  return found;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function objectOr(value: JsonValue | undefined): Record<string, JsonValue> {
  return isObject(value) ? value : {};
}
