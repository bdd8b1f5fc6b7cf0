/**
 * The errors of configuration: a file that is not JSON, breaks the schema or is missing,
 * memory settings that cannot be used, and a configuration others may write.
 *
 * @module
 */

import { fill, ROWS } from "./failure_table.ts";
import type { ErrorCode } from "./error_codes.ts";
import { PatchbayError } from "./base.ts";
import { CONFIG_STEPS } from "./config_steps.ts";

/** Where a configuration problem sits in its file. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** One problem found in a configuration file. */
export interface ConfigProblem {
  /** Dotted field path (`mcpServers.fs.args[0]`), empty for the whole file. */
  path: string;
  message: string;
  position?: SourcePosition;
  /** A likely fix for this one problem, e.g. a did-you-mean. */
  hint?: string;
  /**
   * The file the field is written in, when several files make the configuration (the
   * user's, the project's, the administrator's policy); `undefined`: the one file read.
   */
  file?: string;
}

/** The file is not strict JSON (`JSON decode error`). */
export class ConfigSyntaxError extends PatchbayError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];
  constructor(file: string, problems: ConfigProblem[], details: string[]) {
    const first = problems[0];
    const where = first.position
      ? ` at line ${first.position.line}, column ${first.position.column}`
      : "";
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
    const [invalid, decode] = ROWS.json_syntax.messages;
    super(
      "config_syntax",
      fill(invalid, { problem: `${first.message}${where} of ${file}${more}` }),
      {
        reason: fill(decode, { problem: first.hint ?? first.message }),
        remedy: ROWS.json_syntax.remedy,
        details,
      },
    );
    this.file = file;
    this.problems = problems;
  }
}

/** The JSON parsed but breaks the schema: missing fields, wrong types, unknown keys. */
export class ConfigValidationError extends PatchbayError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];
  constructor(file: string, problems: ConfigProblem[], details: string[]) {
    const missing = problems.filter((p) => p.message.startsWith("Missing required field"));
    const only = problems.length === 1 ? problems[0] : undefined;
    const headline = only
      ? (only.path && !only.message.includes(only.path) ? `${only.path}: ` : "") + only.message
      : `${problems.length} problems in ${file}`;
    super("config_invalid", `Invalid configuration: ${headline}`, {
      reason: problems.length === 1
        ? `${file}: ${problems[0].hint ?? problems[0].message}`
        : new Set(problems.map((p) => p.file)).size > 1
        ? `${file} do not match the configuration schema`
        : `${file} does not match the configuration schema`,
      remedy: missing.length > 0 && missing.length === problems.length
        ? ROWS.missing_field.remedy
        : CONFIG_STEPS.correctFields,
      details,
    });
    this.file = file;
    this.problems = problems;
  }
}

/** The configuration file does not exist. */
export class ConfigNotFoundError extends PatchbayError {
  constructor(file: string, reason: string, remedy: string, cause?: unknown) {
    super("config_not_found", `Invalid configuration: ${file} not found`, {
      reason,
      remedy,
      cause,
    });
  }
}

/** The memory settings (REDIS_* variables, `Memory` section) cannot be used as written. */
export class MemoryConfigError extends PatchbayError {
  constructor(problem: string, remedy: string, reason: string = problem) {
    super("config_invalid", `Invalid configuration: ${problem}`, { reason, remedy });
  }
}

/**
 * A configuration, `.env` or folder of patchbay that others may write: refused, as ssh
 * refuses a shared `authorized_keys` (`lib/shared_writable.ts` decides).
 */
export class SharedWritableError extends PatchbayError {
  /** The path whose mode lets others write: the one refused, or a folder holding it. */
  readonly writable: string;
  constructor(
    what: string,
    path: string,
    found: {
      path: string;
      mode: number;
      kind: "file" | "folder";
      writers: string;
      chmod: string;
    },
  ) {
    const octal = `0${found.mode.toString(8).padStart(3, "0")}`;
    const where = found.path === path
      ? `the ${found.kind}`
      : found.kind === "file"
      ? `the file it links to, ${found.path},`
      : `the folder holding it, ${found.path},`;
    super(
      "permission_denied",
      `Refusing to use ${what} ${path}: other users may write it`,
      {
        reason: `${where} is writable by ${found.writers} (mode ${octal}), so another local ` +
          "user could change what patchbay runs or trusts; patchbay uses only files and " +
          "folders that their owner alone may write",
        remedy: CONFIG_STEPS.sharedWritable(found.chmod),
      },
    );
    this.writable = found.path;
  }
}

/** What {@linkcode UnreadableFileError} found: another kind of file, or one too large. */
export interface UnreadableFile {
  /** What the file is when it is not a regular file (`a named pipe (FIFO)`). */
  kind?: string;
  /** Its size, or the bytes read before the bound stopped the read. */
  size?: number;
  maxBytes?: number;
  /** Where the path leads when it is a symbolic link. */
  target?: string;
  /** @default "config_invalid" */
  code?: ErrorCode;
  /** What else the person can do. */
  remedy?: string;
}

/**
 * A file patchbay will not read: not a regular file (a FIFO, a device, a socket, or a link
 * to one), or larger than the bound of what it holds (`lib/bounded_read.ts` decides).
 */
export class UnreadableFileError extends PatchbayError {
  readonly path: string;
  constructor(what: string, path: string, found: UnreadableFile) {
    const limit = sizeText(found.maxBytes ?? 0);
    const problem = found.target
      ? `it links to ${found.target}, ` +
        (found.kind !== undefined ? found.kind : `which is larger than ${limit}`)
      : found.kind !== undefined
      ? `it is ${found.kind}`
      : `it is larger than ${limit}`;
    const reason = found.kind !== undefined
      ? "patchbay reads only regular files: a pipe or a device could keep it waiting, or " +
        "reading, without end"
      : `it holds ${found.size} bytes or more, and ${what} is read up to ${limit} only: ` +
        "no file patchbay expects there is this large";
    super(found.code ?? "config_invalid", `Refusing to read ${what} ${path}: ${problem}`, {
      reason,
      remedy: CONFIG_STEPS.notRegular(path, found.remedy),
    });
    this.path = path;
  }
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0
    ? `${bytes / 1024 / 1024} MiB`
    : bytes >= 1024 && bytes % 1024 === 0
    ? `${bytes / 1024} KiB`
    : `${bytes} bytes`;
}

/**
 * Another process held the lock of a file patchbay was about to change for longer than the
 * bounded wait (`lib/file_lock.ts`): nothing was changed.
 */
export class FileLockedError extends PatchbayError {
  constructor(
    what: string,
    lockPath: string,
    found: { pid?: number; since?: string; waitedSeconds: number; doing: string },
  ) {
    const holder = found.pid !== undefined
      ? `process ${found.pid}${found.since ? ` (holding it since ${found.since})` : ""}`
      : "another process";
    super("timeout", `Could not ${found.doing}: ${what} is being changed by another patchbay`, {
      reason: `${holder} held its lock (${lockPath}) for all of the ${found.waitedSeconds} s ` +
        "this command waits, so nothing was changed",
      remedy: CONFIG_STEPS.lockHeld(found.pid),
    });
  }
}
