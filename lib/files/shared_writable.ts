/**
 * Files and folders that other local users may write. patchbay starts the programs its
 * configuration names, with the variables of its `.env`, and trusts what its own folders
 * hold (the launcher's remembered permission plans among them): a configuration, `.env` or
 * folder that a group or everyone may write lets another local user choose what patchbay
 * runs. Such a file is refused, as ssh refuses a shared `authorized_keys`, with its path,
 * its mode and the `chmod` that fixes it. See docs/security-limits.md.
 *
 * What counts as shared: the write bit of the group or of others, on the file itself
 * (symbolic links followed: the mode of a link is meaningless) and on the folder that
 * holds it (whoever may write the folder may replace the file), both the folder the path
 * names and the one the link resolves into. Two cases are not shared:
 *
 * - a group write bit when the group is the owner's own (its id equals the owner's id, as
 *   with the private group every user gets on Debian, Ubuntu and Fedora, whose umask 002
 *   makes every new file group-writable);
 * - a folder with the sticky bit (`/tmp`): others may add files there but not replace
 *   or rename those of another user. patchbay's own folders get no such pass, since a
 *   file added there (a remembered plan) is trusted.
 *
 * Ownership is not checked (a root-owned file that only root may write is as safe as
 * one's own), nor are ACLs, and nothing is checked on Windows (no POSIX modes).
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { SharedWritableError } from "../errors.ts";

const GROUP_WRITE = 0o020;
const OTHER_WRITE = 0o002;
const STICKY = 0o1000;

/** What may be written by others, and how. */
export interface SharedWritable {
  /** The path whose mode lets others write (the file, or a folder above it). */
  path: string;
  /** Its permission bits, e.g. `0o666`. */
  mode: number;
  kind: "file" | "folder";
  /** Who besides the owner may write it. */
  writers: "its group" | "every user" | "its group and every user";
}

/** Options of {@linkcode findSharedWritable}. */
export interface SharedWritableOptions {
  /**
   * The path is one of patchbay's own folders, whose every file is trusted: the sticky
   * bit does not excuse it. @default false
   */
  ownFolder?: boolean;
}

/**
 * The first of `path` and the folders holding it that others may write, or `undefined`
 * when there is none, when `path` does not exist, or on Windows.
 */
export function findSharedWritable(
  path: string,
  options: SharedWritableOptions = {},
): SharedWritable | undefined {
  if (Deno.build.os === "windows") return undefined;
  const absolute = resolve(path);
  let info: Deno.FileInfo;
  let real: string;
  try {
    info = Deno.statSync(absolute);
    real = Deno.realPathSync(absolute);
  } catch {
    // A missing file is the reader's to report; this check only judges what exists.
    return undefined;
  }
  // A pipe or a device is no file to judge by its mode (/dev/zero is writable by all): the
  // bounded reader (lib/bounded_read.ts) refuses it as what it is.
  if (!info.isDirectory && !info.isFile) return undefined;
  const kind = info.isDirectory ? "folder" : "file";
  const own = judge(real, info, kind, options.ownFolder === true);
  if (own) return own;
  const holders = new Set([dirname(absolute), dirname(real)]);
  for (const holder of holders) {
    if (holder === absolute) continue;
    let held: Deno.FileInfo;
    try {
      held = Deno.statSync(holder);
    } catch {
      continue;
    }
    const found = judge(holder, held, "folder", false);
    if (found) return found;
  }
  return undefined;
}

function judge(
  path: string,
  info: Deno.FileInfo,
  kind: "file" | "folder",
  ownFolder: boolean,
): SharedWritable | undefined {
  if (info.mode === null) return undefined;
  const mode = info.mode & 0o7777;
  if (kind === "folder" && !ownFolder && (mode & STICKY) !== 0) return undefined;
  const privateGroup = info.gid !== null && info.gid === info.uid;
  const group = (mode & GROUP_WRITE) !== 0 && !privateGroup;
  const others = (mode & OTHER_WRITE) !== 0;
  if (!group && !others) return undefined;
  const writers = group && others ? "its group and every user" : group ? "its group" : "every user";
  return { path, mode, kind, writers };
}

/**
 * Refuses to write `path` where the next start would refuse to read it: the file as
 * {@linkcode refuseSharedWritable} judges it when it exists, else the folder it would be
 * created in (a missing folder is created by patchbay, its own).
 */
export function refuseSharedDestination(path: string, what: string): void {
  if (Deno.build.os === "windows") return;
  const absolute = resolve(path);
  try {
    Deno.statSync(absolute);
    return refuseSharedWritable(absolute, what);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const folder = dirname(absolute);
  let info: Deno.FileInfo;
  let real: string;
  try {
    info = Deno.statSync(folder);
    real = Deno.realPathSync(folder);
  } catch {
    return;
  }
  const found = judge(real, info, "folder", false);
  if (!found) return;
  throw new SharedWritableError(what, absolute, {
    path: found.path,
    mode: found.mode,
    kind: found.kind,
    writers: found.writers,
    chmod: chmodRemedy(found),
  });
}

/** The `chmod` that takes the write bits of the group and of others away. */
export function chmodRemedy(found: SharedWritable): string {
  return `chmod go-w ${shellQuote(found.path)}`;
}

function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * Refuses `path` (what it is: `the configuration file`, `the environment file`, `the
 * state folder`) when others may write it or the folder holding it: throws a
 * {@linkcode SharedWritableError} with the path, its mode and the `chmod` that fixes it.
 */
export function refuseSharedWritable(
  path: string,
  what: string,
  options: SharedWritableOptions = {},
): void {
  const found = findSharedWritable(path, options);
  if (!found) return;
  throw new SharedWritableError(what, resolve(path), {
    path: found.path,
    mode: found.mode,
    kind: found.kind,
    writers: found.writers,
    chmod: chmodRemedy(found),
  });
}
