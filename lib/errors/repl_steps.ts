/**
 * The remedies of slash commands used wrongly (`lib/repl/`): how each is written, and where
 * the names it takes are listed. Part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within
 * the size of a file. Only the interactive client shows them (a scripting command never
 * runs a slash command), so each is one text that may name slash commands, not a
 * per-surface `Remedy`.
 *
 * @module
 */

/** Steps of the remedies of slash commands used wrongly. */
export const REPL_STEPS = {
  /** `/image` given something other than a positive whole number. */
  image: "/image shows the latest image, /image 2 the one before",
  /** `/mcp` with a verb or arguments it does not take. */
  mcp: "e.g. /mcp disable filesystem; /mcp alone lists the servers",
  /** `/mcp enable` of a server disabled in the file, which needs grants patchbay lacks. */
  enableInFile: (name: string): string =>
    `\`patchbay mcp enable ${name}\` enables it in the file; then /refresh restarts ` +
    "patchbay under the extended permissions and keeps this conversation",
  /** `/prompt` without a name. */
  promptNames: "see the names with /prompts",
  /** `/prompt` without arguments the prompt requires: each missing one. */
  required: (...missing: readonly string[]): string => `required: ${missing.join(", ")}`,
  /** `/<server>:<prompt>` without arguments the prompt requires. */
  promptTab: "Tab after the prompt's name completes its arguments and their values",
  /** `/<server>:<prompt>` of a prompt the server does not offer, with a close name. */
  closePrompt: (server: string, suggestion: string): string =>
    `did you mean /${server}:${suggestion}? (/prompts lists them)`,
  /** `/<server>:<prompt>` of a prompt the server does not offer. */
  listPrompts: "/prompts lists the prompts of every server",
  /** `/resource` without a URI. */
  resourceUris: "see the URIs with /resources",
  /** `/call` without a tool. */
  callExample: 'e.g. /call everything.echo {"message": "hi"}',
  /** `/skills` with an action it does not take. */
  skills: "list the skills with /skills, then name one as <server>:<skill>",
  /** `/skills use` given a file. */
  skillsUse: "/skills use sends a skill's SKILL.md",
  /** `/tasks` with a word it does not take, or no id. */
  tasks: "/tasks lists the recorded tasks with their ids",
  /** A server name no server has: every configured name. */
  servers: (...names: readonly string[]): string => `servers: ${names.join(", ") || "none"}`,
} as const;
