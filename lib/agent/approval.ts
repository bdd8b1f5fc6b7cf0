/**
 * Which tool calls need the user's approval.
 *
 * Servers marked `trusted` in the configuration run without asking. Otherwise each call is
 * asked about, and the user may answer "always" for the tool or for the whole server for
 * the rest of the session. An "always" covers exactly the tool definitions the user saw
 * when answering: a tool that appears later (a `list_changed` notification) or whose
 * description or schema changes afterwards is asked about again, so a server cannot widen
 * an approval after the fact.
 *
 * @module
 */

import type { CatalogueTool } from "../connections/types.ts";

/** The user's answer to "run this tool call?". */
export type ToolApproval = "yes" | "no" | "always-tool" | "always-server";

/** What the policy needs to know about a server. */
export interface ServerTrust {
  name: string;
  /** `trusted` in the server's entry. */
  trusted: boolean;
}

/** Why a call needs asking about, for the UI to say. */
export type ApprovalReason = "not-approved" | "new-tool" | "changed";

/** Session-long approval memory. */
export class ApprovalPolicy {
  #trusted: Set<string>;
  /** Tool fingerprints approved one by one. */
  #tools = new Set<string>();
  /** Per server: the fingerprints of its tools when the user approved all of them. */
  #servers = new Map<string, Set<string>>();
  /** Per server and tool name: the fingerprint last approved, to tell "changed" from "new". */
  #seen = new Map<string, string>();

  constructor(servers: readonly ServerTrust[]) {
    this.#trusted = new Set(servers.filter((s) => s.trusted).map((s) => s.name));
  }

  /** Whether the server's entry is `trusted`. */
  isTrusted(server: string): boolean {
    return this.#trusted.has(server);
  }

  /** `undefined` when the call may run now; else why the user must be asked. */
  check(tool: CatalogueTool): ApprovalReason | undefined {
    if (this.#trusted.has(tool.server)) return undefined;
    const print = fingerprint(tool);
    if (this.#tools.has(print) || this.#servers.get(tool.server)?.has(print)) return undefined;
    const previous = this.#seen.get(identity(tool));
    if (previous !== undefined) return previous === print ? "not-approved" : "changed";
    return this.#servers.has(tool.server) ? "new-tool" : "not-approved";
  }

  /**
   * Records an answer. `catalogue` is the tool list the user was looking at, which an
   * "always-server" answer covers.
   */
  record(answer: ToolApproval, tool: CatalogueTool, catalogue: readonly CatalogueTool[]): void {
    if (answer === "no") return;
    this.#seen.set(identity(tool), fingerprint(tool));
    if (answer === "always-tool") this.#tools.add(fingerprint(tool));
    if (answer === "always-server") {
      const prints = this.#servers.get(tool.server) ?? new Set<string>();
      for (const t of catalogue) {
        if (t.server !== tool.server) continue;
        prints.add(fingerprint(t));
        this.#seen.set(identity(t), fingerprint(t));
      }
      this.#servers.set(tool.server, prints);
    }
  }

  /** Forgets every "always" answer (trust from the configuration stays). */
  reset(): void {
    this.#tools.clear();
    this.#servers.clear();
    this.#seen.clear();
  }
}

function identity(tool: CatalogueTool): string {
  return JSON.stringify([tool.server, tool.originalName]);
}

/** What the user approved: server, name, and the definition the model sees. */
function fingerprint(tool: CatalogueTool): string {
  return JSON.stringify([
    tool.server,
    tool.originalName,
    tool.description ?? "",
    tool.inputSchema,
    tool.annotations ?? null,
  ]);
}
