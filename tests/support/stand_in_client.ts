/**
 * The launcher in front of a stand-in client, to test its restart loop: `launch()` run in a
 * process of its own (so a signal reaches it) with a shell script as its `deno`. The script
 * prints a plan for `permissions --json` (one allowing a new path each time when
 * `<dir>/widen` exists), and as the client records its command line in `<dir>/runs`,
 * copies `<dir>/request` to the restart file the launcher named, and exits 75 (at once, or
 * when terminated if `<dir>/wait` exists, after creating `<dir>/started`).
 */

import { join } from "node:path";
import { DENO } from "./deps.ts";

const SCRIPT = `#!/bin/sh
dir="$STAND_IN_DIR"
case " $* " in
  *" permissions --json "*)
    echo x >> "$dir/plans"
    path=/nowhere
    [ -f "$dir/widen" ] && path="/nowhere/$(wc -l < "$dir/plans" | tr -d ' ')"
    printf '{"flags":["--no-prompt","--allow-read=%s"],"grants":[],"all_env":null,"notes":[]}' "$path"
    exit 0;;
esac
echo "$*" >> "$dir/runs"
[ -n "$PATCHBAY_RESTART_FILE" ] && [ -f "$dir/request" ] && cp "$dir/request" "$PATCHBAY_RESTART_FILE"
if [ -f "$dir/wait" ]; then
  trap 'exit 75' TERM
  touch "$dir/started"
  while :; do sleep 0.1; done
fi
exit 75
`;

const DRIVER = `import { launch } from ${
  JSON.stringify(
    new URL("../../lib/permissions/launcher.ts", import.meta.url).href,
  )
};
import { ROOT } from ${
  JSON.stringify(
    new URL("../../commands/_declarations.ts", import.meta.url).href,
  )
};
const dir = Deno.env.get("STAND_IN_DIR");
Deno.exit(await launch(Deno.args, ROOT, { deno: dir + "/deno", cwd: dir }));
`;

/** A folder with the stand-in client; `await using` removes it. */
export interface StandIn {
  dir: string;
  /** Starts the launcher for `args`. */
  spawn(args: string[]): Deno.ChildProcess;
  /** The client's command lines, one per start. */
  runs(): Promise<string[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Creates the stand-in; `request` is what the client writes, as JSON. */
export async function standInClient(request: unknown): Promise<StandIn> {
  const dir = await Deno.makeTempDir({ prefix: "patchbay-stand-in-" });
  await Deno.writeTextFile(join(dir, "deno"), SCRIPT, { mode: 0o755 });
  await Deno.writeTextFile(join(dir, "driver.ts"), DRIVER);
  await Deno.writeTextFile(join(dir, "request"), JSON.stringify(request));
  await Deno.mkdir(join(dir, "home"));
  return {
    dir,
    spawn: (args) =>
      new Deno.Command(DENO, {
        args: ["run", "--allow-all", join(dir, "driver.ts"), ...args],
        env: { HOME: join(dir, "home"), STAND_IN_DIR: dir, PATH: Deno.env.get("PATH") ?? "" },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn(),
    runs: async () =>
      (await Deno.readTextFile(join(dir, "runs")).catch(() => "")).split("\n").filter(Boolean),
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
