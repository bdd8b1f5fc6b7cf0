/**
 * The model's output masked where it enters patchbay, as a server's is in
 * `connections/connection.ts`: the model is untrusted too (docs/security-hostile-servers.md).
 * It should never have seen a secret, since everything sent to it is masked; but a secret
 * the person typed, or one a compromised model server holds, must still not reach the
 * screen as it streams, the stored conversation, the trace or the log, nor go out as a
 * tool call's argument or a sampling answer to a server.
 *
 * @module
 */

import type { Redactor } from "../redact/redact.ts";
import { RedactingStream } from "../redact/redact_stream.ts";
import type { GenerateRequest, GenerateResult, ModelProvider } from "./provider.ts";

/**
 * `provider` with every answer masked by `redactor`: the streamed text (a secret split
 * between two pieces included), the assembled text and each tool call's arguments. Only
 * the registered secrets are masked, not credential shapes: the model writes code and
 * configuration examples, and a file it writes through a tool must not be altered.
 */
export function maskedProvider(provider: ModelProvider, redactor: Redactor): ModelProvider {
  return new Proxy(provider, {
    get(target, key, receiver) {
      if (key !== "generate") {
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (request: GenerateRequest) => generate(target, request, redactor);
    },
  });
}

async function generate(
  provider: ModelProvider,
  request: GenerateRequest,
  redactor: Redactor,
): Promise<GenerateResult> {
  const { onDelta } = request;
  let stream = new RedactingStream(redactor, { knownOnly: true });
  const masked: GenerateRequest = onDelta
    ? {
      ...request,
      onDelta: (text) => {
        const ready = stream.push(text);
        if (ready) onDelta(ready);
      },
      // A retry streams the answer again from its start.
      onRetry: (notice) => {
        stream = new RedactingStream(redactor, { knownOnly: true });
        request.onRetry?.(notice);
      },
    }
    : request;
  const result = await provider.generate(masked);
  if (onDelta) {
    const rest = stream.end();
    if (rest) onDelta(rest);
  }
  return {
    ...result,
    content: result.content === null ? null : redactor.redactKnown(result.content),
    toolCalls: result.toolCalls.map((call) => ({
      ...call,
      arguments: maskArguments(call.arguments, redactor),
    })),
  };
}

/**
 * A tool call's arguments (JSON text) masked: each string of the parsed value when it
 * parses (a secret written with JSON escapes is found), else the text.
 */
function maskArguments(text: string, redactor: Redactor): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return redactor.redactKnown(text);
  }
  let changed = false;
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") {
      const masked = redactor.redactKnown(item);
      if (masked !== item) changed = true;
      return masked;
    }
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === "object") {
      return Object.fromEntries(Object.entries(item).map(([k, v]) => [walk(k), walk(v)]));
    }
    return item;
  };
  const masked = walk(value);
  return changed ? JSON.stringify(masked) : text;
}
