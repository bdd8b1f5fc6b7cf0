/**
 * The span of each model request (`chat <model>`, GenAI inference span): the provider and
 * model, the tokens in and out (and cached, where the provider reports them), the finish
 * reason, retries; the failure's row when it fails. Made at the provider seam, so the chat
 * and MCP sampling alike, whatever the provider. Deno's span of the HTTP request (its
 * `fetch`) is its child. Metrics: tokens by type, request duration, requests by outcome.
 *
 * @module
 */

import { CancelledError } from "../errors.ts";
import type {
  GenerateRequest,
  GenerateResult,
  ModelProvider,
  TokenUsage,
} from "../llm/provider.ts";
import { ATTR, GENAI_PROVIDERS, METRIC, OPERATION } from "./attributes.ts";
import { errorType, failureKind } from "./failure_kind.ts";
import { activeTelemetry, type Attributes } from "./telemetry.ts";

/**
 * Prompt tokens a provider served from its cache, when its usage says (a field a provider
 * that reports them adds to {@linkcode TokenUsage}); `undefined` otherwise.
 */
export function cachedInputTokens(usage: TokenUsage): number | undefined {
  const cached = (usage as TokenUsage & { cachedPromptTokens?: number }).cachedPromptTokens;
  return typeof cached === "number" ? cached : undefined;
}

/** `provider` with a span around each request. */
export function tracedProvider(provider: ModelProvider): ModelProvider {
  return new Proxy(provider, {
    get(target, key, receiver) {
      if (key !== "generate") {
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (request: GenerateRequest) => generate(target, request);
    },
  });
}

async function generate(
  provider: ModelProvider,
  request: GenerateRequest,
): Promise<GenerateResult> {
  const telemetry = activeTelemetry();
  const common: Attributes = {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: GENAI_PROVIDERS[provider.provider] ?? provider.provider,
    [ATTR.requestModel]: provider.model,
    ...serverOf(provider.baseUrl),
  };
  const span = telemetry.start(`${OPERATION.chat} ${provider.model}`, {
    kind: "client",
    attributes: {
      ...common,
      [ATTR.requestMaxTokens]: request.maxTokens,
      [ATTR.requestTemperature]: request.temperature,
      [ATTR.inputMessages]: telemetry.content(request.messages),
    },
  });
  const started = performance.now();
  let outcome: Attributes = {};
  try {
    const result = await telemetry.within(
      span,
      () => provider.generate({ ...request, trace: span.context }),
    );
    const usage = result.usage;
    span.set({
      [ATTR.responseModel]: result.model,
      [ATTR.finishReasons]: [result.finishReason],
      [ATTR.inputTokens]: usage.promptTokens,
      [ATTR.outputTokens]: usage.completionTokens,
      [ATTR.cacheReadInputTokens]: cachedInputTokens(usage),
      [ATTR.usageEstimated]: usage.estimated || undefined,
      [ATTR.retries]: result.retries,
      [ATTR.outputMessages]: telemetry.content({
        content: result.content,
        tool_calls: result.toolCalls,
      }),
    });
    const tokens = { ...common, [ATTR.responseModel]: result.model };
    telemetry.record(METRIC.tokenUsage, usage.promptTokens, {
      ...tokens,
      [ATTR.tokenType]: "input",
    });
    telemetry.record(METRIC.tokenUsage, usage.completionTokens, {
      ...tokens,
      [ATTR.tokenType]: "output",
    });
    return result;
  } catch (error) {
    if (error instanceof CancelledError || request.signal?.aborted) {
      outcome = { [ATTR.errorType]: "cancelled" };
      span.set(outcome);
    } else {
      const kind = failureKind(error);
      outcome = { [ATTR.errorType]: errorType(error) };
      span.fail(errorType(error), (error as Error)?.message, { [ATTR.failureKind]: kind });
      telemetry.add(METRIC.failures, 1, {
        ...outcome,
        [ATTR.failureKind]: kind,
        [ATTR.failureDuring]: "model_request",
      });
    }
    throw error;
  } finally {
    span.end();
    telemetry.record(METRIC.operationDuration, (performance.now() - started) / 1000, {
      ...common,
      ...outcome,
    });
    telemetry.add(METRIC.modelRequests, 1, { ...common, ...outcome });
  }
}

/** `server.address` and `server.port` of the provider's API. */
function serverOf(baseUrl: string): Attributes {
  try {
    const url = new URL(baseUrl);
    return {
      [ATTR.serverAddress]: url.hostname,
      [ATTR.serverPort]: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    };
  } catch {
    return {};
  }
}
