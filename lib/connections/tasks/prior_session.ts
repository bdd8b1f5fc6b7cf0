/**
 * Following a task in the streamable HTTP session it was started in, when that session
 * belongs to an earlier process (ended by a crash or `kill -9`, so it never ended the
 * session): a 2025-11-25 server may keep tasks per session (server-everything does), so
 * the task is asked for in its own session (`Mcp-Session-Id`), joined without a new
 * handshake. Requests of its server (a form the task asks for) are answered as in any
 * session. The session is left to the server afterwards (no `DELETE`): other tasks
 * recorded in it may still be asked for.
 *
 * A server that no longer knows the session (HTTP 404) no longer knows its tasks: they
 * end `unknown`, saying so.
 *
 * @module
 */

import { Client, ProtocolError, SdkHttpError } from "@modelcontextprotocol/client";
import {
  type ConnectedMcpSessionPort,
  DispatchError,
  type JsonRpcResponse,
  type SerializedTaskReference,
  type TaskEnabledSession,
  withTasks,
} from "@modelcontextprotocol/ext-tasks/client";
import { timerDelay } from "../../async/timers.ts";
import type { ServerConfig } from "../../config/types.ts";
import type { Log } from "../../log/log.ts";
import type { PatchbayOAuthProvider } from "../../oauth/mod.ts";
import type { Redactor } from "../../redact/redact.ts";
import type { HttpTransport } from "../../transports/http.ts";
import { RawToolSchemas } from "../raw_schemas.ts";
import { clientCapabilities, installRequestHandlers, type RequestContext } from "../requests.ts";
import { createTransport, type SessionTransportOptions } from "../session/session_transport.ts";
import { ANY_RESULT, followExecution } from "./task_follow.ts";
import { receiverCapabilities } from "./task_generation.ts";
import { boundedPort } from "./task_session.ts";
import type { LiveTask, StartedTask } from "./task_types.ts";
import { RequestTracer } from "../../telemetry/mcp_requests.ts";

/** JSON-RPC "invalid params": what ext-tasks reads as a task its server does not know. */
const UNKNOWN_TASK_CODE = -32602;

/** What joining an earlier session needs (the connection's own settings). */
export interface PriorSessionOptions extends SessionTransportOptions {
  config: ServerConfig;
  clientInfo: { name: string; version: string };
  requests: Omit<RequestContext, "server" | "log">;
  oauth?: PatchbayOAuthProvider;
  redactor: Redactor;
  log: Log;
  /** Receives how to close a joined session when the connection closes. */
  closeWith?: (close: () => Promise<void>) => void;
}

/** One earlier session joined, shared by the tasks followed in it. */
interface Joined {
  client: Client;
  transport: HttpTransport;
  tasks: TaskEnabledSession;
  following: number;
}

const joined = new Map<string, Promise<Joined>>();

/** An earlier session joined for a while: its tasks, and how to leave it. */
export interface JoinedSession {
  client: Client;
  tasks: TaskEnabledSession;
  /** Leaves the session (the last one to leave closes the connection, not the session). */
  leave(): Promise<void>;
}

/** Joins the earlier session `sessionId` of a server (shared while anyone is in it). */
export async function joinPriorSession(
  sessionId: string,
  endpoint: string,
  options: PriorSessionOptions,
): Promise<JoinedSession> {
  const key = JSON.stringify([options.config.name, sessionId]);
  let joining = joined.get(key);
  if (!joining) {
    joining = join(sessionId, endpoint, options);
    joined.set(key, joining);
    joining.then(
      (session) => options.closeWith?.(() => closeJoined(key, session)),
      () => joined.delete(key),
    );
  }
  const session = await joining;
  session.following++;
  let left = false;
  return {
    client: session.client,
    tasks: session.tasks,
    leave: async () => {
      if (left) return;
      left = true;
      if (--session.following > 0) return;
      await closeJoined(key, session);
    },
  };
}

/** Closes a joined session's connection, leaving the session to the server. */
async function closeJoined(key: string, session: Joined): Promise<void> {
  if (joined.get(key) !== undefined) joined.delete(key);
  // Left to the server, not ended: other tasks of it may still be recorded.
  session.transport.keepSessionOnClose();
  await session.tasks.close().catch(() => {});
  await session.client.close().catch(() => {});
  await session.transport.close().catch(() => {});
}

