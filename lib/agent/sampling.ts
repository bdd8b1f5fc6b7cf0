/**
 * Answers servers' `sampling/createMessage` requests with patchbay's own model, through
 * the same provider seam as the chat.
 *
 * Each server's `sampling` setting decides: `deny` refuses, `allow` answers, `ask` (the
 * default) asks the user first, showing what the server wants to send. Requests are
 * accounted as sampling in the statistics, per server, and count toward the session limits
 * like any other model request, from the moment they are admitted (see `limits.ts`). The
 * server's sampling requests are bounded, per tool call and per session (`admitSampling`,
 * `AgentConfig.sampling_per_tool_call` and `sampling_request_limit`). The
 * server's model preferences are hints only: the configured model answers. What the UI
 * throws is rethrown as it is, not reported as the request's failure.
 *
 * @module
 */

import type { CreateMessageRequest, CreateMessageResult } from "@modelcontextprotocol/client";
import type { ServerRequestHandlers } from "../connections/types.ts";
import type { AgentLimits, LlmConfig, ServerConfig } from "../config/types.ts";
import { CancelledError, PatchbayError, SamplingRejectedError } from "../errors.ts";
import type { ChatMessage, ContentPart, GenerateResult } from "../llm/provider.ts";
import { TokenEstimator } from "../llm/tokens.ts";
import { visionInEffect } from "../providers.ts";
import { DEFAULTS } from "../defaults.ts";
import { type Log, silentLog } from "../log/log.ts";
import { abridge } from "../text/text.ts";
import { admitRequest, admitSampling } from "./limits.ts";
import type { UsageStats } from "./stats.ts";
import type { AgentUi, SamplingApprovalRequest } from "./ui.ts";
import { UiGuard } from "./ui_guard.ts";
import { base64Bytes, formatBytes } from "./content.ts";
import type { ModelProvider } from "../llm/provider.ts";
import { AGENT_STEPS } from "../errors/agent_steps.ts";

type Params = CreateMessageRequest["params"];
type SamplingHandler = NonNullable<ServerRequestHandlers["sampling"]>;

/** Length of the answer preview the UI receives. */
const PREVIEW_CHARS = 160;

/** Everything the handler works with. */
export interface SamplingHandlerOptions {
  provider: ModelProvider;
  ui: AgentUi;
  stats: UsageStats;
  limits: AgentLimits;
  llm: Pick<LlmConfig, "maxTokens" | "vision">;
  /**
   * Each server's `sampling` setting; servers not listed are asked about. A function is
   * asked at each request: the entries as `/refresh` last read them.
   */
  servers:
    | readonly Pick<ServerConfig, "name" | "sampling">[]
    | (() => readonly Pick<ServerConfig, "name" | "sampling">[]);
  log?: Log;
}

