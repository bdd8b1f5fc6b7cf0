/**
 * The skills of every connected server (Skills over MCP, SEP-2640): listed with
 * `skills/list` once per connection, when first needed, and a skill's files fetched only
 * when one is loaded: never on connecting, listing or offering (SEP-2640 "Lazy Retrieval").
 *
 * Every file fetched is verified before anything of it is used: its size and SHA-256 digest
 * against its entry, and for `SKILL.md` its YAML frontmatter, field by field, against the
 * entry's (the SDK's `SkillsClient`, whose frontmatter reader takes the subset skills use
 * and refuses the rest: anchors, aliases, tags, nesting past 32 levels). A mismatch refuses
 * the skill (`SkillRefusedError`, worded by the failure table's `skill_refused` row).
 * Entries are verified against as the server sent them; what leaves this module is masked
 * as every answer is (`connection_requests.ts`).
 *
 * Skills are named per server (`<server>:<skill path>`), the server by its name in the
 * configuration: two servers' skills of one name never stand for each other.
 *
 * @module
 */

import type { RequestOptions } from "@modelcontextprotocol/client";
import type { Skill, SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { PatchbayError, SkillNotFoundError, SkillRefusedError } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import { showName } from "../text/names.ts";
import { abridge, plural } from "../text/text.ts";
import type { ServerSession } from "../connections/session/server_session.ts";
import { checkEntry, filePath, findEntry, listedSize, skillPath, summaryOf } from "./entries.ts";
import { refusal } from "./refusal.ts";
import type { SkillFile, SkillListing, SkillServers, SkillSummary } from "./types.ts";

/** The extension's identifier in a server's `capabilities.extensions`. */
export const SKILLS_EXTENSION_ID = "io.modelcontextprotocol/skills";

/**
 * Most skills kept of one server: a listing is the server's to make as long as it likes
 * (the SDK walks at most 64 pages), and every skill kept is offered to the model by name.
 */
export const MAX_SKILLS_PER_SERVER = 1000;

/** Invalid entries named one by one in a listing's problem; the rest are counted. */
const INVALID_NAMED = 5;

/** Entries of a listing left out, in words (plain data: answers are masked as copies). */
interface LeftOut {
  /** What was left out: `3 invalid entries`. */
  what: string;
  reason: string;
}

/** What one session listed, as the server sent it. */
interface Held {
  skills: Skill[];
  leftOut: LeftOut[];
}

/** Whether a server declared the Skills extension in its handshake. */
export function declaresSkills(session: ServerSession): boolean {
  const extensions = (session.capabilities as { extensions?: Record<string, unknown> })
    .extensions;
  const declared = extensions?.[SKILLS_EXTENSION_ID];
  return typeof declared === "object" && declared !== null;
}

/**
 * The server and skill `ref` names: `<server>:<skill>`, the longest of `servers` (configured
 * names) that prefixes it (names may hold a colon). Throws `SkillNotFoundError` otherwise.
 */
export function resolveServer(
  ref: string,
  servers: readonly string[],
): { server: string; skill: string } {
  const server = servers.filter((name) => ref.startsWith(`${name}:`))
    .sort((a, b) => b.length - a.length)[0];
  if (server === undefined || ref.length === server.length + 1) {
    const shown = abridge(showName(ref), 100);
    throw new SkillNotFoundError(
      shown,
      server === undefined
        ? `a skill is named <server>:<skill>, and no configured server (${
          servers.join(", ") || "none"
        }) starts '${shown}'`
        : `no skill name follows the server's name '${server}'`,
    );
  }
  return { server, skill: ref.slice(server.length + 1) };
}

/** The SDK's skills client over `session` (its module is loaded on first need). */
async function skillsClient(session: ServerSession): Promise<SkillsClient> {
  const { SkillsClient } = await import("@modelcontextprotocol/client/ext/skills");
  return new SkillsClient(session.client, { skipInvalid: true });
}

/**
 * The entry `skill` names among `entries`, or, for a skill given by a URI the listing lacks
 * (a listing may be partial: SEP-2640), the one `skills/get` returns for it.
 */
async function entryFor(
  session: ServerSession,
  server: string,
  entries: readonly Skill[],
  skill: string,
  request: RequestOptions,
): Promise<Skill> {
  try {
    return findEntry(server, entries, skill);
  } catch (error) {
    if (!(error instanceof SkillNotFoundError) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(skill)) {
      throw error;
    }
    return (await (await skillsClient(session)).get(skill, request)).skill;
  }
}

/** One connection's listing: what is shown of it (masked) and the entries as sent. */
interface Listed {
  shown: { skills: SkillSummary[]; leftOut: LeftOut[] };
  /** The entries as the server sent them: what files are verified against. */
  entries: Skill[];
}

/** The skills of every connected server, and their files on demand. */
export class SkillRegistry {
  readonly #servers: SkillServers;
  readonly #log: Log;
  /**
   * Per server, the listing of its current connection (told apart by when it connected): a
   * reconnected server is listed again. Kept here, so that offering skills at every model
   * request sends nothing to the server and touches no session.
   */
  #listed = new Map<string, { since: number; listed: Promise<Listed> }>();

  constructor(servers: SkillServers, options: { log?: Log } = {}) {
    this.#servers = servers;
    this.#log = options.log ?? silentLog;
  }

  /**
   * The skills of every connected server that declared the extension (of `server` alone,
   * when named), each server listed once per connection; `refresh` lists again. A server
   * that cannot be listed is a problem of the listing, never a failure of it.
   */
  async list(
    options: { signal?: AbortSignal; refresh?: boolean; server?: string } = {},
  ): Promise<SkillListing> {
    const servers = this.#servers.states()
      .filter((s) => s.state === "connected" && (!options.server || s.name === options.server));
    const listing: SkillListing = { skills: [], problems: [] };
    const results = await Promise.allSettled(
      servers.map((status) =>
        this.#listing(status.name, status.since.getTime(), options.refresh, options.signal)
      ),
    );
    results.forEach((result, i) => {
      const server = servers[i].name;
      if (result.status === "fulfilled") {
        listing.skills.push(...result.value.shown.skills);
        listing.problems.push(...result.value.shown.leftOut.map(({ what, reason }) => ({
          server,
          error: new SkillRefusedError(server, what, "entry", reason),
        })));
      } else if (result.reason instanceof PatchbayError) {
        if (result.reason.code === "cancelled") throw result.reason;
        listing.problems.push({ server, error: result.reason });
      } else {
        throw result.reason;
      }
    });
    return listing;
  }

  /**
   * Reads a file of the skill `ref` names (`<server>:<skill>`; `file` a path within it,
   * `SKILL.md` when absent) and verifies it against the skill's entry, as listed on this
   * connection (the entry patchbay holds). Throws `SkillRefusedError` when it does not
   * verify (nothing of it is returned) and `SkillNotFoundError` for a skill the server does
   * not list.
   */
  async read(
    ref: string,
    options: { file?: string; signal?: AbortSignal } = {},
  ): Promise<SkillFile> {
    const states = this.#servers.states();
    const { server, skill } = resolveServer(ref, states.map((s) => s.name));
    const status = states.find((s) => s.name === server)!;
    // A server not connected is said by the request below, with why.
    const listed = status.state === "connected"
      ? await this.#listing(server, status.since.getTime(), false, options.signal)
      : { entries: [], shown: { skills: [], leftOut: [] } };
    return await this.#servers.requestOn(
      server,
      `skill ${server}:${skill}`,
      async (session, request) => {
        if (!declaresSkills(session)) {
          throw new SkillNotFoundError(
            `${server}:${abridge(showName(skill), 100)}`,
            `server '${server}' does not offer skills (it did not declare the ` +
              `${SKILLS_EXTENSION_ID} extension)`,
          );
        }
        const entry = await entryFor(session, server, listed.entries, skill, request);
        const path = options.file ?? "SKILL.md";
        const size = listedSize(entry, path);
        checkEntry(server, entry, size === undefined ? undefined : { path, size });
        const client = await skillsClient(session);
        let file;
        try {
          file = await client.read(entry, options.file, request);
        } catch (error) {
          throw refusal(server, skillPath(entry.uri), error) ?? error;
        }
        const summary = summaryOf(server, entry);
        this.#log.info("skill file verified", { skill: summary.id, uri: file.uri });
        return {
          skill: summary,
          path: filePath(entry, file.uri),
          uri: file.uri,
          ...(file.text === undefined ? {} : { text: file.text }),
          bytes: file.bytes.byteLength,
          ...(file.mimeType === undefined ? {} : { mimeType: file.mimeType }),
        };
      },
      { signal: options.signal },
    );
  }

  /** `server`'s listing on the connection made at `since`: asked for once (again after a failure). */
  #listing(
    server: string,
    since: number,
    refresh = false,
    signal?: AbortSignal,
  ): Promise<Listed> {
    const held = this.#listed.get(server);
    if (held && held.since === since && !refresh) return held.listed;
    let entries: Skill[] = [];
    const listed = this.#servers.requestOn(server, "skills/list", async (session, request) => {
      if (!declaresSkills(session)) return { skills: [], leftOut: [] };
      const fetched = await this.#fetch(session, server, request);
      entries = fetched.skills;
      return { skills: entries.map((e) => summaryOf(server, e)), leftOut: fetched.leftOut };
    }, { signal }).then((shown) => ({ shown, entries }));
    this.#listed.set(server, { since, listed });
    listed.catch(() => {
      if (this.#listed.get(server)?.listed === listed) this.#listed.delete(server);
    });
    return listed;
  }

  async #fetch(session: ServerSession, server: string, request: RequestOptions): Promise<Held> {
    const client = await skillsClient(session);
    const { skills, invalid } = await client.list({}, request);
    const leftOut: LeftOut[] = [];
    if (invalid.length > 0) {
      const named = invalid.slice(0, INVALID_NAMED).map((e) =>
        `${abridge(showName(e.uri ?? `entry ${e.index}`), 120)}: ${
          abridge(showName(e.reason), 200)
        }`
      );
      const more = invalid.length - named.length;
      leftOut.push({
        what: plural(invalid.length, "invalid entry", "invalid entries"),
        reason: `skills/list returned entries that break SEP-2640's rules, left out: ${
          named.join("; ")
        }${more > 0 ? `; and ${more} more` : ""}`,
      });
    }
    if (skills.length > MAX_SKILLS_PER_SERVER) {
      leftOut.push({
        what: `${skills.length - MAX_SKILLS_PER_SERVER} skills`,
        reason: `the server lists ${skills.length} skills; patchbay keeps the first ` +
          `${MAX_SKILLS_PER_SERVER}`,
      });
    }
    this.#log.info("skills listed", { server, skills: skills.length, invalid: invalid.length });
    return { skills: skills.slice(0, MAX_SKILLS_PER_SERVER), leftOut };
  }
}

export type { SkillFile, SkillListing, SkillSummary };
