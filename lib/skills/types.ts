/**
 * The shapes of Skills over MCP (SEP-2640) as the rest of patchbay sees them: a skill a
 * server lists, a listing of every server's, and a file of a skill read and verified. The
 * server's own entries (digests, sizes, frontmatter) stay inside `lib/skills/`, unmasked,
 * since they are what files are verified against; what leaves it is masked like any answer.
 *
 * @module
 */

import type { RequestOptions } from "@modelcontextprotocol/client";
import type { PatchbayError } from "../errors.ts";
import type { ServerSession } from "../connections/session/server_session.ts";
import type { ConnectionState } from "../connections/types.ts";

/** The servers a skill registry asks: the connection manager. */
export interface SkillServers {
  /** Each configured server's state, and since when it is in it (a reconnect changes it). */
  states(): readonly { name: string; state: ConnectionState; since: Date }[];
  requestOn<T>(
    server: string,
    what: string,
    run: (session: ServerSession, options: RequestOptions) => Promise<T>,
    options?: { signal?: AbortSignal },
  ): Promise<T>;
}

/** One skill a server lists: what the model and the person are offered of it. */
export interface SkillSummary {
  /** The server's name in the configuration (the host's label for it, never its own). */
  server: string;
  /**
   * How a person and the model name it: `<server>:<skill path>`, the path being the
   * `SKILL.md` URI without its scheme and `/SKILL.md` (the name, for a skill at the top).
   */
  id: string;
  /** The frontmatter's `name`. */
  name: string;
  /** The frontmatter's `description` (the server's text: untrusted). */
  description: string;
  /** The `SKILL.md` URI. */
  uri: string;
  /** Its other files, as paths within the skill; `"dynamic"` when the server lists none. */
  files: string[] | "dynamic";
  /** The sizes its entry lists, summed (`undefined` for `"dynamic"`). */
  bytes?: number;
}

/** A server whose skills could not be listed, or whose listing held entries refused. */
export interface SkillListingProblem {
  server: string;
  error: PatchbayError;
}

/** Every connected server's skills. */
export interface SkillListing {
  skills: SkillSummary[];
  problems: SkillListingProblem[];
}

/** A file of a skill, read and verified against its server's entry. */
export interface SkillFile {
  skill: SkillSummary;
  /** The file's path within the skill (`SKILL.md`, `references/FORMS.md`). */
  path: string;
  uri: string;
  /** Its text; `undefined` for binary content, which is described instead. */
  text?: string;
  /** Its length in bytes (as listed, and as verified). */
  bytes: number;
  mimeType?: string;
}
