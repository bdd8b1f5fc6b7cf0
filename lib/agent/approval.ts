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
 * An "always-project" answer is also remembered beyond the session, for the project folder
 * (`approval_store.ts`), under the same rule: it covers the definition approved, and a
 * changed tool is asked about again.
 *
 * Every "always" also covers the server the tool came from, as its entry starts it (the
 * command, arguments, folder and environment of a stdio server; the URL and header names
 * of a network one: `launch_identity.ts`): a server name pointed at another program, or
 * given `NODE_OPTIONS` that load other code (a project's configuration edited, or pulled
 * from elsewhere), is asked about again even when the new program copies the approved
 * tool's definition exactly, since it is other code that would run. The question says
 * which part changed.
 *
 * @module
 */

import type { CatalogueTool } from "../connections/types.ts";
import { type ApprovalStore, definitionHash, type RememberedApproval } from "./approval_store.ts";
import {
  changedParts,
  type LaunchIdentity,
  launchIdentity,
  type LaunchPart,
  type ServerLaunch,
} from "./launch_identity.ts";

/** The user's answer to "run this tool call?". */
export type ToolApproval = "yes" | "no" | "always-tool" | "always-server" | "always-project";

/**
 * What the policy needs to know about a server: its name, `trusted`, and how the entry
 * starts it (an "always" covers this one only).
 */
export interface ServerTrust extends ServerLaunch {
  name: string;
  /** `trusted` in the server's entry. */
  trusted: boolean;
}

/** Which parts of a server's entry changed since a tool was approved (`launch_identity.ts`). */
export type LaunchChange = LaunchPart[] | "unrecorded";

/** The identity of a server the configuration does not name. */
const NO_LAUNCH: LaunchIdentity = launchIdentity({});

/**
 * Why a call needs asking about, for the UI to say. `hook`: a `PreToolUse` hook asked for a
 * person's answer, or failed (docs/hooks.md).
 */
export type ApprovalReason = "not-approved" | "new-tool" | "changed" | "server-changed" | "hook";

/** The approvals remembered for the project folder, and where new ones are kept. */
export interface RememberedApprovals {
  /** The project folder (absolute). */
  folder: string;
  /** Those of {@linkcode folder}. */
  approvals: readonly RememberedApproval[];
  store: ApprovalStore;
  /** A remembered approval could not be written (it still holds for this session). */
  onError?: (error: unknown) => void;
}

/** Session-long approval memory. */
export class ApprovalPolicy {
  #trusted: Set<string>;
  /** Tool fingerprints approved one by one. */
  #tools = new Set<string>();
  /** Per server: the fingerprints of its tools when the user approved all of them. */
  #servers = new Map<string, Set<string>>();
  /**
   * Per server and tool name: what was last approved (with and without the server's
   * start), to tell "changed" from "new" and a changed tool from a changed server.
   */
  #seen = new Map<string, { print: string; definition: string; parts: Record<string, string> }>();

  /** Per server and tool name: the hashes remembered for the project folder. */
  #remembered = new Map<
    string,
    { definition: string; launch?: string; launchParts?: Record<string, string> }
  >();
  /** Per server: how its entry starts it. */
  #launch: Map<string, LaunchIdentity>;
  readonly #store?: RememberedApprovals;
  /** Remembered approvals still being written. */
  #saving: Promise<unknown> = Promise.resolve();

