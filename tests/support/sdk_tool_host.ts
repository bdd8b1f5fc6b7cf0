/**
 * A thin, test-only {@linkcode ToolHost} over the SDK's own `Client` and stdio transport,
 * so the agent's tests can talk to real MCP servers before the connection manager
 * (issue 3) is merged. It does only what the seam promises: a catalogue with unique
 * model-facing names, `callTool` with timeout, cancellation and progress, and
 * `sampling/createMessage` routed to {@linkcode ServerRequestHandlers.sampling}.
 *
 * @module
 */

import { type CallToolResult, Client, ProtocolError, SdkError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type {
  CatalogueTool,
  ServerRequestHandlers,
  ToolCallOptions,
  ToolHost,
} from "../../lib/connections/types.ts";
import {
  CancelledError,
  PatchbayError,
  SamplingRejectedError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../lib/errors.ts";

/** One stdio server to start. */
export interface StdioServerSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}

interface Connection {
  spec: StdioServerSpec;
  client: Client;
  transport: StdioClientTransport;
  tools: CatalogueTool[];
}

/** A ToolHost over SDK clients. */
export class SdkToolHost implements ToolHost {
  /** Notifications sent to servers (e.g. `notifications/cancelled`), for assertions. */
  readonly sentNotifications: { server: string; method: string; params: unknown }[] = [];
  #connections: Connection[] = [];
  #byName = new Map<string, { connection: Connection; tool: CatalogueTool }>();

  private constructor() {}

  /** Connects to every server (in parallel) and lists their tools. */
  static async start(
    servers: StdioServerSpec[],
    handlers: ServerRequestHandlers = {},
  ): Promise<SdkToolHost> {
    const host = new SdkToolHost();
    try {
      const connections = await Promise.all(
        servers.map((spec) => connect(spec, handlers, host.sentNotifications)),
      );
      host.#connections = connections;
    } catch (error) {
      await host.close();
      throw error;
    }
    for (const connection of host.#connections) {
      for (const tool of connection.tools) host.#byName.set(tool.name, { connection, tool });
    }
    return host;
  }

  tools(): CatalogueTool[] {
    return this.#connections.flatMap((c) => c.tools);
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<CallToolResult> {
    const entry = this.#byName.get(name);
    if (!entry) throw new ToolExecutionError(name, `no tool named ${name} is connected`);
    const { connection, tool } = entry;
    const ms = options.timeoutSeconds === undefined ? undefined : options.timeoutSeconds * 1000;
    try {
      return await connection.client.callTool({ name: tool.originalName, arguments: args }, {
        signal: options.signal,
        timeout: ms,
        maxTotalTimeout: ms,
        onprogress: options.onProgress
          ? (p) => options.onProgress!({ progress: p.progress, total: p.total, message: p.message })
          : undefined,
      }) as CallToolResult;
    } catch (error) {
      if (options.signal?.aborted) throw new CancelledError(`the call to ${tool.originalName}`);
      if (error instanceof SdkError && error.code === "REQUEST_TIMEOUT") {
        throw new ToolTimeoutError(
          `${connection.spec.name}/${tool.originalName}`,
          options.timeoutSeconds!,
        );
      }
      throw new ToolExecutionError(
        `${connection.spec.name}/${tool.originalName}`,
        (error as Error).message,
        error,
      );
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#connections.map((c) => c.client.close()));
    this.#connections = [];
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

async function connect(
  spec: StdioServerSpec,
  handlers: ServerRequestHandlers,
  sent: SdkToolHost["sentNotifications"],
): Promise<Connection> {
  const client = new Client(
    { name: "patchbay-tests", version: "0.0.0" },
    { capabilities: handlers.sampling ? { sampling: {} } : {} },
  );
  if (handlers.sampling) {
    const sampling = handlers.sampling;
    client.setRequestHandler("sampling/createMessage", async (request, ctx) => {
      try {
        return await sampling(spec.name, request.params, ctx.mcpReq.signal);
      } catch (error) {
        // The MCP specification's code for a user's rejection is -1.
        if (error instanceof SamplingRejectedError) {
          throw new ProtocolError(error.jsonRpcCode, `${error.message}: ${error.reason}`);
        }
        if (error instanceof PatchbayError) {
          throw new ProtocolError(-32603, `${error.message}: ${error.reason}`);
        }
        throw error;
      }
    });
  }
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...spec.env },
    stderr: "pipe",
  });
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    if ("method" in message && !("id" in message)) {
      sent.push({ server: spec.name, method: message.method, params: message.params });
    }
    return send(message);
  };
  await client.connect(transport);
  const { tools } = await client.listTools();
  return {
    spec,
    client,
    transport,
    tools: tools.map((tool) => ({
      name: modelName(spec.name, tool.name),
      server: spec.name,
      originalName: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as Record<string, unknown>,
      annotations: tool.annotations,
    })),
  };
}

/** `<server>_<tool>`, reduced to the characters providers accept, at most 64 long. */
export function modelName(server: string, tool: string): string {
  return `${server}_${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}
