/**
 * The helper fields (`headers_helper`, `LLM.api_key_helper`; docs/secrets.md) as patchbay
 * runs them: the command expanded and, when it is a relative path, made absolute against
 * the file's folder (where helpers run); its arguments and variables expanded. A string
 * with blanks that names no file is a shell line, which patchbay does not run: the problem
 * says how to write it.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { FieldPath, ProblemList } from "./problem_list.ts";
import type { HelperEntry } from "./schema.ts";
import type { HelperCommand } from "./types.ts";
import type { ConfigValues } from "./values.ts";

/** `entry` (a helper field at `path`) as it is run. */
export function readHelper(
  problems: ProblemList,
  values: ConfigValues,
  entry: HelperEntry,
  path: FieldPath,
): HelperCommand {
  const spec = typeof entry === "string" ? { command: entry } : entry;
  const commandPath = typeof entry === "string" ? path : [...path, "command"];
  const written = values.expand(spec.command, commandPath);
  // A name is looked up on PATH when it runs; a path is from the file's folder.
  const command = /[\\/]/.test(written) && !isAbsolute(written)
    ? resolve(values.folderOf(path), written)
    : written;
  if (typeof entry === "string" && /\s/.test(written.trim()) && !fileExists(command)) {
    // Said with the words as written: an expanded value may be a secret.
    const [program, ...args] = entry.trim().split(/\s+/);
    problems.add(
      path,
      "a helper is a program, run without a shell, and no file has this name",
      `write ${JSON.stringify({ command: program, args })}, or for a shell line ` +
        `{"command": "sh", "args": ["-c", "…"]} (docs/secrets.md)`,
    );
  }
  return {
    command,
    args: (spec.args ?? []).map((arg, i) => values.expand(arg, [...path, "args", i])),
    env: Object.fromEntries(
      Object.entries(spec.env ?? {}).map(([name, value]) => [
        name,
        values.expand(value, [...path, "env", name]),
      ]),
    ),
    cwd: values.folderOf(path),
  };
}

function fileExists(path: string): boolean {
  try {
    return existsSync(path);
  } catch {
    return false; // Not readable under the sandbox: judged when it runs.
  }
}
