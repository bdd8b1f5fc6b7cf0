/**
 * Which MCP protocol revision patchbay speaks with a server, and why it could not agree
 * on one.
 *
 * By default (`"protocol": "auto"`) each connection starts with the 2026-07-28 probe,
 * `server/discover`: a server that answers it with that revision is spoken to statelessly
 * (per-request `_meta`, `MCP-Protocol-Version` and `Mcp-Method` headers, `input_required`
 * results); any other answer (an error such as "Method not found", an HTTP 4xx, or silence
 * on stdio) means a 2025-era server, which then gets the `initialize` handshake on the
 * same connection. A 2025-era stdio server costs one extra round trip (about a millisecond;
 * see the connections benchmark). An entry can instead say `"legacy"` (the 2025 handshake,
 * no probe) or name one revision, which is then the only one patchbay accepts.
 *
 * @module
 */

import {
  type ClientOptions,
  SdkError,
  SdkErrorCode,
  UnsupportedProtocolVersionError,
} from "@modelcontextprotocol/client";
import type { ProtocolSetting, TransportType } from "./config/types.ts";
import { PROTOCOL_STEPS } from "./errors/protocol_steps.ts";
import {
  isModernRevision,
  LEGACY_REVISIONS,
  MODERN_REVISION,
  PROTOCOL_REVISIONS,
} from "./revisions.ts";

export {
  isModernRevision,
  LEGACY_REVISIONS,
  MODERN_REVISION,
  PROTOCOL_MODES,
  PROTOCOL_REVISIONS,
} from "./revisions.ts";

/**
 * How long a stdio server may take to answer the probe before it is taken for a 2025-era
 * server that ignores requests it does not know, and spoken to with `initialize`. A server
 * still starting when it passes answers both; bounded so that a silent server costs
 * seconds, not the whole `timeout` (and never more than half of it: `stdioProbeTimeoutMs`).
 */
export const STDIO_PROBE_TIMEOUT_MS = 5_000;

/**
 * How long a stdio entry's probe may wait: {@linkcode STDIO_PROBE_TIMEOUT_MS}, or half the
 * entry's `timeout` when that is shorter, so `initialize` still has time after it.
 */
export function stdioProbeTimeoutMs(entry: ProtocolEntry): number {
  const half = entry.timeoutSeconds === undefined ? Infinity : entry.timeoutSeconds * 500;
  return Math.min(STDIO_PROBE_TIMEOUT_MS, half);
}

/** What the protocol choice depends on: an entry's `protocol`, transport and timeout. */
export interface ProtocolEntry {
  /** @default "auto" */
  protocol?: ProtocolSetting;
  transport: TransportType;
  /** The entry's `timeout` (seconds): a silent probe may use at most half of it. */
  timeoutSeconds?: number;
}

/** The SDK client options that speak `entry.protocol` over `entry.transport`. */
export function negotiationOptions(
  entry: ProtocolEntry,
): Pick<ClientOptions, "versionNegotiation" | "supportedProtocolVersions"> {
  const { protocol: setting = "auto", transport } = entry;
  if (setting === "legacy") return { versionNegotiation: { mode: "legacy" } };
  if (setting === "auto") {
    // The legacy SSE transport does not exist in the stateless era: nothing to probe.
    if (transport === "sse") return { versionNegotiation: { mode: "legacy" } };
    return {
      versionNegotiation: {
        mode: "auto",
        ...(transport === "stdio" ? { probe: { timeoutMs: stdioProbeTimeoutMs(entry) } } : {}),
      },
    };
  }
  if (isModernRevision(setting)) return { versionNegotiation: { mode: { pin: setting } } };
  // One 2025-era revision: offered in `initialize`, and the only answer accepted.
  return { versionNegotiation: { mode: "legacy" }, supportedProtocolVersions: [setting] };
}

/** What patchbay offers an entry, in words ("2026-07-28 by server/discover, then …"). */
export function offeredRevisions(entry: ProtocolEntry): string {
  const { protocol: setting = "auto", transport } = entry;
  const legacy = `${LEGACY_REVISIONS.join(", ")} by initialize`;
  if (setting === "legacy" || (setting === "auto" && transport === "sse")) return legacy;
  if (setting === "auto") return `${MODERN_REVISION} by server/discover, then ${legacy}`;
  return isModernRevision(setting)
    ? `${setting} only, by server/discover`
    : `${setting} only, by initialize`;
}

/** A failure to agree on a protocol revision, in the words of a diagnosis. */
export interface NegotiationFailure {
  reason: string;
  remedy: string;
}

const SERVER_REVISION = /Server's protocol version is not supported: (\S+)/;

/**
 * The diagnosis of `error` when it is a failed protocol negotiation (which revisions each
 * side offered, and what to set), else `undefined`.
 */
export function negotiationFailure(
  error: unknown,
  entry: ProtocolEntry,
): NegotiationFailure | undefined {
  const setting = entry.protocol ?? "auto";
  const offered = `patchbay offered ${offeredRevisions(entry)}`;
  const protocolField = `"protocol": "${setting}"${setting === "auto" ? " (the default)" : ""}`;
  if (error instanceof UnsupportedProtocolVersionError) {
    const supported = error.supported;
    const known = supported.filter((v) => PROTOCOL_REVISIONS.includes(v));
    return {
      reason: `no protocol revision in common: the server supports ${supported.join(", ")}` +
        ` and refused ${error.requested}; ${offered}`,
      remedy: known.length > 0
        ? PROTOCOL_STEPS.pin(known[0], protocolField)
        : PROTOCOL_STEPS.update,
    };
  }
  const text = error instanceof Error ? error.message : "";
  const answered = SERVER_REVISION.exec(text)?.[1];
  if (answered) {
    const modern = isModernRevision(answered);
    return {
      reason: `the server answered initialize with protocol revision ${answered}, which ` +
        `patchbay does not accept with ${protocolField}: ${offered}`,
      remedy: modern
        ? PROTOCOL_STEPS.negotiate(MODERN_REVISION)
        : PROTOCOL_REVISIONS.includes(answered)
        ? PROTOCOL_STEPS.pinAnswered(answered)
        : PROTOCOL_STEPS.unknownRevision(answered),
    };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed) {
    if (/did not offer pinned protocol version|before the server offered pinned/.test(text)) {
      return {
        reason: `the server did not offer ${setting} in answer to server/discover (it ` +
          `speaks the 2025 protocol, with initialize, or another revision); ${offered}`,
        remedy: PROTOCOL_STEPS.fallBack,
      };
    }
  }
  return undefined;
}
