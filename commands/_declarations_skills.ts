/**
 * The `skills` group's entries of the command tree (Skills over MCP, docs/skills.md), kept
 * apart from `_declarations.ts` for its length; the root declaration includes {@linkcode SKILLS}.
 *
 * @module
 */

import type { ScriptOptions } from "./_connect.ts";
import { action, type CommandDeclaration } from "../lib/cli/command_declaration.ts";

/** `patchbay skills list|show`. */
export const SKILLS: CommandDeclaration = {
  name: "skills",
  description: "the skills connected servers publish (SEP-2640): list them, or show one verified",
  prefetch: () => import("./_connect.ts"),
  commands: [
    {
      name: "list",
      default: true,
      // `skills` runs `list` by default, which would otherwise swallow a typo.
      wordsAreCommands: true,
      description: "list the skills of the configured servers (none of their files is fetched)",
      arguments: [{ name: "[server]", description: "only this server" }],
      options: [{ flags: "--json", description: "print JSON instead of text" }],
      needs: "servers",
      run: action(async (options: ScriptOptions, [server]: [string | undefined]) =>
        (await import("./skills.ts")).skillsList(server, options)
      ),
    },
    {
      name: "show",
      description: "fetch a skill, verify it against its listing and print its SKILL.md " +
        "(exit 1 when it does not verify)",
      arguments: [
        {
          name: "<skill>",
          description: "<server>:<skill> (its name, or its path when names repeat)",
        },
        { name: "[file]", description: "a file of the skill instead of SKILL.md" },
      ],
      options: [{ flags: "--json", description: "print the verified file as JSON" }],
      needs: "servers",
      run: action(
        async (options: ScriptOptions, [ref, file]: [string, string | undefined]) =>
          (await import("./skills.ts")).skillsShow(ref, file, options),
      ),
    },
  ],
};
