/**
 * The pages the OAuth callback answers the browser with: a title and a few sentences,
 * escaped for HTML, no scripts, nothing fetched, nothing framed or cached.
 *
 * @module
 */

import { PatchbayError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";

/** A failure as a person reads it. */
export interface FailureWords {
  message: string;
  cause: string;
  remedy: string;
}

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  // The browser's keep-alive would otherwise hold the listener open after the login.
  connection: "close",
};

/**
 * A failure in its own words: a typed error's message, cause and interactive remedy, or
 * the message of anything else.
 */
export function ownWords(error: unknown): FailureWords {
  if (error instanceof PatchbayError) {
    return { message: error.message, cause: error.reason, remedy: error.remedy };
  }
  return {
    message: "OAuth login failed",
    cause: error instanceof Error ? error.message : String(error),
    remedy: OAUTH_STEPS.seeTerminal,
  };
}

/** A plain page: a title and a sentence or a few, no scripts, nothing fetched. */
export function page(
  status: number,
  title: string,
  message: string | readonly string[],
  headers: Record<string, string> = {},
): Response {
  const paragraphs = (typeof message === "string" ? [message] : message)
    .map((text) => `<p>${escapeHtml(text)}</p>`).join("");
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>patchbay: ${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style>
</head><body><h1>${escapeHtml(title)}</h1>${paragraphs}</body></html>
`;
  return new Response(body, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
