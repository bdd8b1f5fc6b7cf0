/**
 * The `mcp` commands' declarations (add, add-json, import, list, get, remove, enable,
 * disable): an entry of `commands/_declarations.ts`, apart only for that file's length.
 *
 * @module
 */

import type { McpAddOptions, McpEditOptions } from "./mcp.ts";
import type { McpImportOptions } from "./mcp_import.ts";
import type { McpListOptions } from "./mcp_list.ts";
import {
  action,
  type CommandDeclaration,
  type OptionDeclaration,
} from "../lib/cli/command_declaration.ts";

/** Every occurrence of the option, in order. */
const collect = (value: string, previous: unknown) => [...(previous as string[] ?? []), value];

const jsonShort = { flags: "--json", description: "print JSON" };
const scope = {
  flags: "-s, --scope <scope>",
  description: "project: ./servers_config.json (default); user: ~/.config/patchbay's",
};
const secretFlags: readonly OptionDeclaration[] = [
  {
    flags: "--move-secrets",
    description: "move secrets (env, headers, arguments) to .env without asking",
  },
  {
    flags: "--keep-secrets-inline",
    description: "write secrets into the entry (file must be mode 600)",
  },
];
const server = { name: "<server>", description: "server name" };

/** `patchbay mcp …`: servers added to, listed from and removed from the configuration. */
export const MCP: CommandDeclaration = {
  name: "mcp",
  description: "add, list, import and remove servers in servers_config.json",
  prefetch: () => import("./mcp.ts"),
  commands: [
    {
      name: "add",
      description: "add a server: a command (stdio) or a URL (http, sse); -- before its flags",
      arguments: [
        { name: "<name>", description: "server name" },
        { name: "<command-or-url>", description: "the command that starts it, or its URL" },
        { name: "[args...]", description: "the command's arguments" },
      ],
      options: [
        {
          flags: "-t, --transport <transport>",
          description: "stdio, http or sse (default: http for a URL, sse for one ending in /sse)",
        },
        {
          flags: "-e, --env <KEY=VALUE>",
          description: "environment variable of a stdio server",
          parse: collect,
        },
        {
          flags: "-H, --header <Name: value>",
          description: "request header of a server at a URL",
          parse: collect,
        },
        scope,
        ...secretFlags,
      ],
      helpAfterError:
        "(a command's own flags go after --: patchbay mcp add <name> -- <command> [args...])",
      needs: "config-edit",
      run: action(
        async (
          options: McpAddOptions,
          [name, at, args]: [string, string, string[]],
          program,
        ) => {
          const { mcpAdd } = await import("./mcp.ts");
          const rootFlags = new Set(program?.options.flatMap((o) => [o.short, o.long]))
            .difference(new Set([undefined])) as Set<string>;
          // commander keeps the words it parsed as `rawArgs` (not in its types).
          const words = (program as { rawArgs?: string[] } | undefined)?.rawArgs ?? [];
          return mcpAdd(name, at, args, { ...options, typed: { words, rootFlags } });
        },
      ),
    },
    {
      name: "add-json",
      description: "add a server from its JSON entry (any client's form)",
      arguments: [
        { name: "<name>", description: "server name" },
        { name: "<json>", description: "the entry, one quoted word" },
      ],
      options: [scope, ...secretFlags],
      needs: "config-edit",
      run: action(async (options: McpEditOptions, [name, json]: [string, string]) =>
        (await import("./mcp.ts")).mcpAddJson(name, json, options)
      ),
    },
    {
      name: "import",
      description: "import the servers of claude-desktop, claude-code, cursor, vscode, gemini",
      arguments: [{
        name: "[source]",
        description: "a client's name, or the path of its JSON file",
      }],
      options: [
        { flags: "--dry-run", description: "show what would be added; write nothing" },
        {
          flags: "--keep-trust",
          description: 'keep settings that widen trust ("trusted", "sampling", "roots", …)',
        },
        scope,
        ...secretFlags,
      ],
      needs: "config-edit",
      run: action(async (options: McpImportOptions, [source]: [string | undefined]) =>
        (await import("./mcp_import.ts")).mcpImport(source, options)
      ),
    },
    {
      name: "list",
      description: "list the configured servers (--check: connect them and say how each went)",
      options: [jsonShort, {
        flags: "--check",
        description: "connect each server and show its state and diagnosis",
      }],
      needs: "servers",
      run: action(async (options: McpListOptions) =>
        (await import("./mcp_list.ts")).mcpList(options)
      ),
    },
    {
      name: "get",
      description: "show one server's entry (--check: connect it)",
      arguments: [server],
      options: [jsonShort, {
        flags: "--check",
        description: "connect the server and show its state and diagnosis",
      }],
      needs: "servers",
      run: action(async (options: McpListOptions, [name]: [string]) =>
        (await import("./mcp_list.ts")).mcpGet(name, options)
      ),
    },
    {
      name: "remove",
      aliases: ["rm"],
      description: "remove a server's entry",
      arguments: [server],
      options: [scope],
      needs: "config-edit",
      run: action(async (options: McpEditOptions, [name]: [string]) =>
        (await import("./mcp.ts")).mcpRemove(name, options)
      ),
    },
    {
      name: "enable",
      description: "start a disabled server again",
      arguments: [server],
      options: [scope],
      needs: "config-edit",
      run: action(async (options: McpEditOptions, [name]: [string]) =>
        (await import("./mcp.ts")).mcpSetEnabled(name, true, options)
      ),
    },
    {
      name: "disable",
      description: "keep a server's entry but do not start it",
      arguments: [server],
      options: [scope],
      needs: "config-edit",
      run: action(async (options: McpEditOptions, [name]: [string]) =>
        (await import("./mcp.ts")).mcpSetEnabled(name, false, options)
      ),
    },
  ],
};
