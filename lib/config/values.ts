/**
 * The configuration's values as patchbay uses them: `${VAR}`s expanded, URLs checked,
 * paths made absolute against the file's folder, header names and roots checked. Each
 * problem is added to the file's {@linkcode ProblemList} at the value's field path.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import type { Environment } from "../env.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { expandVariables, insteadOfForeign } from "./expand.ts";
import type { FieldPath, ProblemList } from "./problem_list.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";

/** VS Code's predefined variables, which are no environment variables. */
const EDITOR_VARIABLES: ReadonlySet<string> = new Set([
  "workspaceFolder",
  "workspaceFolderBasename",
  "userHome",
  "cwd",
  "file",
  "pathSeparator",
]);

/**
 * Fields whose variables carry secrets: what goes to a server or the model provider as a
 * credential or an argument (`headers`, `env`, `args`, URLs, OAuth client secrets and keys).
 * Paths (`command`, `cwd`, `roots`, key files) are where things are, not secrets.
 */
const SECRET_FIELDS: ReadonlySet<string | number> = new Set([
  "headers",
  "env",
  "args",
  "url",
  "base_url",
  "endpoint",
  "client_secret",
  "private_key",
]);

/**
 * Variables that describe the machine, not a credential: masking their values (a home
 * folder in a server's arguments) would blank every path a server prints.
 */
const MACHINE_VARIABLES =
  /^(?:HOME|USER|LOGNAME|USERNAME|PATH|PWD|SHELL|TMPDIR|TMP|TEMP|LANG|LC_\w+|TZ|TERM|XDG_\w+|USERPROFILE|APPDATA|LOCALAPPDATA)$/;

/**
 * An absolute path (`/srv/data`, `C:\\data`): where something is, like `command` and
 * `roots`, not a credential. Masking it would blank every path a server prints (the
 * folders server-filesystem allows).
 */
const ABSOLUTE_PATH = /^(?:\/|[A-Za-z]:[\\/])\S*$/;

/**
 * The folder relative paths are taken from: the file's, or for a configuration merged from
 * several files (lib/config/merge.ts), that of the file each field is written in.
 */
export type BaseFolder = string | ((path: FieldPath) => string);

/** Reads values of a configuration, whose relative paths are taken from `dir`. */
export class ConfigValues {
  /**
   * Values that variables put into secret fields ({@linkcode SECRET_FIELDS}): whatever
   * came from `.env` or the environment into a header, an argument, a server's
   * environment or a URL is masked wherever patchbay shows or passes on text.
   */
  readonly secretValues: Set<string> = new Set();
  /** The `${keychain:NAME}` entries used, by NAME. */
  readonly keychainEntries: Set<string> = new Set();

  constructor(
    private readonly problems: ProblemList,
    private readonly env: Environment,
    private readonly dir: BaseFolder,
    /** Values of `${keychain:NAME}`; without it, references stay as written. */
    private readonly keychain?: (name: string) => string | undefined,
  ) {}

  /** The folder a relative path at `path` is taken from. */
  #folder(path: FieldPath): string {
    return typeof this.dir === "string" ? this.dir : this.dir(path);
  }

  /** `value` with its `${VAR}`s expanded; an unset or unreadable variable is a problem. */
  expand(value: string, path: FieldPath): string {
    const used: string[] = [];
    const expanded = this.#expand(value, path, used);
    if (path.some((part) => SECRET_FIELDS.has(part))) {
      for (const secret of used) this.secretValues.add(secret);
    }
    return expanded;
  }

  #expand(value: string, path: FieldPath, used: string[]): string {
    const result = expandVariables(value, (name) => {
      const found = this.env.get(name);
      if (found && !MACHINE_VARIABLES.test(name) && !ABSOLUTE_PATH.test(found)) used.push(found);
      return found;
    }, (name) => {
      // What the keychain holds is a secret wherever it is written.
      const found = this.keychain?.(name);
      if (found !== undefined) this.secretValues.add(found);
      return found;
    });
    for (const name of result.keychain) this.keychainEntries.add(name);
    for (const { name } of result.missing) {
      if (this.env.denied(name)) {
        this.problems.add(
          path,
          `environment variable ${name} cannot be read: Deno did not grant --allow-env=${name}`,
          denoPermissionRemedy(`--allow-env=${name}`, { otherwise: `set ${name} in .env` }),
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
        `${result.foreign} is another client's variable (VS Code asks its user for ` +
          "${input:…} values when it starts the server); patchbay has no such prompt",
        insteadOfForeign(result.foreign),
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
    // Where the server is must be known without the keychain (`patchbay permissions`
    // grants its host before anything is read).
    const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value)?.[1] ?? "";
    if (authority.slice(authority.lastIndexOf("@") + 1).includes("${keychain:")) {
      this.problems.add(
        path,
        "a ${keychain:…} value cannot be the URL's host or port",
        "write the host and port in the file; a keychain value may be the path, the query " +
          "or the user:password@ part",
      );
      return undefined;
    }
    const used: string[] = [];
    const expanded = this.#expand(value, path, used);
    if (expanded === "") return undefined;
    let url: URL;
    try {
      url = new URL(expanded);
      // Where the server is (its address, or the whole URL) is shown on purpose; the
      // credentials a whole URL holds are registered from the URL itself.
      const whereabouts = new Set([url.host, url.hostname, url.port, url.origin, expanded]);
      for (const secret of used) {
        if (!whereabouts.has(secret) && !URL.canParse(secret)) this.secretValues.add(secret);
      }
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

  /** The folder of the file that holds `path` (files read together: docs/configuration.md). */
  folderOf(path: FieldPath): string {
    return this.#folder(path);
  }

  /** A path, expanded and made absolute against the file's folder. */
  path(value: string, path: FieldPath): string {
    const expanded = this.expand(value, path);
    return isAbsolute(expanded) ? expanded : resolve(this.#folder(path), expanded);
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
      const folder = isAbsolute(expanded) ? resolve(expanded) : resolve(this.#folder(at), expanded);
      if (folders.includes(folder)) {
        this.problems.warn(at, `the root ${folder} is listed twice`, CONFIG_STEPS.rootTwice);
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
          CONFIG_STEPS.rootMissing,
        );
      }
      // "unseen": patchbay may not look there (the permission plan grants no read of the
      // folders it only offers to servers), so it says nothing it does not know;
      // `patchbay config check` looks with the read it needs.
      folders.push(folder);
    });
    return folders;
  }
}

/**
 * What is at `path`: `missing` only when nothing is there (or a link leads nowhere), and
 * `unseen` when it may not be looked at (Deno's permissions, the file system's), which
 * says nothing of whether it exists.
 */
function fileKind(path: string): "folder" | "file" | "missing" | "unseen" {
  try {
    return Deno.statSync(path).isDirectory ? "folder" : "file";
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "missing" : "unseen";
  }
}
