/**
 * The remedies of `patchbay mcp add` and `remove` called wrongly (`commands/mcp.ts`): part
 * of the failure table (`lib/errors/failure_table.ts`), kept in a file of their own so the
 * table stays within the size of a file. They name the command's own flags, the same on
 * every surface (these are commands); a function takes the values only known when it fails.
 *
 * @module
 */

/** Steps of the remedies of `patchbay mcp add` and `remove` called wrongly. */
export const MCP_EDIT_STEPS = {
  /** A URL given with `--transport stdio`. */
  urlNotStdio: "drop --transport stdio (a URL means http), or give --transport http or sse",
  /** Environment variables or a working folder given for a URL. */
  stdioOnly: 'give request headers with -H "Name: value", or --transport stdio for a command',
  /** An entry given as JSON that does not parse; `hint`: what the parser suggests. */
  entryNotJson: (hint: string): string =>
    `${hint}; quote the whole entry as one word, e.g. '{"command": "npx", "args": ["x"]}'`,
  /** An entry given as JSON that is not an object. */
  entryNotObject:
    `e.g. '{"command": "npx", "args": ["-y", "some-server"]}' or '{"url": "https://..."}'`,
  /** A server another command removed meanwhile. */
  removedMeanwhile: "`patchbay mcp list` shows the servers now; nothing was written",
  /** A server name the file has already. */
  nameTaken: (name: string): string =>
    `remove it first (patchbay mcp remove ${name}) or pick another name`,
  /** A name that cannot name a server; `rule`: the rule names follow. */
  serverName: (rule: string, suggestion: string | undefined): string =>
    `use ${rule}` + (suggestion ? `, e.g. '${suggestion}'` : ""),
  /** An unknown `--transport`. */
  transport: "--transport stdio, http or sse",
  /** A server's flag patchbay would take as its own. */
  separateFlags: (name: string, commandOrUrl: string): string =>
    `put -- before the server's command and its flags: patchbay mcp add ${name} -- ` +
    `${commandOrUrl} ...`,
  /** A `-e`/`-H` value without its separator. */
  flagForm: (flag: string, form: string): string => `write ${flag} ${form}`,
  /** The same key given twice. */
  once: (key: string): string => `give ${key} once`,
} as const;
