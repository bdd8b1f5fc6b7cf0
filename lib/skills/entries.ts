/**
 * A server's skill entries (SEP-2640 `Skill`), read: the path that names a skill, the
 * summary offered of it, which entry a name means, and the checks an entry must pass before
 * any of its files is fetched (digests published, within the limits). Pure.
 *
 * @module
 */

import type { Skill } from "@modelcontextprotocol/client/ext/skills";
import { SkillNotFoundError, SkillRefusedError } from "../errors.ts";
import { SKILLS_STEPS } from "../errors/skills_steps.ts";
import { abridge, plural } from "../text/text.ts";
import { showName } from "../text/names.ts";
import type { SkillSummary } from "./types.ts";

/**
 * The skills' interoperability limits (SEP-2640 "Limits"): every host must accept a skill of
 * up to 512 files and 16 MiB in all. patchbay accepts no more: a larger one is refused from
 * its entry, before anything of it is fetched, saying why.
 */
export const SKILL_MAX_FILES = 512;
/** See {@linkcode SKILL_MAX_FILES}. */
export const SKILL_MAX_TOTAL_BYTES = 16 * 1024 * 1024;

/**
 * Largest single file of a skill patchbay fetches: one answer must stay within the
 * transports' 10 MB message bound (`lib/transports/limits.ts`) as JSON text or base64
 * (4/3 larger), or the server's session would be closed as oversized. A larger file is
 * refused from its entry, before the request.
 */
export const SKILL_MAX_FILE_BYTES = 4 * 1024 * 1024;

/** What to do about a skill refused for its size, before anything of it was fetched. */
const TOO_LARGE = SKILLS_STEPS.tooLarge(SKILL_MAX_FILES);

/** Characters of a server's text (a description, a difference) quoted in a message. */
const QUOTED_CHARS = 300;

/** A skill's path: its `SKILL.md` URI without the scheme and `/SKILL.md`. */
export function skillPath(uri: string): string {
  const path = uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/SKILL\.md$/, "");
  return path === "" ? uri : path;
}

/** The skill's root: its `SKILL.md` URI without `SKILL.md` (ends with `/`). */
function rootOf(entry: Skill): string {
  return entry.uri.slice(0, entry.uri.length - "SKILL.md".length);
}

/** A listed file's path within the skill (its URI when it lies elsewhere). */
export function filePath(entry: Skill, uri: string): string {
  const root = rootOf(entry);
  return uri.startsWith(root) ? uri.slice(root.length) : uri;
}

/** What the model and the person are offered of `entry`. */
export function summaryOf(server: string, entry: Skill): SkillSummary {
  const listed = entry.resources;
  return {
    server,
    id: `${server}:${skillPath(entry.uri)}`,
    name: entry.frontmatter.name,
    description: entry.frontmatter.description,
    uri: entry.uri,
    files: listed === "dynamic"
      ? "dynamic"
      : listed.filter((r) => r.uri !== entry.uri).map((r) => filePath(entry, r.uri)),
    ...(listed === "dynamic" ? {} : { bytes: listed.reduce((sum, r) => sum + r.size, 0) }),
  };
}

/**
 * The entry `ref` names among `entries` of `server`: its path, its name when no other entry
 * has that name, or its `SKILL.md` URI. Throws `SkillNotFoundError` for none, or for a name
 * several entries share (names are labels, not identifiers: SEP-2640 "Names").
 */
export function findEntry(server: string, entries: readonly Skill[], ref: string): Skill {
  const byPath = entries.find((e) => skillPath(e.uri) === ref || e.uri === ref);
  if (byPath) return byPath;
  const named = entries.filter((e) => e.frontmatter.name === ref);
  if (named.length === 1) return named[0];
  const shown = `${server}:${abridge(showName(ref), 100)}`;
  if (named.length > 1) {
    throw new SkillNotFoundError(
      shown,
      `server '${server}' lists ${named.length} skills named '${showName(ref)}': ` +
        named.map((e) => `${server}:${skillPath(e.uri)}`).join(", ") + "; name one by its path",
    );
  }
  throw new SkillNotFoundError(
    shown,
    entries.length === 0
      ? `server '${server}' lists no skills`
      : `server '${server}' lists no skill '${showName(ref)}' (it lists ${
        plural(entries.length, "skill")
      }: ${abridge(entries.map((e) => skillPath(e.uri)).join(", "), QUOTED_CHARS)})`,
  );
}

/**
 * Refuses `entry` before any file is fetched when it cannot be verified or exceeds the
 * limits; `file` is the listed size of the file about to be read, when known.
 */
export function checkEntry(server: string, entry: Skill, file?: { path: string; size: number }) {
  const skill = skillPath(entry.uri);
  const refuse = (reason: string, remedy = TOO_LARGE) =>
    new SkillRefusedError(server, skill, "entry", reason, remedy);
  if (entry.resources === "dynamic") {
    throw refuse(
      'its entry lists no files ("resources": "dynamic"), so there are no digests to verify ' +
        "its content against, and patchbay does not load unverified content",
      SKILLS_STEPS.listFiles,
    );
  }
  const total = entry.resources.reduce((sum, r) => sum + r.size, 0);
  if (entry.resources.length > SKILL_MAX_FILES || total > SKILL_MAX_TOTAL_BYTES) {
    throw refuse(
      `its entry lists ${plural(entry.resources.length, "file")} of ${
        megabytes(total)
      } in all, more than a skill may hold (${SKILL_MAX_FILES} files, ${
        megabytes(SKILL_MAX_TOTAL_BYTES)
      })`,
    );
  }
  if (file && file.size > SKILL_MAX_FILE_BYTES) {
    throw refuse(
      `its entry lists ${showName(file.path)} at ${megabytes(file.size)}, more than patchbay ` +
        `reads of one skill file (${megabytes(SKILL_MAX_FILE_BYTES)})`,
    );
  }
}

/** The listed size of `path` (relative, or a URI) in `entry`, if it lists it. */
export function listedSize(entry: Skill, path: string): number | undefined {
  if (entry.resources === "dynamic") return undefined;
  return entry.resources.find((r) => r.uri === path || filePath(entry, r.uri) === path)?.size;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
