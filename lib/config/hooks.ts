/**
 * The `Hooks` section (docs/hooks.md) as the session runs it: its shape checked by
 * `HooksSchema` (lib/config/schema.ts), the `${VAR}`s of each hook's `env` expanded (their
 * values are secrets, as a server's `env`), each command given the folder it runs in and
 * the file that names it. Any file with the same section (an administrator's policy) is read
 * the same way, with its own folder.
 *
 * A matcher that can match none of patchbay's tools (Claude Code's `Bash`, `Edit|Write`)
 * is worth a warning: patchbay's tools are `<server>.<tool>`.
 *
 * @module
 */

import { HOOK_EVENTS, type HookGroup, type HooksConfig, TOOL_EVENTS } from "../hooks/types.ts";
import { unmatchablePattern } from "../hooks/matcher.ts";
import type { ProblemList } from "./problem_list.ts";
import { HooksSchema } from "./schema.ts";
import type { ConfigValues } from "./values.ts";
import { parseSection } from "./zod_issues.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";

/** Where the hooks of a file run and come from. */
export interface HooksSource {
  /** Absolute folder of the file: the hooks run there. */
  folder: string;
  /** The file, for messages. */
  file: string;
}

/** Reads a `Hooks` section; `undefined` when it has problems (added to `problems`). */
export function readHooks(
  reader: { problems: ProblemList; values: ConfigValues },
  raw: unknown,
  source: HooksSource,
): HooksConfig | undefined {
  const { problems, values } = reader;
  const parsed = parseSection(problems, HooksSchema, raw, ["Hooks"]);
  if (!parsed) return undefined;
  const hooks: HooksConfig = {};
  for (const event of HOOK_EVENTS) {
    const groups = parsed[event];
    if (!groups) continue;
    hooks[event] = groups.map((group, g): HookGroup => {
      const path = ["Hooks", event, g];
      const unmatchable = TOOL_EVENTS.has(event) ? unmatchablePattern(group.matcher) : undefined;
      if (unmatchable !== undefined) {
        problems.warn(
          [...path, "matcher"],
          `"${unmatchable}" matches none of patchbay's tools (they are <server>.<tool>)`,
          CONFIG_STEPS.hookMatcher,
        );
      }
      return {
        ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
        hooks: group.hooks.map((hook, h) => ({
          command: hook.command,
          timeoutSeconds: hook.timeout,
          env: Object.fromEntries(
            Object.entries(hook.env ?? {}).map(([name, value]) => [
              name,
              values.expand(value, [...path, "hooks", h, "env", name]),
            ]),
          ),
          folder: source.folder,
          source: source.file,
        })),
      };
    });
  }
  return hooks;
}
