/**
 * `resultType` on results of the 2026-07-28 revision. A result that leaves it out is a
 * complete result (SEP-2322: "the client MUST assume `complete` when it is not
 * specified"; the official conformance suite tests exactly that). The SDK rejects such a
 * result outright, so the transports fill it in before the SDK sees the message; results
 * of 2025-era sessions, errors, requests and notifications pass untouched.
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { isModernRevision } from "../protocol.ts";

/** `message` with `resultType: "complete"` when it is a 2026-era result without one. */
export function assumeCompleteResult(
  message: JSONRPCMessage,
  protocolVersion: string | undefined,
): JSONRPCMessage {
  if (protocolVersion === undefined || !isModernRevision(protocolVersion)) return message;
  if (!("result" in message) || !("id" in message)) return message;
  const result = message.result as Record<string, unknown> | null;
  if (result === null || typeof result !== "object" || "resultType" in result) return message;
  return { ...message, result: { ...result, resultType: "complete" } };
}
