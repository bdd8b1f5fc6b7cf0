/**
 * Files only their owner may read (credentials, the prompt history): replaced atomically,
 * removed when asked whether or not they exist.
 *
 * @module
 */

/** Sets `path`'s mode to `mode` unless it already has it (a no-op on Windows). */
export async function chmodOwnerOnly(path: string, mode: number): Promise<void> {
  // Windows has no POSIX modes; the user profile's ACLs protect the file there.
  if (Deno.build.os === "windows") return;
  const info = await Deno.stat(path);
  if (info.mode !== null && (info.mode & 0o777) === mode) return;
  await Deno.chmod(path, mode);
}

/**
 * Replaces `path` with `text`, readable by its owner only. Written beside the target and
 * renamed over it: a crash or a concurrent reader never sees a partial file, and the
 * temporary file is owner-only from the start (the mode is set again since a umask may
 * have narrowed it). Throws what failed; the temporary file is gone either way.
 */
export async function replacePrivateFile(path: string, text: string, mode = 0o600): Promise<void> {
  const temporary = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temporary, text, { mode, createNew: true });
    await chmodOwnerOnly(temporary, mode);
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}

/** Removes the file at `path`; `false` when there was none. Other failures are thrown. */
export async function removeIfPresent(path: string): Promise<boolean> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  return true;
}
