/**
 * Opening a wire trace file (docs/trace.md): a regular file, or none yet (created 0600).
 * Never through a symbolic link (whose target, anywhere, would be written and chmodded),
 * never a named pipe (opening one for writing waits for a reader: patchbay would hang), a
 * device or a socket. Deno has no `O_NOFOLLOW`, so the path is looked at before opening
 * and again after, and the file opened must be the regular file that is at the path then;
 * anything else is closed unwritten and refused ({@linkcode TraceFileRefusedError}). The
 * mode is set only on the file that was checked, and only when it is not 0600 already.
 *
 * @module
 */

import { dirname } from "node:path";
import { denoPermissionFlag } from "../deno_permission/denial.ts";

/** What is at a trace path that is not a regular file, in words. */
export type TraceFileKind =
  | "a symbolic link"
  | "a folder"
  | "a named pipe (FIFO)"
  | "a character device"
  | "a block device"
  | "a socket"
  | "a device or system file Deno guards"
  | "not a regular file";

/** The trace path holds something a trace may not be written to. */
export class TraceFileRefusedError extends Error {
  readonly path: string;
  readonly kind: TraceFileKind;
  /** Where a symbolic link points, as written in it. */
  readonly target?: string;
  constructor(path: string, kind: TraceFileKind, target?: string) {
    super(`${path} is ${kind}${target ? ` (to ${target})` : ""}, not a regular file`);
    this.name = "TraceFileRefusedError";
    this.path = path;
    this.kind = kind;
    this.target = target;
  }
}

/** Mode of a trace file: it holds what servers said, for its owner's eyes. */
export const TRACE_FILE_MODE = 0o600;

/**
 * Opens `path` to append to (created when missing, its folder too, mode 0700), refusing
 * anything but a regular file. Throws {@linkcode TraceFileRefusedError} for what is there,
 * or what failed (a missing Deno permission is a `Deno.errors.NotCapable`).
 */
export function openTraceFile(path: string): Deno.FsFile {
  ensureFolder(path);
  const before = lookAt(path);
  if (before) refuseUnlessFile(path, before);
  const file = Deno.openSync(path, { create: true, append: true, mode: TRACE_FILE_MODE });
  try {
    const opened = file.statSync();
    const now = lookAt(path);
    // Replaced between the look and the open (a link or a pipe put in its place): the file
    // opened is not the one checked.
    if (!now) throw new TraceFileRefusedError(path, "not a regular file");
    refuseUnlessFile(path, now);
    if (!opened.isFile || opened.ino !== now.ino || opened.dev !== now.dev) {
      throw new TraceFileRefusedError(path, "not a regular file");
    }
    // An existing file keeps its mode on open. The path was just seen to be this regular
    // file, so the mode set is this file's, not a link target's.
    if (Deno.build.os !== "windows" && ((opened.mode ?? TRACE_FILE_MODE) & 0o777) !== 0o600) {
      Deno.chmodSync(path, TRACE_FILE_MODE);
    }
  } catch (error) {
    file.close();
    throw error;
  }
  return file;
}

/** What is at `path` without following a link; `undefined` when nothing is. */
function lookAt(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    // Deno refuses some paths to anything short of --allow-all (devices such as /dev/full,
    // /proc): no grant of a file lets a trace be written there.
    if (denoPermissionFlag(error) === "--allow-all") {
      throw new TraceFileRefusedError(path, "a device or system file Deno guards");
    }
    throw error;
  }
}

function refuseUnlessFile(path: string, info: Deno.FileInfo): void {
  if (info.isFile) return;
  if (info.isSymlink) {
    let target: string | undefined;
    try {
      target = Deno.readLinkSync(path);
    } catch {
      // Unreadable: the refusal says what the path is without where it points.
    }
    throw new TraceFileRefusedError(path, "a symbolic link", target);
  }
  throw new TraceFileRefusedError(path, kindOf(info));
}

/** What `info` describes, in words, when it is not a regular file or a link. */
export function kindOf(info: Deno.FileInfo): TraceFileKind {
  return info.isDirectory
    ? "a folder"
    : info.isFifo
    ? "a named pipe (FIFO)"
    : info.isCharDevice
    ? "a character device"
    : info.isBlockDevice
    ? "a block device"
    : info.isSocket
    ? "a socket"
    : "not a regular file";
}

/** Creates the trace's folder (0700) when it is missing. */
function ensureFolder(path: string): void {
  try {
    if (!Deno.statSync(dirname(path)).isDirectory) throw new Deno.errors.NotFound(dirname(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    } else if (!(error instanceof Deno.errors.NotCapable)) throw error;
  }
}
