/**
 * How skills read on a terminal and in JSON, shared by `patchbay skills` and `/skills`: the
 * listing grouped by server, and a skill's file as it is printed. A skill's texts are its
 * server's: stripped of terminal escapes here (names escaped, as every name is).
 *
 * @module
 */

import type { SkillFile, SkillListing, SkillSummary } from "../skills/types.ts";
import type { Style } from "../terminal/style.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { abridge, plural } from "../text/text.ts";
import { showName } from "../text/names.ts";

/** Descriptions are cut to one line of this length in listings. */
const DESCRIPTION_CHARS = 110;

/** Skills grouped by server: `server:path (files, size)`, then the description. */
export function formatSkills(skills: readonly SkillSummary[], style: Style): string[] {
  const lines: string[] = [];
  const servers = [...new Set(skills.map((s) => s.server))];
  for (const server of servers) {
    const group = skills.filter((s) => s.server === server);
    lines.push(style.bold(`${showName(server)} (${plural(group.length, "skill")})`));
    for (const skill of group) {
      lines.push(`  ${style.cyan(showName(skill.id))} ${style.dim(`(${extent(skill)})`)}`);
      const text = stripTerminalEscapes(skill.description).replace(/\s+/g, " ").trim();
      if (text) lines.push(`    ${style.dim(abridge(text, DESCRIPTION_CHARS))}`);
    }
  }
  return lines;
}

/** How much a skill holds, from its entry: `2 files, 1.3 KB` or `dynamic: no digests`. */
export function extent(skill: SkillSummary): string {
  if (skill.files === "dynamic") return "dynamic: no digests, cannot be verified";
  return `${plural(skill.files.length + 1, "file")}, ${formatSize(skill.bytes ?? 0)}`;
}

/** A listing as `skills list --json` writes it (the servers' states beside it). */
export function skillsJson(listing: SkillListing, errorJson: (error: unknown) => unknown) {
  return {
    skills: listing.skills.map((s) => ({
      server: s.server,
      id: s.id,
      name: s.name,
      description: s.description,
      uri: s.uri,
      files: s.files === "dynamic" ? "dynamic" : ["SKILL.md", ...s.files],
      ...(s.bytes === undefined ? {} : { bytes: s.bytes }),
    })),
    problems: listing.problems.map((p) => ({ server: p.server, error: errorJson(p.error) })),
  };
}

/**
 * A verified file as printed: on a terminal, cleaned of escape sequences (the server's
 * bytes could rewrite the screen); piped, its text as it is. Binary content is described.
 */
export function fileText(file: SkillFile, toTerminal: boolean): string {
  if (file.text === undefined) {
    return `[binary file ${showName(file.path)} of ${showName(file.skill.id)}: ` +
      `${formatSize(file.bytes)}; not printed]\n`;
  }
  const text = toTerminal ? stripTerminalEscapes(file.text) : file.text;
  return text.endsWith("\n") ? text : `${text}\n`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
