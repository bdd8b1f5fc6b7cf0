/**
 * `patchbay skills list [server] [--json]` and `patchbay skills show <server>:<skill>
 * [file]`: the skills connected servers publish (Skills over MCP, docs/skills.md). Listing
 * fetches no skill file; `show` fetches one, verifies it against the server's entry and
 * prints it, or refuses it (exit 1) saying what did not match.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { resolveServer, SkillRegistry } from "../lib/skills/registry.ts";
import { fileText, formatSkills, skillsJson } from "../lib/ui/skill_listing.ts";
import { stderrStyle, stdoutStyle } from "../lib/terminal/style.ts";
import { errorJson, formatError } from "./_boundary.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { only } from "./tools.ts";

/** Lists the skills of every connected server (or of `server`). */
export function skillsList(server: string | undefined, options: ScriptOptions): Promise<number> {
  return withServers(options, async ({ runtime, manager, states, failed, signal }) => {
    const registry = new SkillRegistry(manager, { log: runtime.logger.child("skills") });
    const listing = await registry.list({ signal, server });
    if (options.json) {
      console.log(JSON.stringify(
        { servers: statesJson(states), ...skillsJson(listing, (e) => errorJson(e)) },
        null,
        2,
      ));
    } else {
      if (listing.skills.length > 0) {
        console.log(formatSkills(listing.skills, stdoutStyle()).join("\n"));
      } else {
        console.error(
          server ? `${server} offers no skills.` : "No connected server offers skills.",
        );
      }
      for (const problem of listing.problems) {
        console.error(formatError(problem.error, { style: stderrStyle(), surface: "script" }));
      }
    }
    return failed.length > 0 || listing.problems.length > 0 ? EXIT.failure : EXIT.ok;
  }, server ? (names) => only(server, names) : undefined);
}

/**
 * Loads one skill (`<server>:<skill>`), verifies it and prints its SKILL.md (or `file`, a
 * path within it). A file that does not verify is never printed: the refusal is the error.
 */
export function skillsShow(
  ref: string,
  file: string | undefined,
  options: ScriptOptions,
): Promise<number> {
  return withServers(options, async ({ runtime, manager, signal }) => {
    const registry = new SkillRegistry(manager, { log: runtime.logger.child("skills") });
    const { server } = resolveServer(ref, manager.states().map((s) => s.name));
    const failure = manager.unavailable(server);
    if (failure) throw failure;
    const read = await registry.read(ref, { file, signal });
    if (options.json) {
      console.log(JSON.stringify({ ...read, verified: true }, null, 2));
      return EXIT.ok;
    }
    await writeAll(fileText(read, Deno.stdout.isTerminal()));
    return EXIT.ok;
  }, (names) => [resolveServer(ref, names).server]);
}

async function writeAll(text: string): Promise<void> {
  const writer = Deno.stdout.writable.getWriter();
  try {
    await writer.write(new TextEncoder().encode(text));
  } finally {
    writer.releaseLock();
  }
}
