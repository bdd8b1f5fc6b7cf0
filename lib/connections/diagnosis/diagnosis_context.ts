/**
 * What a diagnosis of a failed connection starts from: what was known when the attempt
 * failed, the bound of each probe it makes, and the words for an MCP-level failure (raw
 * runtime noise such as "fetch failed" left out). Shared by the diagnoses of each
 * transport (`diagnose_stdio.ts`, `diagnose_http.ts`).
 *
 * @module
 */

import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../../config/types.ts";
import type { Network } from "../../proxy.ts";
import { abridge } from "../../text/text.ts";
import type { HttpCloseReason } from "../../transports/http.ts";
import type { StdioEvidence } from "../../transports/stdio.ts";
import type { InstallStatus } from "../types.ts";
import { errorChain } from "../../errors/failure.ts";

/** Deadline of each probe a diagnosis makes: diagnosis must stay quick. */
export const DIAGNOSIS_PROBE_MS = 1000;

/** What was known when a connection attempt failed. */
export interface ConnectFailure {
  server: ServerConfig;
  /** What the attempt threw. */
  error: unknown;
  /** The attempt ran out of time (the server's `timeout`). */
  timedOut: boolean;
  /** For stdio entries: what the process did. */
  stdio?: StdioEvidence;
  /** For HTTP entries: why the transport closed, if it closed itself. */
  httpClose?: HttpCloseReason;
  /** @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
  /** How the server is reached (its proxy); the probes go the same way. @default PROCESS_NETWORK */
  network?: Network;
  /** The package runner's install the attempt waited for (its bound replaced `timeout`). */
  installing?: InstallStatus;
}

/** What an MCP-level failure said, without raw runtime noise. */
export function protocolText(error: unknown): string {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.ConnectionClosed) return "the server closed the connection";
    if (error.code === SdkErrorCode.RequestTimeout) return "no answer in time";
  }
  const text = errorChain(error)
    .replace(/<[^>]+>/g, " ")
    .replace(/\b(?:TypeError: )?fetch failed(?: <- )?/gi, "")
    .replace(/\s+/g, " ")
    .trim();
  return abridge(text || "unknown error", 240);
}
