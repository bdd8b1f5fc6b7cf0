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
import { didYouMean } from "../text.ts";
import { buildCatalogue } from "./catalogue.ts";
import type { ServerConnection } from "./connection.ts";
import type { Lists } from "./server_session.ts";
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

  /** Tools of the connected servers, as their entries' tool filters choose. */
  tools(): CatalogueTool[] {
    return this.#catalogue.filter((tool) =>
      this.#connections.get(tool.server)?.session && !this.#withholding(tool)
    );
  }

  /** Tools of the connected servers that their entries keep from being offered, and why. */
  withheld(): WithheldTool[] {
    return this.#catalogue.flatMap((tool) => {
      const why = this.#connections.get(tool.server)?.session && this.#withholding(tool);
      if (!why) return [];
      const reason = describeWithholding(tool.server, why);
      return [{ tool, reason, ...(why.file ? { policy: why.file } : {}) }];
    });
  }

  /** Patterns of the connected servers' tool filters that match none of their tools. */
  unmatchedPatterns(): UnmatchedPattern[] {
    return [...this.#connections.values()].flatMap((connection) => {
      if (!connection.session) return [];
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

/** The `list` entries of the connected servers among `connections`, each with its server. */
export function offeredBy<L extends "prompts" | "resources" | "templates">(
  connections: Iterable<ServerConnection>,
  list: L,
): (Lists[L][number] & { server: string })[] {
  return [...connections].filter((c) => c.session).flatMap((c) =>
    c.lists[list].map((entry) => ({ ...entry, server: c.name }))
  );
}
