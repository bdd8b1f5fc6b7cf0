/**
 * The span of each tool call (`tools/call <tool>`): the MCP client span of the request and
 * the GenAI `execute_tool` span in one, as the MCP conventions ask when both would describe
 * the same call. Its ids go to the server in the request's `_meta`, so the server's span of
 * the call is its child. Made by the connection manager, so a model's call, `patchbay call`
 * and `/call` alike; the agent adds the model's id for the call.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { CancelledError, ToolTimeoutError } from "../errors.ts";
import { ATTR, METRIC, OPERATION } from "./attributes.ts";
import { errorType, failureKind } from "./failure_kind.ts";
import { traceMeta } from "./ids.ts";
import { activeTelemetry, type Attributes, type SpanHandle } from "./telemetry.ts";

/** The call, as its span names it. */
export interface TracedToolCall {
  /** The server's name in the configuration. */
  server: string;
  /** The tool's own name (not the catalogue's). */
  tool: string;
  transport: "stdio" | "streamable_http" | "sse";
  args: Record<string, unknown>;
  /** The model's id for the call, when a model asked for it. */
  toolCallId?: string;
}

/** How a call ended, as `patchbay.tool.outcome` says. */
export type ToolCallOutcome = "ok" | "error" | "timeout" | "cancelled" | "failed";

/**
 * Runs `call` as the span of `tool`: `call` gets the `_meta` to send (the span's trace
 * context) and the span itself (to add what it learns, such as the task it runs as).
 */
export async function tracedToolCall(
  tool: TracedToolCall,
  call: (meta: Record<string, string>, span: SpanHandle) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const telemetry = activeTelemetry();
  const common: Attributes = {
    [ATTR.server]: tool.server,
    [ATTR.toolName]: tool.tool,
  };
  const span = telemetry.start(`tools/call ${tool.tool}`, {
    kind: "client",
    attributes: {
      ...common,
      [ATTR.operationName]: OPERATION.tool,
      [ATTR.mcpMethod]: "tools/call",
      [ATTR.toolType]: "extension",
      [ATTR.toolCallId]: tool.toolCallId,
      [ATTR.networkTransport]: tool.transport === "stdio" ? "pipe" : "tcp",
      [ATTR.toolCallArguments]: telemetry.content(tool.args),
    },
  });
  let outcome: ToolCallOutcome = "failed";
  try {
    const result = await telemetry.within(span, () => call(traceMeta(span.context), span));
    outcome = result.isError ? "error" : "ok";
    span.set({ [ATTR.toolCallResult]: telemetry.content(result.content) });
    if (result.isError) {
      // The tool said it failed: the conventions' `tool_error`, the table's `tool` row.
      span.fail("tool_error", undefined, { [ATTR.failureKind]: "tool" });
      count(common, "tool", "tool_error");
    }
    return result;
  } catch (error) {
    if (error instanceof CancelledError) {
      outcome = "cancelled";
    } else {
      outcome = error instanceof ToolTimeoutError ? "timeout" : "failed";
      const kind = failureKind(error);
      span.fail(errorType(error), (error as Error)?.message, { [ATTR.failureKind]: kind });
      count(common, kind, errorType(error));
    }
    throw error;
  } finally {
    span.set({ [ATTR.toolOutcome]: outcome });
    span.end();
    telemetry.add(METRIC.toolCalls, 1, { ...common, [ATTR.toolOutcome]: outcome });
  }
}

function count(common: Attributes, kind: string, type: string): void {
  activeTelemetry().add(METRIC.failures, 1, {
    ...common,
    [ATTR.failureKind]: kind,
    [ATTR.errorType]: type,
    [ATTR.failureDuring]: "tool_call",
  });
}
