/**
 * What the terminal output needs of the permission plan: the variables that turn colours
 * and links on or off, and those that tell whether the terminal draws images.
 *
 * @module
 */

import type { NeedsSink } from "../deno_permission/needs.ts";
import { TERMINAL_VARIABLES } from "../terminal/terminal.ts";

/** The variables `imageProtocol` (inline_image.ts) reads. */
const IMAGE_VARIABLES = ["TERM", "TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID", "TMUX"];

/** Adds the variables the terminal output reads; it needs them whatever the configuration. */
export function outputNeeds(plan: NeedsSink, _inputs: unknown): void {
  plan.add("env", "NO_COLOR", "turns colours off when set");
  for (const name of IMAGE_VARIABLES) {
    plan.add("env", name, "whether the terminal draws images (/image)");
  }
  for (const name of TERMINAL_VARIABLES.filter((name) => name !== "NO_COLOR")) {
    plan.add("env", name, "colours and links in the terminal");
  }
}