/** The handler to give the connection manager as `ServerRequestHandlers.sampling`. */
export function createSamplingHandler(options: SamplingHandlerOptions): SamplingHandler {
  const log = options.log ?? silentLog;
  const servers = options.servers;
  const settingOf = (server: string) =>
    (typeof servers === "function" ? servers() : servers).find((s) => s.name === server)
      ?.sampling;
  return async (server, params, signal) => {
    const started = performance.now();
    const { ui, provider, stats } = options;
    const guard = new UiGuard();
    const end = (fields: Omit<Parameters<AgentUi["samplingEnd"]>[0], "server" | "durationMs">) =>
      guard.call(() =>
        ui.samplingEnd({ server, durationMs: performance.now() - started, ...fields })
      );
    try {
      const setting = settingOf(server) ?? "ask";
      if (setting === "deny") {
        throw new SamplingRejectedError(
          server,
          `the server's entry sets "sampling": "deny"`,
          AGENT_STEPS.samplingDenied(server),
        );
      }
      if (params.tools && params.tools.length > 0) {
        throw new SamplingRejectedError(
          server,
          "it asked for tool use inside sampling, which patchbay does not offer",
          AGENT_STEPS.samplingTools,
        );
      }
      // Before asking anyone: a server over its bound is refused without a question.
      admitSampling(stats, options.limits, server);
      const vision = visionInEffect(
        options.llm.vision ?? DEFAULTS.llm.vision,
        options.provider.provider,
        options.provider.model,
      );
      const messages = toChatMessages(params, vision);
      const maxTokens = Math.max(1, Math.min(params.maxTokens, options.llm.maxTokens));
      if (setting === "ask") {
        const request: SamplingApprovalRequest = {
          server,
          model: provider.model,
          systemPrompt: params.systemPrompt,
          messages: params.messages.map((m) => ({
            role: m.role,
            text: describeContent(m.content),
          })),
          maxTokens,
          modelHints: (params.modelPreferences?.hints ?? []).flatMap((h) => h.name ? [h.name] : []),
        };
        let approved: boolean;
        try {
          approved = await guard.ask(() => ui.approveSampling(request, signal), signal);
        } catch (error) {
          if (signal.aborted) throw new CancelledError(`the sampling request from '${server}'`);
          throw error;
        }
        if (!approved) {
          throw new SamplingRejectedError(
            server,
            "you declined it",
            AGENT_STEPS.samplingDeclined(server),
          );
        }
      }
      const estimate = new TokenEstimator().raw(messages);
      const admission = admitRequest(stats, options.limits, estimate, maxTokens);
      let result: GenerateResult;
      let retries = 0;
      try {
        result = await provider.generate({
          messages,
          maxTokens: admission.maxTokens,
          temperature: params.temperature,
          stop: params.stopSequences,
          signal,
          admitRetry: (notice) => admission.retry(notice, ""),
          onRetry: () => retries++,
        });
        stats.recordRequest("sampling", result.model, admission.withSpent(result.usage)!, {
          retries: result.retries,
          server,
        });
      } catch (error) {
        // Attempts that reached the model before failing may have been billed.
        const spent = admission.withSpent();
        if (spent) stats.recordRequest("sampling", provider.model, spent, { server });
        if (!(error instanceof CancelledError)) stats.recordFailure(retries);
        throw error;
      } finally {
        admission.release();
      }
      end({
        status: "ok",
        model: result.model,
        usage: result.usage,
        preview: abridge((result.content ?? "").replace(/\s+/g, " ").trim(), PREVIEW_CHARS),
      });
      log.info("sampling request answered", {
        server,
        tokens: result.usage.totalTokens,
        estimated: result.usage.estimated,
      });
      return {
        model: result.model,
        role: "assistant",
        content: { type: "text", text: result.content ?? "" },
        stopReason: stopReason(result.finishReason),
      } satisfies CreateMessageResult;
    } catch (error) {
      // The UI's own failure is not the request's: rethrown as it is, not reported to it.
      if (guard.failed) throw error;
      const status = error instanceof SamplingRejectedError
        ? "denied"
        : error instanceof CancelledError || signal.aborted
        ? "cancelled"
        : "error";
      end({ status, error: error instanceof PatchbayError ? error : undefined });
      log.warn(`sampling request from ${server} ${status}`, { error });
      throw error;
    }
  };
}

/**
 * The server's conversation as chat messages (system prompt first). Images are image parts
 * for a model with `vision`, else described like any other content it cannot take.
 */
export function toChatMessages(params: Params, vision = true): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (params.systemPrompt) out.push({ role: "system", content: params.systemPrompt });
  for (const message of params.messages) {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    if (message.role === "assistant") {
      out.push({ role: "assistant", content: blocks.map(blockText).join("\n") });
      continue;
    }
    const parts: ContentPart[] = blocks.map((block) =>
      block.type === "image" && vision
        ? { type: "image", mimeType: block.mimeType, data: block.data }
        : { type: "text", text: blockText(block) }
    );
    out.push({
      role: "user",
      content: parts.every((p) => p.type === "text")
        ? parts.map((p) => (p as { text: string }).text).join("\n")
        : parts,
    });
  }
  return out;
}

type Block = Extract<Params["messages"][number]["content"], { type: string }>;

function blockText(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}; not supported]`;
    case "tool_use":
      return `[tool call ${block.name}: ${JSON.stringify(block.input)}]`;
    case "tool_result":
      return `[tool result: ${
        block.content.map((c) => c.type === "text" ? c.text : `[${c.type}]`).join("\n")
      }]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** A message's content as one line of text for the approval prompt. */
function describeContent(content: Params["messages"][number]["content"]): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map(blockText).join("\n");
}

function stopReason(reason: GenerateResult["finishReason"]): string {
  switch (reason) {
    case "length":
      return "maxTokens";
    case "stop":
    case "tool_calls":
      return "endTurn";
    default:
      return reason;
  }
}
