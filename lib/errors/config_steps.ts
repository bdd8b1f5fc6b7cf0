/**
 * The remedies of a configuration that cannot be read or used, and of the other files
 * patchbay reads or locks (`.env`, a file to import, its state folder): part of the failure
 * table (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays
 * within the size of a file. They name flags and fields, the same on both surfaces; a
 * function takes the values only known when it fails (paths, names, a process).
 *
 * @module
 */

/** Steps of the remedies of the configuration and the files patchbay reads or locks. */
export const CONFIG_STEPS = {
  /** A configuration file past the size patchbay reads. */
  otherConfig: "name another file with --config",
  /** An environment file past the size patchbay reads. */
  otherEnvFile: "name another file with --env-file",
  /** A file that could not be read. */
  unreadable: "check the path and that the file is readable",
  /** No configuration file at the path; `example`: the example configuration's file. */
  createConfig: (example: string): string =>
    `create it (copy ${example} to start) or pass --config <path>`,
  /** A configuration file the operating system refused to let patchbay read. */
  readable: (path: string): string =>
    `make the file readable by your user (e.g. chmod u+r ${path})`,
  /** `--config` naming a folder; `file`: the configuration file inside it. */
  fileInside: (file: string): string => `pass the file inside it, e.g. --config ${file}`,
  /** A required environment file that could not be read. */
  createEnvFile: "create the file (see .env.example) or pass --env-file with the right path",
  /** A configuration that breaks its schema in several fields, or not by a missing one. */
  correctFields: "correct each field listed; docs/configuration.md gives every field, its " +
    "type and its default",
  /** A file or folder others may write; `chmod`: the command that makes it its owner's. */
  sharedWritable: (chmod: string): string =>
    `run \`${chmod}\` (and check that nobody changed it meanwhile)`,
  /** Not a regular file, or too large; `alternative`: another way out, when there is one. */
  notRegular: (path: string, alternative: string | undefined): string =>
    `check what ${path} is (ls -lL ${path}) and put the regular file meant there` +
    (alternative ? `, or ${alternative}` : ""),
  /** A file's lock held by another patchbay; `pid`: its process, when known. */
  lockHeld: (pid: number | undefined): string =>
    "run the command again once the other one has finished" +
    (pid !== undefined ? ` (if process ${pid} is stuck, end it first)` : ""),
  /** A lock file that cannot be created in `folder`. */
  lockFolder: (folder: string): string =>
    `make ${folder} a folder you may write (patchbay's state folder), then run the command ` +
    "again; nothing was changed",
  /** A matcher of a tool's hook that matches none of patchbay's tool names. */
  hookMatcher: 'write "<server>.<tool>" globs, e.g. "everything.*", "*.delete_*", or Claude ' +
    'Code\'s "mcp__<server>__<tool>"',
  /** sse_read_timeout shorter than timeout. */
  sseShorter: "event streams may then be reopened before a slow answer arrives",
  /** A root listed twice. */
  rootTwice: "remove the repetition",
  /** A root folder that does not exist. */
  rootMissing: "servers skip roots they cannot find; create it or fix the path",
  /** A file to import past the size patchbay reads. */
  otherImport: "name another file to import",
  /** A file to import that is not JSON. */
  fixImported: "fix the file in the client that wrote it, or name another file",
  /** An import source that is neither a client nor a path; `clients`: the clients, listed. */
  importSource: (clients: string): string =>
    `name a client (${clients}) or the path of a JSON file`,
  /** No file at the path to import from. */
  checkPath: "check the path",
  /** None of a client's configuration files exists. */
  importPath: "name the file: patchbay mcp import <path>",
} as const;
