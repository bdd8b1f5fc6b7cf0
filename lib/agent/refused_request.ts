/**
 * A tool that failed because patchbay refused what its server asked during the call (a
 * sampling or elicitation request): the server passes patchbay's refusal on in its error
 * (`MCP error -1: patchbay refused the sampling request: …`), and the person must read it
 * as patchbay's, with a remedy that changes patchbay's answer, not "the cause is the
 * server's own message".
 *
 * Every refusal patchbay sends a server starts with `REFUSED` (`lib/errors/model.ts`; sent by
 * `lib/connections/requests.ts`).
 *
 * @module
 */

import { REFUSED, type Remedy } from "../errors.ts";

/** A refusal of patchbay's found in a server's words. */
export interface RefusedRequest {
  kind: "sampling" | "elicitation";
  /** Why patchbay refused, as it told the server. */
  why: string;
}

const REFUSAL = new RegExp(`\\b${REFUSED} the (sampling|elicitation) request(?::\\s*)?(.*)$`, "s");

/** The refusal of patchbay's that `text` (a server's error) passes on, if any. */
export function refusalIn(text: string): RefusedRequest | undefined {
  const match = REFUSAL.exec(text);
  if (!match) return undefined;
  return { kind: match[1] as RefusedRequest["kind"], why: match[2].trim() || "no reason given" };
}

/** The cause of a tool failure that a refusal of patchbay's caused. */
export function refusalReason(server: string, refused: RefusedRequest): string {
  return `patchbay refused the ${refused.kind} request server '${server}' made during the ` +
    `call, so the tool could not finish (the refusal is patchbay's, passed on by the ` +
    `server): ${refused.why}`;
}

/** What changes patchbay's answer next time, worded for both surfaces. */
export function refusalRemedy(server: string, refused: RefusedRequest): Remedy {
  const both = (text: string): Remedy => ({ repl: text, script: text });
  const allow = `set "sampling" to "ask" (or "allow") in the entry of '${server}'`;
  if (refused.kind === "elicitation") {
    return {
      repl: "answer the form when it is shown; it needs an interactive terminal",
      script: "run the command in a terminal to answer the form, or pass " +
        "--accept-form-defaults to answer it with its defaults",
    };
  }
  if (/"sampling": "deny"/.test(refused.why)) return both(`${allow} to let it use the model`);
  if (/no language model/.test(refused.why)) {
    return {
      repl: "fix the model's setup (sending a message shows what is wrong with it), then " +
        "call the tool again",
      script: "call it through `patchbay run`, which answers a server's sampling requests " +
        "with the configured model",
    };
  }
  if (/tool use inside sampling/.test(refused.why)) {
    return both("the server must sample without tools: report it to the server's authors");
  }
  return {
    repl: `approve it when asked, or set "sampling": "allow" in the entry of '${server}'`,
    script: `pass --yes, or set "sampling": "allow" in the entry of '${server}'`,
  };
}
