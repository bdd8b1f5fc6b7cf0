/**
 * `/skills`: the skills the connected servers publish (Skills over MCP, docs/skills.md).
 * `/skills` lists them (no file fetched); `/skills show <server>:<skill> [file]` fetches,
 * verifies and prints one; `/skills use <server>:<skill>` sends its verified SKILL.md with
 * the next message; `/skills refresh` lists them again.
 *
 * @module
 */

import { capText, TOOL_OUTPUT_MAX_CHARS } from "../agent/content.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import type { SkillSummary } from "../skills/types.ts";
import { showName } from "../text/names.ts";
import { fileText, formatSkills } from "../ui/skill_listing.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { out, usage } from "./slash_helpers.ts";

const SYNOPSIS = "/skills [refresh | show <server>:<skill> [file] | use <server>:<skill>]";
const ACTIONS = ["refresh", "show", "use"];

/** What each session's last `/skills` listed, for Tab completion (never a request). */
const listed = new WeakMap<ClientSession, SkillSummary[]>();

async function list(s: ClientSession, refresh: boolean): Promise<void> {
  const listing = await s.request(
    "listing skills…",
    (signal) => s.skills.list({ signal, refresh }),
  );
  listed.set(s, listing.skills);
  out(
    s,
    listing.skills.length > 0
      ? formatSkills(listing.skills, s.style).join("\n")
      : "No skills: no connected server offers any (see /connections).",
  );
  for (const problem of listing.problems) s.output.err(`${s.presentError(problem.error)}\n`);
}

/** `/skills …`. */
export const skillsCommand: SlashCommand<ClientSession> = {
  name: "skills",
  usage: "[show|use <server>:<skill>]",
  summary: "list the servers' skills; show one verified, or use it with your next message",
  complete(s, partial) {
    const words = partial.split(/\s+/);
    if (words.length <= 1) return ACTIONS;
    return words[0] === "show" || words[0] === "use"
      ? (listed.get(s) ?? []).map((skill) => skill.id)
      : [];
  },
  async run(s, args) {
    const [action, ref, file, ...rest] = args.split(/\s+/).filter(Boolean);
    if (action === undefined || action === "refresh") return await list(s, action === "refresh");
    if ((action !== "show" && action !== "use") || !ref || rest.length > 0) {
      throw usage(SYNOPSIS, REPL_STEPS.skills);
    }
    if (action === "use" && file) throw usage(SYNOPSIS, REPL_STEPS.skillsUse);
    const read = await s.request(
      `loading ${showName(ref)}…`,
      (signal) => s.skills.read(ref, { file, signal }),
    );
    if (action === "show") {
      s.output.out(fileText(read, true));
      return;
    }
    s.queuedSkills.push({
      server: read.skill.server,
      uri: read.uri,
      kind: "text",
      mimeType: "text/markdown",
      text: capText(read.text ?? "", TOOL_OUTPUT_MAX_CHARS).text,
    });
    out(
      s,
      `Skill ${showName(read.skill.id)} verified; its SKILL.md goes with your next message.`,
    );
  },
};
