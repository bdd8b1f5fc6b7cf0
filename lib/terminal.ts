// deno-lint-ignore-file no-control-regex -- matching control characters is this file's job
/**
 * Making untrusted text safe to print in a terminal.
 *
 * @module
 */

/**
 * Removes terminal control sequences (CSI, OSC, other ESC sequences and C0/C1 controls
 * except tab and newline). Text from servers and tools passes through this before it
 * reaches a terminal: a hostile server could otherwise rewrite the screen, set the
 * window title or hide text.
 */
export function stripTerminalEscapes(text: string): string {
  return text
    // OSC ... BEL or ST
    .replace(/\u001b\][\s\S]*?(?:\u0007|\u001b\\)/g, "")
    // CSI sequences
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    // Other two-character escapes
    .replace(/\u001b[@-Z\\-_]/g, "")
    // Remaining C0 (except \t \n) and C1 controls, and lone ESC
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}
