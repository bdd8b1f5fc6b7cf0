/**
 * Approvals remembered beyond the session: "[p]roject: always" at the approval question.
 *
 * One file, `approvals.json` in the state folder (owner-only, mode 0600, replaced
 * atomically), holds every remembered approval, each for one project folder (the folder
 * patchbay was started in), one server and one tool, with the SHA-256 of the tool's
 * definition as the person saw it (name, description, input schema, annotations) and of
 * how the server was started (command, arguments, folder and environment, or URL and
 * header names: `launch_identity.ts`). A tool whose definition
 * changed since, or whose server is now another program, is asked about again, as the
 * session's "always" is.
 * `patchbay approvals list|revoke` reads and edits the same file (see
 * docs/tools-and-sessions.md).
 *
 * @module
 */

import { createHash } from "node:crypto";
import { MAX_APPROVALS_BYTES, readBoundedText } from "../files/bounded_read.ts";
import { PatchbayError } from "../errors.ts";
import { withFileLock } from "../files/file_lock.ts";
import { statePath } from "../paths.ts";
import { replacePrivateFile } from "../files/private_file.ts";
import { refuseSharedWritable } from "../files/shared_writable.ts";
import { AGENT_STEPS } from "../errors/agent_steps.ts";

/** The file's name in the state folder. */
export const APPROVALS_FILE = "approvals.json";

/** The file's layout version; another one is refused rather than overwritten. */
const FORMAT_VERSION = 1;

/** One remembered approval. */
export interface RememberedApproval {
  /** Short, stable id for `approvals revoke`. */
  id: string;
  /** The absolute project folder it holds in. */
  folder: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** SHA-256 (hex) of the definition approved. */
  definition: string;
  /**
   * SHA-256 (hex) of how the server's entry started it: command, arguments, folder and
   * environment, or URL and header names (`launch_identity.ts`). Absent, or of an older
   * layout, in approvals remembered before these were covered: those are asked again.
   */
  launch?: string;
  /** A short digest of each of those parts, to say which one changed. */
  launchParts?: Record<string, string>;
  /** ISO time of the answer. */
  approvedAt: string;
}

/** The definition a tool is approved with, as one hash. */
export function definitionHash(definition: unknown): string {
  return createHash("sha256").update(JSON.stringify(definition)).digest("hex");
}

/** The id of the approval of `tool` of `server` in `folder`. */
export function approvalId(folder: string, server: string, tool: string): string {
  return definitionHash([folder, server, tool]).slice(0, 8);
}

/** The remembered approvals, in a file. */
export class ApprovalStore {
  readonly path: string;
  /** Writes run one after the other. */
  #writing: Promise<unknown> = Promise.resolve();

  /** @param path @default `approvals.json` in the state folder */
  constructor(path: string = statePath(APPROVALS_FILE)) {
    this.path = path;
  }

  /** Every remembered approval; none when there is no file. Throws when it cannot be read. */
  async list(): Promise<RememberedApproval[]> {
    // Others able to write it could approve any tool in any folder, as they could choose
    // the programs of a shared configuration: refused the same way.
    refuseSharedWritable(this.path, "the approvals file");
    let text: string;
    try {
      text = await readBoundedText(this.path, {
        what: "the approvals file",
        maxBytes: MAX_APPROVALS_BYTES,
        code: "usage",
        remedy: AGENT_STEPS.forgetApprovals(this.path),
      });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      if (error instanceof PatchbayError) throw error;
      throw this.#unreadable(String((error as Error).message));
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw this.#unreadable(`it is not JSON (${(error as Error).message})`);
    }
    const file = data as { version?: unknown; approvals?: unknown };
    if (file?.version !== FORMAT_VERSION || !Array.isArray(file.approvals)) {
      throw this.#unreadable(
        `expected {"version": ${FORMAT_VERSION}, "approvals": [...]}, found version ` +
          JSON.stringify(file?.version ?? null),
      );
    }
    // An entry of another shape (an older patchbay's, a hand edit) is no approval: it is
    // left out, never a reason to fail; parts that are not digests are not compared.
    return file.approvals.filter(isApproval).map((a) =>
      a.launchParts === undefined || isDigestRecord(a.launchParts)
        ? a
        : { ...a, launchParts: undefined }
    );
  }

  /** Remembers `approval`, replacing an earlier one of the same folder, server and tool. */
  add(approval: Omit<RememberedApproval, "id">): Promise<RememberedApproval> {
    const id = approvalId(approval.folder, approval.server, approval.tool);
    const entry = { id, ...approval };
    return this.#update(
      (all) => [...all.filter((a) => a.id !== id), entry],
      "remember the approval",
    ).then(() => entry);
  }

  /** Forgets the approvals `choose` picks; resolves with them. */
  async revoke(
    choose: (approval: RememberedApproval) => boolean,
  ): Promise<RememberedApproval[]> {
    let revoked: RememberedApproval[] = [];
    await this.#update((all) => {
      revoked = all.filter(choose);
      return all.filter((a) => !choose(a));
    }, "revoke the approvals");
    return revoked;
  }

  /**
   * Reads, changes and replaces the file, after any write under way: in this process
   * (the queue) and in others (the lock of `<file>.lock`, lib/file_lock.ts, waited for a
   * bounded time). Two sessions of the same person answer "[p]roject" at the same time, or
   * one revokes from the command line while another remembers: each reads the file only
   * once it holds the lock, so neither writes over what the other has just added.
   */
  #update(
    change: (all: RememberedApproval[]) => RememberedApproval[],
    doing: string,
  ): Promise<void> {
    const run = this.#writing.then(() =>
      withFileLock(
        `${this.path}.lock`,
        { what: `the approvals file ${this.path}`, doing },
        async () => {
          const next = change(await this.list());
          const text = JSON.stringify({ version: FORMAT_VERSION, approvals: next }, null, 2);
          await replacePrivateFile(this.path, `${text}\n`);
        },
      )
    );
    this.#writing = run.catch(() => {});
    return run;
  }

  #unreadable(why: string): PatchbayError {
    return new PatchbayError("usage", `Cannot read the remembered approvals in ${this.path}`, {
      reason: why,
      remedy: AGENT_STEPS.fixApprovals(this.path),
    });
  }
}

function isDigestRecord(value: unknown): value is Record<string, string> {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === "string");
}

function isApproval(value: unknown): value is RememberedApproval {
  const a = value as Record<string, unknown>;
  return typeof a?.id === "string" && typeof a.folder === "string" &&
    typeof a.server === "string" && typeof a.tool === "string" &&
    typeof a.definition === "string" && typeof a.approvedAt === "string" &&
    (a.launch === undefined || typeof a.launch === "string");
}
