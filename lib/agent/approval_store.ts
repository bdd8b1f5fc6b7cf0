/**
 * Approvals remembered beyond the session: "[p]roject: always" at the approval question.
 *
 * One file, `approvals.json` in the state folder (owner-only, mode 0600, replaced
 * atomically), holds every remembered approval, each for one project folder (the folder
 * patchbay was started in), one server and one tool, with the SHA-256 of the tool's
 * definition as the person saw it (name, description, input schema, annotations) and of
 * how the server was started (command and arguments, or URL). A tool whose definition
 * changed since, or whose server is now another program, is asked about again, as the
 * session's "always" is.
 * `patchbay approvals list|revoke` reads and edits the same file (see
 * docs/tools-and-sessions.md).
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { PatchbayError } from "../errors.ts";
import { statePath } from "../paths.ts";
import { replacePrivateFile } from "../private_file.ts";

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
   * SHA-256 (hex) of how the server's entry started it (command, arguments and folder, or
   * URL); absent in approvals remembered before it was recorded, which are asked again.
   */
  launch?: string;
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
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
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
    return file.approvals.filter(isApproval);
  }

  /** Remembers `approval`, replacing an earlier one of the same folder, server and tool. */
  add(approval: Omit<RememberedApproval, "id">): Promise<RememberedApproval> {
    const id = approvalId(approval.folder, approval.server, approval.tool);
    const entry = { id, ...approval };
    return this.#update((all) => [...all.filter((a) => a.id !== id), entry]).then(() => entry);
  }

  /** Forgets the approvals `choose` picks; resolves with them. */
  async revoke(
    choose: (approval: RememberedApproval) => boolean,
  ): Promise<RememberedApproval[]> {
    let revoked: RememberedApproval[] = [];
    await this.#update((all) => {
      revoked = all.filter(choose);
      return all.filter((a) => !choose(a));
    });
    return revoked;
  }

  /**
   * Reads, changes and replaces the file, after any write under way: in this process
   * (the queue) and in others (a lock on `<file>.lock`). Two sessions of the same person
   * answer "[p]roject" at the same time, or one revokes from the command line while
   * another remembers: each reads the file only once it holds the lock, so neither
   * writes over what the other has just added.
   */
  #update(change: (all: RememberedApproval[]) => RememberedApproval[]): Promise<void> {
    const run = this.#writing.then(async () => {
      await Deno.mkdir(dirname(this.path), { recursive: true });
      const lock = await Deno.open(`${this.path}.lock`, {
        create: true,
        write: true,
        mode: 0o600,
      });
      try {
        await lock.lock(true);
        const next = change(await this.list());
        const text = JSON.stringify({ version: FORMAT_VERSION, approvals: next }, null, 2);
        await replacePrivateFile(this.path, `${text}\n`);
      } finally {
        // Closing the file releases the lock.
        lock.close();
      }
    });
    this.#writing = run.catch(() => {});
    return run;
  }

  #unreadable(why: string): PatchbayError {
    return new PatchbayError("usage", `Cannot read the remembered approvals in ${this.path}`, {
      reason: why,
      remedy: `fix or delete ${this.path} (deleting it forgets every remembered approval); ` +
        "it is left as it is meanwhile",
    });
  }
}

function isApproval(value: unknown): value is RememberedApproval {
  const a = value as Record<string, unknown>;
  return typeof a?.id === "string" && typeof a.folder === "string" &&
    typeof a.server === "string" && typeof a.tool === "string" &&
    typeof a.definition === "string" && typeof a.approvedAt === "string" &&
    (a.launch === undefined || typeof a.launch === "string");
}
