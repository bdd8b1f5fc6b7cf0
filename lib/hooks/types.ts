/**
 * Hooks as the rest of patchbay sees them (docs/hooks.md): commands run at points of a
 * session, in Claude Code's form. A leaf: the configuration, the permission plan (which
 * the launcher computes, without npm packages) and the runner all read these shapes.
 *
 * The shape is a plain value, whoever supplies it: the configuration file's `Hooks`
 * section today, an administrator's policy file tomorrow. Each command carries the folder
 * it runs in and the file that named it, so hooks of several files can be put together.
 *
 * @module
 */

/** The events patchbay fires, by Claude Code's names. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "SessionEnd",
] as const;

/** One of {@linkcode HOOK_EVENTS}. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Events whose matcher is matched against a tool (`<server>.<tool>`). */
export const TOOL_EVENTS: ReadonlySet<HookEvent> = new Set(["PreToolUse", "PostToolUse"]);

/** One command to run (`{"type": "command", "command": …, "timeout": …}`). */
export interface HookCommand {
  /** The command line as written. */
  command: string;
  /** Seconds it may run before it is ended. @default DEFAULTS.hooks.timeoutSeconds */
  timeoutSeconds: number;
  /** Variables it gets besides the minimal environment (`env`, `${VAR}`s expanded). */
  env: Readonly<Record<string, string>>;
  /** Absolute folder it runs in: the folder of the file that names it. */
  folder: string;
  /** The file that names it, for messages. */
  source: string;
}

/** A matcher and the commands it runs. */
export interface HookGroup {
  /** `<server>.<tool>` globs (or `mcp__<server>__<tool>`), `|`-separated; absent: all. */
  matcher?: string;
  hooks: readonly HookCommand[];
}

/** The hooks of a session, by event (an absent event has none). */
export type HooksConfig = Partial<Record<HookEvent, readonly HookGroup[]>>;

/** Every command of `hooks`, with its event, in the order written. */
export function hookCommands(
  hooks: HooksConfig | undefined,
): { event: HookEvent; hook: HookCommand }[] {
  const all: { event: HookEvent; hook: HookCommand }[] = [];
  for (const event of HOOK_EVENTS) {
    for (const group of hooks?.[event] ?? []) {
      for (const hook of group.hooks) all.push({ event, hook });
    }
  }
  return all;
}