/** Follows `task` in the earlier session `sessionId` of its server (see the module). */
export async function followInPriorSession(
  task: StartedTask,
  sessionId: string,
  options: PriorSessionOptions,
): Promise<LiveTask> {
  const session = await joinPriorSession(sessionId, task.endpoint, options);
  const leave = session.leave;
  const reference: SerializedTaskReference = {
    endpointId: task.endpoint,
    generation: "v1",
    taskId: task.taskId as SerializedTaskReference["taskId"],
    originalOperation: "tools/call",
  };
  try {
    const execution = await session.tasks.resumeTask(reference, {
      requestTimeoutMs: options.config.timeoutSeconds * 1000,
    });
    const live = followExecution(execution, task, {
      client: session.client,
      redactor: options.redactor,
      log: options.log,
      requestTimeoutMs: options.config.timeoutSeconds * 1000,
    });
    void live.end.finally(leave);
    return live;
  } catch (error) {
    await leave();
    throw error;
  }
}

async function join(
  sessionId: string,
  endpoint: string,
  options: PriorSessionOptions,
): Promise<Joined> {
  const { config, log } = options;
  const transport = createTransport(config, options, {
    oauth: config.transport === "stdio" ? undefined : options.oauth,
    rawSchemas: new RawToolSchemas(),
    requests: new RequestTracer({
      server: config.name,
      transport: config.transport,
      url: config.transport === "stdio" ? undefined : config.url,
    }),
    sessionId,
  }) as HttpTransport;
  const offersElicitation = !options.requests.handlers().withoutElicitation;
  const offersSampling = !options.requests.handlers().withoutSampling;
  const client = new Client(options.clientInfo, {
    capabilities: {
      ...clientCapabilities(false, offersElicitation, offersSampling),
      tasks: receiverCapabilities(offersSampling, offersElicitation),
    },
  });
  installRequestHandlers(
    client,
    { ...options.requests, server: config, log },
    false,
    offersElicitation,
    offersSampling,
  );
  // A legacy connect over a transport that has its session id already sends no
  // `initialize`: the server's session goes on.
  await client.connect(transport, { prior: { kind: "legacy" } });
  transport.setProtocolVersion("2025-11-25");
  log.info(`joined session ${sessionId} to follow the tasks started in it`);
  const tasks = withTasks<void>(boundedPort(priorPort(client, endpoint, sessionId)), {
    onError: (error) => log.debug("tasks: background error", { error: String(error) }),
  });
  return { client, transport, tasks, following: 0 };
}

/**
 * ext-tasks' port over a client that joined a session without a handshake: the server's
 * capabilities are those it had when the task started (a tool-call task server).
 */
function priorPort(client: Client, endpointId: string, sessionId: string): ConnectedMcpSessionPort {
  let invalidated = false;
  const invalidation = new Set<(reason: unknown) => void>();
  const previous = client.onclose;
  client.onclose = () => {
    previous?.();
    invalidated = true;
    for (const listener of invalidation) listener(new Error("MCP client connection closed"));
  };
  return {
    endpointId,
    taskCapabilities: {
      generation: "v1",
      capabilities: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    get invalidated() {
      return invalidated;
    },
    dispatch: async (request, options = {}): Promise<JsonRpcResponse> => {
      const { method, params } = request as { method: string; params?: Record<string, unknown> };
      const timeout = timerDelay(options.context?.requestTimeoutMs ?? 60_000);
      try {
        const result = await client.request(
          { method, ...(params ? { params } : {}) } as never,
          ANY_RESULT as never,
          { signal: options.signal, timeout },
        );
        return { kind: "result", result: result as never };
      } catch (error) {
        if (error instanceof ProtocolError) {
          return { kind: "error", error: { code: error.code, message: error.message } };
        }
        // 404 is the spec's answer for a session the server ended; some servers say 400
        // ("No valid session ID provided", server-everything).
        if (error instanceof SdkHttpError && (error.status === 404 || error.status === 400)) {
          return {
            kind: "error",
            error: {
              code: UNKNOWN_TASK_CODE,
              message: `the server no longer knows session ${sessionId}, where the task was ` +
                `started (HTTP ${error.status}), nor its tasks`,
            },
          };
        }
        throw new DispatchError("MCP client request failed", false, { cause: error });
      }
    },
    onServerRequest: () => () => {},
    onNotification: (listener) => {
      client.fallbackNotificationHandler = (notification) => {
        listener(notification as never);
        return Promise.resolve();
      };
      return () => client.fallbackNotificationHandler = undefined;
    },
    onInvalidated: (listener) => {
      invalidation.add(listener);
      return () => invalidation.delete(listener);
    },
  };
}
