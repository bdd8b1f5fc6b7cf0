/**
 * The V8 settings the client runs under.
 *
 * @module
 */

/**
 * The `--v8-flags` argument of every start of the client: the launcher's command lines
 * (`lib/permissions/launcher.ts`), the `compile` task (which bakes it into the binary; a
 * test keeps the task in step with this constant), the Run and Install lines
 * `patchbay permissions` prints, and the start-up benchmark.
 *
 * Why: the interactive client is a long-running process that mostly waits (on the user, the
 * model, its servers), so its resident memory matters more than the last percent of
 * allocation speed. V8 sizes the young generation by the machine's memory (13.8 MiB
 * reserved, about 2.5 MiB of it in use, at the prompt on a 24 GB machine); a 1 MiB
 * semi-space keeps it small, which took a session with five servers from about 98 to 86 MiB
 * at the prompt and from 107 to 97 MiB after a turn, while the CPU time of `tools --json`
 * and of the agent's turns stayed the same (docs/performance.md). A memory-tuning flag
 * only: V8 leaves these out of the flag hash its code cache is checked against, so a client
 * started without it (`deno run main.ts` by hand, the tests) shares Deno's code cache with
 * one started with it. It must be on the command line: V8 reads it before the program
 * starts.
 */
export const CLIENT_V8_FLAGS = "--v8-flags=--max-semi-space-size=1";
