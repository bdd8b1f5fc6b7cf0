/**
 * `patchbay approvals [list] [--all] [--json]` and `patchbay approvals revoke <what>`: the
 * tool approvals remembered beyond the session ("[p]roject: always" at the question), for
 * the current folder, or every folder with `--all`. Reads and edits the state folder's
 * `approvals.json` only: no configuration, no server. See docs/tools-and-sessions.md.
 *
 * @module
 */

import { ApprovalStore, type RememberedApproval } from "../lib/agent/approval_store.ts";
import { EXIT, PatchbayError, UsageError } from "../lib/errors.ts";
import { stdoutStyle } from "../lib/terminal/style.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** Options of the `approvals` commands. */
export interface ApprovalsOptions {
  /** Print JSON instead of text. @default false */
  json?: boolean;
  /** `list`: every folder; `revoke`: every approval of the current folder. @default false */
  all?: boolean;
}

/** Lists the remembered approvals of the current folder (every folder with `all`). */
export async function approvalsList(options: ApprovalsOptions): Promise<number> {
  const store = new ApprovalStore();
  const folder = Deno.cwd();
  const approvals = (await store.list()).filter((a) => options.all || a.folder === folder);
  if (options.json) {
    console.log(JSON.stringify({ file: store.path, approvals }, null, 2));
    return EXIT.ok;
  }
  const where = options.all ? "any folder" : folder;
  if (approvals.length === 0) {
    console.log(`No remembered approvals for ${where}.`);
    return EXIT.ok;
  }
  const style = stdoutStyle();
  console.log(`${style.bold("Remembered approvals")} for ${where} (${store.path})\n`);
  for (const a of approvals) {
    const tool = stripTerminalEscapes(`${a.server}/${a.tool}`);
    const folderPart = options.all ? `  ${style.dim(stripTerminalEscapes(a.folder))}` : "";
    console.log(`  ${a.id}  ${tool.padEnd(32)} ${a.approvedAt.slice(0, 16)}${folderPart}`);
  }
  console.log(
    `\n${style.dim("patchbay approvals revoke <id|server|server/tool> forgets one (or --all).")}`,
  );
  return EXIT.ok;
}

/**
 * Forgets the approvals `what` names in the current folder: an id (from any folder), a
 * server (all its tools), or `server/tool`; with `all` and no `what`, every approval of the
 * folder. A name that matches nothing is an error listing what there is.
 */
export async function approvalsRevoke(
  what: string | undefined,
  options: ApprovalsOptions,
): Promise<number> {
  if (!what && !options.all) {
    throw new UsageError(
      "say which approval to revoke",
      USAGE_STEPS.revokeWhich,
    );
  }
  const store = new ApprovalStore();
  const folder = Deno.cwd();
  const picks = (a: RememberedApproval) =>
    what === undefined ? a.folder === folder : a.id === what ||
      (a.folder === folder &&
        (a.server === what || `${a.server}/${a.tool}` === what ||
          `${a.server}.${a.tool}` === what));
  const revoked = await store.revoke(picks);
  if (options.json) {
    console.log(JSON.stringify({ file: store.path, revoked }, null, 2));
  } else {
    for (const a of revoked) {
      console.log(
        `Revoked ${a.id}: ${stripTerminalEscapes(`${a.server}/${a.tool}`)} in ${a.folder}`,
      );
    }
  }
  if (revoked.length > 0 || what === undefined) return EXIT.ok;
  const here = (await store.list()).filter((a) => a.folder === folder);
  throw new PatchbayError("usage", `No remembered approval matches '${what}'`, {
    reason: `none of this folder's (${folder}) has that id, server or server/tool`,
    remedy: here.length > 0
      ? `remembered here: ${here.map((a) => `${a.id} ${a.server}/${a.tool}`).join(", ")}`
      : "nothing is remembered for this folder (patchbay approvals list --all shows others)",
  });
}
