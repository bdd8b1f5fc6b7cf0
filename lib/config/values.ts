/**
 * The configuration's values as patchbay uses them: `${VAR}`s expanded, URLs checked,
 * paths made absolute against the file's folder, header names and roots checked. Each
 * problem is added to the file's {@linkcode ProblemList} at the value's field path.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import type { Environment } from "../env.ts";
import { startedByLauncher } from "../permissions/remedy.ts";
import { expandVariables } from "./expand.ts";
import type { FieldPath, ProblemList } from "./problem_list.ts";

/** VS Code's predefined variables, which are no environment variables. */
const EDITOR_VARIABLES: ReadonlySet<string> = new Set([
  "workspaceFolder",
  "workspaceFolderBasename",
  "userHome",
  "cwd",
  "file",
  "pathSeparator",
]);

/** Reads values of one configuration file, whose folder is `dir`. */
export class ConfigValues {
  constructor(
    private readonly problems: ProblemList,
    private readonly env: Environment,
    private readonly dir: string,
  ) {}

  /** `value` with its `${VAR}`s expanded; an unset or unreadable variable is a problem. */
  expand(value: string, path: FieldPath): string {
    const result = expandVariables(value, (name) => this.env.get(name));
    for (const { name } of result.missing) {
      if (this.env.denied(name)) {
        this.problems.add(
          path,
          `environment variable ${name} cannot be read: Deno did not grant --allow-env=${name}`,
          startedByLauncher()
            ? `restart patchbay (at each start it grants the variables the configuration ` +
              `names), or set ${name} in .env`
            : `add --allow-env=${name} to the deno run / deno install command, or set ${name} ` +
              "in .env",
        );
        continue;
      }
      this.problems.add(
        path,
        `environment variable ${name} is not set`,
        EDITOR_VARIABLES.has(name)
          ? `\${${name}} is VS Code's own variable; write the path itself (relative paths ` +
            "are against this file's folder)"
          : `set ${name} in .env or the environment, or give a default: \${${name}:-value}`,
      );
    }
    if (result.foreign) {
      this.problems.add(
        path,
        `"${result.foreign}" is another client's variable (VS Code asks its user for ` +
          "${input:…} values when it starts the server); patchbay has no such prompt",
        "put the value in .env as a variable, e.g. API_TOKEN=..., and write ${API_TOKEN} " +
          "(`patchbay mcp import` does this)",
      );
    } else if (result.malformed) {
      this.problems.add(
        path,
        `malformed variable reference in "${value}": ${result.detail}`,
        "write ${NAME}, ${NAME:-default} or ${NAME:-${OTHER:-default}}; $${ writes a literal ${",
      );
    }
    return result.value;
  }

  /** An http(s) URL, expanded; `undefined` when absent, empty or not such a URL. */
  url(value: string | undefined, path: FieldPath): string | undefined {
    if (value === undefined) return undefined;
    const expanded = this.expand(value, path);
    if (expanded === "") return undefined;
    let url: URL;
    try {
      url = new URL(expanded);
    } catch {
      this.problems.add(
        path,
        `"${expanded}" is not a URL`,
        `write it in full, e.g. http://${expanded.replace(/^\/+/, "")}`,
      );
      return undefined;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      const hint = /^localhost:|^\d+\.\d+\.\d+\.\d+:|^[\w.-]+:\d+/.test(expanded)
        ? `add the scheme: http://${expanded}`
        : "only http:// and https:// addresses are supported";
      this.problems.add(path, `"${expanded}" is not an http(s) URL`, hint);
      return undefined;
    }
    return expanded;
  }

  /** A path, expanded and made absolute against the file's folder. */
  path(value: string, path: FieldPath): string {
    const expanded = this.expand(value, path);
    return isAbsolute(expanded) ? expanded : resolve(this.dir, expanded);
  }

  /** A request header's value, expanded; its name and value checked. */
  header(name: string, value: string, path: FieldPath): string {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      this.problems.add(
        path,
        `"${name}" is not a valid HTTP header name`,
        "header names are letters, digits and - (e.g. Authorization, X-Api-Key)",
        this.problems.keyPos(path),
      );
    }
    const expanded = this.expand(value, path);
    if (/[\r\n]/.test(expanded)) {
      this.problems.add(path, "a header value cannot contain a line break");
    }
    return expanded;
  }

  /**
   * Root folders: expanded, made absolute against the file's folder, and checked, since a
   * server silently skips a root it cannot use and then keeps folders the person meant to
   * replace. A folder that does not exist (yet) is only a warning: the file may be shared.
   */
  roots(values: readonly string[], path: FieldPath): string[] {
    const folders: string[] = [];
    values.forEach((value, i) => {
      const at = [...path, i];
      const known = this.problems.problems.length;
      const expanded = this.expand(value, at);
      // An unset variable is already reported; its empty value is no second problem.
      if (this.problems.problems.length > known) return;
      if (expanded === "") {
        this.problems.add(at, `root ${JSON.stringify(value)} expands to an empty path`);
        return;
      }
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(expanded)) {
        this.problems.add(
          at,
          `"${expanded}" is a URL; roots are local folder paths`,
          expanded.startsWith("file://")
            ? `write the path itself, e.g. ${new URL(expanded).pathname}`
            : "give the folder on this machine the server may work in",
        );
        return;
      }
      if (expanded === "~" || expanded.startsWith("~/")) {
        this.problems.add(
          at,
          `"${expanded}": ~ is not expanded in the configuration`,
          `write \${HOME}${expanded.slice(1)}`,
        );
        return;
      }
      const folder = isAbsolute(expanded) ? resolve(expanded) : resolve(this.dir, expanded);
      if (folders.includes(folder)) {
        this.problems.warn(at, `the root ${folder} is listed twice`, "remove the repetition");
        return;
      }
      const kind = fileKind(folder);
      if (kind === "file") {
        this.problems.add(
          at,
          `the root ${folder} is a file, not a folder`,
          "name the folder around it",
        );
        return;
      }
      if (kind === "missing") {
        this.problems.warn(
          at,
          `the root folder ${folder} does not exist`,
          "servers skip roots they cannot find; create it or fix the path",
        );
      }
      folders.push(folder);
    });
    return folders;
  }
}

/** What is at `path`; `missing` also when it cannot be looked at. */
function fileKind(path: string): "folder" | "file" | "missing" {
  try {
    return Deno.statSync(path).isDirectory ? "folder" : "file";
  } catch {
    return "missing";
  }
}