  constructor(servers: readonly ServerTrust[], remembered?: RememberedApprovals) {
    this.#trusted = new Set(servers.filter((s) => s.trusted).map((s) => s.name));
    this.#launch = new Map(servers.map((server) => [server.name, launchIdentity(server)]));
    this.#store = remembered;
    for (const a of remembered?.approvals ?? []) {
      this.#remembered.set(JSON.stringify([a.server, a.tool]), {
        definition: a.definition,
        launch: a.launch,
        launchParts: a.launchParts,
      });
    }
  }

  /**
   * The servers' entries as the configuration now has them (`/refresh`): `trusted` taken
   * away asks again at once, and an "always" given for a server's tools does not carry
   * over to the program an edited entry now starts.
   */
  setServers(servers: readonly ServerTrust[]): void {
    this.#trusted = new Set(servers.filter((s) => s.trusted).map((s) => s.name));
    this.#launch = new Map(servers.map((server) => [server.name, launchIdentity(server)]));
  }

  /** Whether an answer can be remembered beyond the session ("always-project"). */
  get canRemember(): boolean {
    return this.#store !== undefined;
  }

  /** Whether the server's entry is `trusted`. */
  isTrusted(server: string): boolean {
    return this.#trusted.has(server);
  }

  /** `undefined` when the call may run now; else why the user must be asked. */
  check(tool: CatalogueTool): ApprovalReason | undefined {
    if (this.#trusted.has(tool.server)) return undefined;
    const print = this.#fingerprint(tool);
    if (this.#tools.has(print) || this.#servers.get(tool.server)?.has(print)) return undefined;
    const remembered = this.#remembered.get(identity(tool));
    const definition = definitionHash(fingerprint(tool));
    if (
      remembered?.definition === definition && remembered.launch === this.#launchOf(tool.server)
    ) {
      return undefined;
    }
    const previous = this.#seen.get(identity(tool));
    if (previous !== undefined) {
      return previous.print === print
        ? "not-approved"
        : previous.definition === fingerprint(tool)
        ? "server-changed"
        : "changed";
    }
    if (remembered !== undefined) {
      return remembered.definition === definition ? "server-changed" : "changed";
    }
    return this.#servers.has(tool.server) ? "new-tool" : "not-approved";
  }

  /**
   * For a call asked about again because its server's entry changed ("server-changed"):
   * which parts of the entry changed since the approval, or `"unrecorded"` when the
   * approval was remembered before they were recorded. `undefined` for any other reason.
   */
  launchChange(tool: CatalogueTool): LaunchChange | undefined {
    const now = this.#identityOf(tool.server);
    const previous = this.#seen.get(identity(tool));
    if (previous !== undefined) {
      return previous.definition === fingerprint(tool) && previous.print !== this.#fingerprint(tool)
        ? changedParts(previous.parts, now)
        : undefined;
    }
    const remembered = this.#remembered.get(identity(tool));
    if (!remembered || remembered.definition !== definitionHash(fingerprint(tool))) {
      return undefined;
    }
    if (remembered.launch === now.digest) return undefined;
    return changedParts(remembered.launchParts, now);
  }

  /**
   * Records an answer. `catalogue` is the tool list the user was looking at, which an
   * "always-server" answer covers.
   */
  record(answer: ToolApproval, tool: CatalogueTool, catalogue: readonly CatalogueTool[]): void {
    if (answer === "no") return;
    this.#see(tool);
    if (answer === "always-tool" || answer === "always-project") {
      this.#tools.add(this.#fingerprint(tool));
    }
    if (answer === "always-project" && this.#store) this.#remember(tool, this.#store);
    if (answer === "always-server") {
      const prints = this.#servers.get(tool.server) ?? new Set<string>();
      for (const t of catalogue) {
        if (t.server !== tool.server) continue;
        prints.add(this.#fingerprint(t));
        this.#see(t);
      }
      this.#servers.set(tool.server, prints);
    }
  }

  #remember(tool: CatalogueTool, store: RememberedApprovals): void {
    const definition = definitionHash(fingerprint(tool));
    const now = this.#identityOf(tool.server);
    const launch = now.digest;
    this.#remembered.set(identity(tool), { definition, launch, launchParts: now.parts });
    const saved = store.store.add({
      folder: store.folder,
      server: tool.server,
      tool: tool.originalName,
      definition,
      launch,
      launchParts: now.parts,
      approvedAt: new Date().toISOString(),
    }).catch((error) => store.onError?.(error));
    this.#saving = Promise.all([this.#saving, saved]);
  }

  /** Resolves once every remembered approval answered so far is written (or failed). */
  flush(): Promise<void> {
    return this.#saving.then(() => {});
  }

  /** How `server` is started (a server unknown to the configuration: started by nothing). */
  #identityOf(server: string): LaunchIdentity {
    return this.#launch.get(server) ?? NO_LAUNCH;
  }

  /** The digest of how `server` is started. */
  #launchOf(server: string): string {
    return this.#identityOf(server).digest;
  }

  /** The tool's definition and its server's start, as one key of the session's answers. */
  #fingerprint(tool: CatalogueTool): string {
    return `${fingerprint(tool)}\u0000${this.#launchOf(tool.server)}`;
  }

  #see(tool: CatalogueTool): void {
    this.#seen.set(identity(tool), {
      print: this.#fingerprint(tool),
      definition: fingerprint(tool),
      parts: this.#identityOf(tool.server).parts,
    });
  }

  /** Forgets every "always" answer of the session (trust and remembered approvals stay). */
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
