/**
 * The tools of every configured server under their model-facing names, and which of them
 * are offered: those of connected servers that their entries' `include_tools` and
 * `exclude_tools` keep. A call's name is routed here to its server's tool, or refused with
 * the error saying why. The prompts, resources and resource templates of the connected
 * servers, each with its server, are read here too.
 *
 * @module
 */

import { ToolExecutionError } from "../errors.ts";
import { didYouMean } from "../text/text.ts";
import { buildCatalogue } from "./catalogue.ts";
import type { ServerConnection } from "./connection.ts";
import type { Lists } from "./session/server_session.ts";
import {
  describeWithholding,
  type UnmatchedPattern,
  unmatchedPatterns,
  withheldError,
  type Withholding,
  withholding,
} from "./tool_filter.ts";
import type { CatalogueTool, WithheldTool } from "./types.ts";

/** Every server's tools, by model-facing name. */
export class OfferedTools {
  readonly #connections: ReadonlyMap<string, ServerConnection>;
  #catalogue: CatalogueTool[] = [];
  #routes = new Map<string, CatalogueTool>();

  /** `connections`: the manager's, by server name (read as they are at each call). */
  constructor(connections: ReadonlyMap<string, ServerConnection>) {
    this.#connections = connections;
  }

  /** Reads every server's last lists again (a server's lists or connectedness changed). */
  rebuild(): void {
    this.#catalogue = buildCatalogue(
      [...this.#connections.values()].map((c) => ({ server: c.name, tools: c.lists.tools })),
    );
    this.#routes = new Map(this.#catalogue.map((tool) => [tool.name, tool]));
  }

  /**
   * Tools of the connected servers (and of those whose first attempt runs with their kept
   * lists fresh), as their entries' tool filters choose.
   */
  tools(): CatalogueTool[] {
    return this.#catalogue.filter((tool) =>
      offers(this.#connections.get(tool.server)) && !this.#withholding(tool)
    );
  }

  /** Tools of the connected servers that their entries keep from being offered, and why. */
  withheld(): WithheldTool[] {
    return this.#catalogue.flatMap((tool) => {
      const why = offers(this.#connections.get(tool.server)) && this.#withholding(tool);
      if (!why) return [];
      const reason = describeWithholding(tool.server, why);
      return [{ tool, reason, ...(why.file ? { policy: why.file } : {}) }];
    });
  }

  /** Patterns of the connected servers' tool filters that match none of their tools. */
  unmatchedPatterns(): UnmatchedPattern[] {
    return [...this.#connections.values()].flatMap((connection) => {
      if (!offers(connection)) return [];
      const server = connection.config.name;
      const names = this.#catalogue.filter((t) => t.server === server).map((t) => t.originalName);
      return unmatchedPatterns(server, connection.config, names);
    });
  }

  /**
   * The tool a call of `name` goes to; throws the call's error when no server offers it or
   * its entry withholds it.
   */
  route(name: string): CatalogueTool {
    const tool = this.#routes.get(name);
    if (!tool) throw this.#unknownTool(name);
    const why = this.#withholding(tool);
    if (why) throw withheldError(tool, describeWithholding(tool.server, why), why.file);
    return tool;
  }

  #withholding(tool: CatalogueTool): Withholding | undefined {
    const config = this.#connections.get(tool.server)?.config;
    return config && withholding(config, tool.originalName);
  }

  #unknownTool(name: string): ToolExecutionError {
    const names = this.tools().map((t) => t.name);
    const suggestion = didYouMean(name, names);
    return new ToolExecutionError(
      name,
      `no connected server offers a tool named '${name}'` +
        (suggestion ? ` (did you mean '${suggestion}'?)` : ""),
    );
  }
}

/** What the model and the person were shown of a tool, to compare two of its versions. */
export function definitionOf(tool: CatalogueTool): string {
  return JSON.stringify([
    tool.server,
    tool.originalName,
    tool.title,
    tool.description,
    tool.inputSchema,
    tool.annotations,
  ]);
}

/**
 * Whether `connection`'s lists are offered: it is connected, or its first attempt runs
 * with the lists kept from an earlier run still fresh (a call then waits for it).
 */
export function offers(connection: ServerConnection | undefined): boolean {
  return connection !== undefined &&
    (connection.session !== undefined || connection.listsFromCache);
}

/** The `list` entries of the servers {@linkcode offers} names, each with its server. */
export function offeredBy<L extends "prompts" | "resources" | "templates">(
  connections: Iterable<ServerConnection>,
  list: L,
): (Lists[L][number] & { server: string })[] {
  return [...connections].filter(offers).flatMap((c) =>
    c.lists[list].map((entry) => ({ ...entry, server: c.name }))
  );
}
