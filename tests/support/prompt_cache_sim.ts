/**
 * A prompt cache that behaves as Anthropic documents its own, for the scripted Messages
 * endpoint: a request is a sequence of blocks (each tool, each system block, each block of
 * each message, in that order); a block marked `cache_control` writes an entry for the
 * prefix up to and including it, when that prefix is at least the model's minimum; a later
 * request reads the longest prefix it shares with an entry, found at one of its own markers
 * or up to {@linkcode LOOKBACK_BLOCKS} blocks before one. The usage it reports: tokens read
 * (`cache_read_input_tokens`), tokens between the hit and the last marker
 * (`cache_creation_input_tokens`), and the rest (`input_tokens`).
 *
 * Tokens are counted as 4 bytes of each block's JSON (without its marker), as
 * `lib/llm/tokens.ts` estimates them: the figures are the simulation's, not Anthropic's
 * tokenizer's, and the same for every request compared. Entries do not expire (the tests
 * and the benchmark run well within the five minutes of a real entry).
 *
 * @module
 */

/** Blocks before a marker where an earlier entry is still found. */
export const LOOKBACK_BLOCKS = 20;

/** Bytes counted as one token. */
const BYTES_PER_TOKEN = 4;

/** What one request cost, as the API reports it. */
export interface SimulatedUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** One cache, shared by the requests of one scripted endpoint. */
export class PromptCacheSim {
  readonly #entries = new Set<string>();
  readonly #minTokens: number;

  /** `minTokens`: the shortest prefix cached (1024 for Sonnet and Opus 4.1 and earlier). */
  constructor(minTokens = 1024) {
    this.#minTokens = minTokens;
  }

  /** Reads and writes the cache for `body` (a valid request); returns its usage. */
  use(body: Json): SimulatedUsage {
    const blocks = flatten(body);
    const keys: string[] = [];
    const prefix: number[] = [];
    let key = String(body.model);
    let tokens = 0;
    for (const block of blocks) {
      key = hash(`${key}\n${block.text}`);
      tokens += Math.ceil(new TextEncoder().encode(block.text).length / BYTES_PER_TOKEN);
      keys.push(key);
      prefix.push(tokens);
    }
    const marked = blocks.flatMap((block, i) => block.marked ? [i] : []);
    let hit = -1;
    for (const at of marked) {
      for (let i = at; i >= 0 && i >= at - LOOKBACK_BLOCKS; i--) {
        if (this.#entries.has(keys[i])) {
          hit = Math.max(hit, i);
          break;
        }
      }
    }
    const read = hit >= 0 ? prefix[hit] : 0;
    let written = 0;
    for (const at of marked) {
      if (prefix[at] < this.#minTokens) continue;
      this.#entries.add(keys[at]);
      written = Math.max(written, prefix[at] - read);
    }
    return {
      input_tokens: tokens - read - written,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written,
    };
  }
}

/** The request's blocks in cache order, each as the text that identifies it. */
function flatten(body: Json): { text: string; marked: boolean }[] {
  const out: { text: string; marked: boolean }[] = [];
  const add = (prefix: string, block: Json) => {
    const { cache_control, ...rest } = block;
    out.push({ text: prefix + JSON.stringify(rest), marked: cache_control !== undefined });
  };
  for (const tool of body.tools ?? []) add("tool:", tool);
  const system = typeof body.system === "string"
    ? [{ type: "text", text: body.system }]
    : body.system ?? [];
  for (const block of system) add("system:", block);
  for (const message of body.messages ?? []) {
    const content = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content;
    for (const block of content) add(`${message.role}:`, block);
  }
  return out;
}

/** A 53-bit string hash (cyrb53): collisions do not matter at this scale. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
