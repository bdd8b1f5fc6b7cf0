/**
 * The span of one turn (`invoke_agent patchbay`, GenAI agent span): the root of a trace
 * whose children are the turn's model requests and tool calls (and through them the
 * servers' own spans). It carries the turn's steps, tool calls and tokens, and how it
 * ended; the person's message and the answer only when content is captured.
 *
 * @module
 */

import { CancelledError } from "../errors.ts";
import type { ModelProvider, TokenUsage } from "../llm/provider.ts";
import { AGENT_NAME, ATTR, GENAI_PROVIDERS, OPERATION } from "./attributes.ts";
import { errorType, failureKind } from "./failure_kind.ts";
import { activeTelemetry, inTurn } from "./telemetry.ts";

/** What a turn produced, as its span reads it. */
interface TurnOutcome {
  text: string | null;
  steps: number;
  toolCalls: number;
  usage: TokenUsage;
}

/** Runs `turn` (the person's `input`, answered by `provider`'s model) as a turn's span. */
export async function tracedTurn<T extends TurnOutcome>(
  provider: Pick<ModelProvider, "provider" | "model">,
  input: string,
  turn: () => Promise<T>,
): Promise<T> {
  const telemetry = activeTelemetry();
  const span = telemetry.start(`${OPERATION.agent} ${AGENT_NAME}`, {
    parent: null,
    attributes: {
      [ATTR.operationName]: OPERATION.agent,
      [ATTR.agentName]: AGENT_NAME,
      [ATTR.providerName]: GENAI_PROVIDERS[provider.provider] ?? provider.provider,
      [ATTR.requestModel]: provider.model,
      [ATTR.inputMessages]: telemetry.content([{ role: "user", content: input }]),
    },
  });
  try {
    const result = await inTurn(span, turn);
    span.set({
      [ATTR.steps]: result.steps,
      [ATTR.toolCalls]: result.toolCalls,
      [ATTR.inputTokens]: result.usage.promptTokens,
      [ATTR.outputTokens]: result.usage.completionTokens,
      [ATTR.usageEstimated]: result.usage.estimated || undefined,
      [ATTR.outputMessages]: telemetry.content([{ role: "assistant", content: result.text }]),
    });
    return result;
  } catch (error) {
    // Counted where it happened (the model request, the tool call); the turn only says so.
    if (error instanceof CancelledError) span.set({ [ATTR.errorType]: error.code });
    else {
      span.fail(errorType(error), (error as Error)?.message, {
        [ATTR.failureKind]: failureKind(error),
      });
    }
    throw error;
  } finally {
    span.end();
  }
}
