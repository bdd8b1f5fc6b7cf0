/**
 * The seam between server connections and their users (the agent loop, the REPL, the
 * scriptable commands). The connection manager implements these; nothing outside
 * `lib/connections` and `lib/transports` touches an MCP client or transport directly.
 *
 * @module
 */

import type {
  CallToolResult,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  LoggingLevel,
  Tool,
} from "@modelcontextprotocol/client";
import type { PatchbayError } from "../errors.ts";
import type { PolicyRefusal, TransportType } from "../config/types.ts";
import type { TaskCallContext, TaskProgress } from "./tasks/task_types.ts";

/** Lifecycle of one server's connection (see the manager's transition table). */
export type ConnectionState =
  | "disconnected"
  | "connecting"
  | "connected"
  | "failed"
  | "reconnecting"
  | "closed";

/** What `/connections`, `/status` and the banner show about one server. */
export interface ServerStatus {
  name: string;
  transport: TransportType;
  /** Why patchbay chose `transport`, when the entry does not say it. */
  transportReason?: string;
  /** The command line (stdio) or URL (network transports), secrets redacted. */
  target: string;
  state: ConnectionState;
  /** When the server entered `state`. */
  since: Date;
  counts: { tools: number; prompts: number; resources: number };
  /** The last failure, with its diagnosed cause and remedy. */
  error?: PatchbayError;
  serverInfo?: { name: string; version: string };
  protocolVersion?: string;
  /** The server's `instructions`, if it sent any. */
  instructions?: string;
  /** The entry has `disabled: true`: listed, never connected. */
  disabled?: boolean;
  /** The administrator's policy refuses the server (it is `disabled` too): the file and why. */
  refused?: PolicyRefusal;
  /** While `reconnecting`: which attempt comes next and when. */
  retry?: RetryStatus;
  /**
   * While `connecting` for the first time: its lists are the ones kept from an earlier run
   * (still fresh), offered until the server answers.
   */
  listsFromCache?: boolean;
  /**
   * While it connects for the first time: its package runner may be installing it, and
   * the first connect waits longer (`package_runner.ts`).
   */
  installing?: InstallStatus;
  /**
   * While `connected`: what the server declares but does not serve (a list it answered
   * with an error, treated as empty), each in words (`optional_lists.ts`).
   */
  warnings?: string[];
}

/** A first connect that waits for a package runner's install (`package_runner.ts`). */
export interface InstallStatus {
  /** `npx`, `uvx`, `pnpm dlx`, … */
  runner: string;
  /** As the entry names it: `@playwright/mcp@0.0.83`. */
  package: string;
  /** `missing`: the runner's cache lacks it; `unknown`: its cache cannot tell by name. */
  cache: "missing" | "unknown";
  /** The first connect's bound: the server's `timeout` plus the install allowance. */
  boundSeconds: number;
}

/** The restart series of a server that was lost (see `RECONNECT_BACKOFF`). */
export interface RetryStatus {
  /** The attempt that runs next (or is running), from 1. */
  attempt: number;
  /** Attempts before the server is marked failed; absent: no limit (network servers). */
  maxAttempts?: number;
  /** When it starts; absent while it runs. */
  nextAt?: Date;
}

/** One tool in the catalogue the model sees. */
export interface CatalogueTool {
  /** Model-facing name: unique, matches `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  originalName: string;
  title?: string;
  description?: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  annotations?: Tool["annotations"];
}

/** A progress notification for a running request. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of {@linkcode ToolHost.callTool}. */
export interface ToolCallOptions {
  /** Aborting cancels the request (`notifications/cancelled` is sent). */
  signal?: AbortSignal;
  /**
   * Upper bound for the whole call, progress notwithstanding: `AgentConfig.tool_call_timeout`.
   * @default the server's timeout
   */
  toolCallTimeoutSeconds?: number;
  onProgress?: (update: ProgressUpdate) => void;
  /** A call made as an MCP task: its statuses while the call waits (`tool_task.ts`). */
  onTask?: (progress: TaskProgress) => void;
  /** Where the call was made from, kept with the task it may start. */
  context?: TaskCallContext;
  /** The model's id for the call, for its span (`gen_ai.tool.call.id`). */
  toolCallId?: string;
}

/**
 * The tools of every connected server and how to call one: all the agent loop needs.
 *
 * `callTool` resolves with the server's result, including results with `isError: true`.
 * It owns the call's deadline: it rejects with `ToolTimeoutError` when `toolCallTimeoutSeconds`
 * passes (not counting the time the server waits on us) and cancels the request on the
 * server; callers keep no timer of their own. It rejects with `CancelledError` when
 * `signal` aborts, and a `PatchbayError` naming the server when the tool is unknown or
 * its connection is closed or fails during the call.
 */
export interface ToolHost {
  tools(): CatalogueTool[];
  /**
   * Tools of connected servers that the configuration keeps from being offered
   * (`include_tools`, `exclude_tools`), with why: a call of one by name is refused saying so.
   */
  withheld?(): WithheldTool[];
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: ToolCallOptions,
  ): Promise<CallToolResult>;
}

/** Answers to requests that servers send to the client. Absent: a clear refusal. */
export interface ServerRequestHandlers {
  sampling?: (
    server: string,
    params: CreateMessageRequest["params"],
    signal: AbortSignal,
  ) => Promise<CreateMessageResult>;
  elicitation?: (
    server: string,
    params: ElicitRequest["params"],
    signal: AbortSignal,
  ) => Promise<ElicitResult>;
  /**
   * Nobody can answer a form in this session (no terminal, no `--accept-form-defaults`):
   * the elicitation capability is not declared, so servers do not ask. Read at each
   * handshake (capabilities are fixed by it). @default false
   */
  withoutElicitation?: boolean;
  /**
   * Nothing in this session answers with a model (the scripting commands that load none:
   * `call`, `prompt`, `read`, the listings): the sampling capability is not declared, so
   * servers do not ask, and hide what needs it. Read at each handshake. @default false
   */
  withoutSampling?: boolean;
}

/** Things that happen on connections, for the UI and the log. */
export type ConnectionEvent =
  | {
    type: "state";
    server: string;
    state: ConnectionState;
    error?: PatchbayError;
    /** With `connected`: the status's `warnings`. */
    warnings?: string[];
  }
  | { type: "list_changed"; server: string; list: "tools" | "prompts" | "resources" }
  | { type: "resource_updated"; server: string; uri: string }
  | { type: "log"; server: string; level: LoggingLevel; logger?: string; data: unknown };

/** A tool a server lists that is not offered, and where that was decided. */
export interface WithheldTool {
  tool: CatalogueTool;
  /** E.g. `excluded by mcpServers.fs.exclude_tools ("write_*")`. */
  reason: string;
  /** The administrator's policy file, when its `denied_tools` withholds the tool. */
  policy?: string;
}
