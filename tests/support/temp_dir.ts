/**
 * A temporary folder that `await using` removes, so a test needs no try/finally of its own.
 *
 * @module
 */

/** A temporary folder, removed (with everything in it) on dispose. */
export interface TempDir {
  /** The folder's absolute path. */
  readonly path: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Makes a temporary folder removed on dispose.
 *
 * @param prefix the start of the folder's name, so a leftover one says which tests made it
 * @default {"patchbay-test-"}
 */
export async function tempDir(prefix = "patchbay-test-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      // Already gone (a test removed it) is fine: the folder is not there either way.
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}
