/**
 * What the launcher itself needs of Deno before it can do anything: reading the environment
 * (HOME, to find patchbay's folders) and files (the configuration), and running Deno. Run
 * with none of them (`deno run launch.ts`, or `deno install -g` with no flags), Deno would
 * stop at the first (`reading HOME`) with an uncaught error and a stack trace, or, at a
 * terminal, ask for each in turn. The launcher checks first and, when one is missing, says
 * which and prints the exact command lines that grant them, as every other failure does.
 *
 * Writing its own folder (remembered plans, restart requests) is needed too, but without it
 * the launcher still starts the client: it computes the plan at every start and cannot
 * restart the client under a wider one, which it says on one line.
 *
 * No npm imports: the launcher reads this before anything else.
 *
 * @module
 */

import { stateDir } from "../paths.ts";

/** The launcher's own permission flags, each with what it is for. */
const NEEDS: readonly { flag: string; query: () => Deno.PermissionDescriptor; why: string }[] = [
  { flag: "--allow-env", query: () => ({ name: "env" }), why: "reading HOME" },
  { flag: "--allow-read", query: () => ({ name: "read" }), why: "reading the configuration" },
  {
    flag: "--allow-run",
    query: () => ({ name: "run", command: Deno.execPath() }),
    why: "running Deno",
  },
];

/** How the launcher's own state folder is written when it cannot be read from HOME. */
const STATE_FOLDER_SHELL = "$HOME/.local/state/patchbay";

/** The state folder, or its shell spelling when the environment may not be read. */
function stateFolder(): string {
  if (Deno.permissions.querySync({ name: "env" }).state !== "granted") return STATE_FOLDER_SHELL;
  try {
    return stateDir();
  } catch {
    return STATE_FOLDER_SHELL;
  }
}

function granted(descriptor: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(descriptor).state === "granted";
}

/** The flags every start of the launcher needs, as `deno run` and `deno install` take them. */
export function launcherFlags(state: string = stateFolder()): string[] {
  return [
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-run",
    `--allow-write=${state}`,
    // Optional: the hand-over of servers started early (lib/transports/handoff.ts).
    "--allow-net=127.0.0.1:0",
  ];
}

/** One argument quoted for a POSIX shell, when it needs it. */
function quote(argument: string): string {
  if (/^[\w@%+=:,./-]+$/.test(argument)) return argument;
  // `$HOME` stays for the shell to expand; everything else is taken literally.
  if (argument.includes(STATE_FOLDER_SHELL)) {
    return `"${argument.replaceAll(/["\\`]/g, (c) => `\\${c}`)}"`;
  }
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}

/** What the person runs: the launcher's path in a checkout, its URL, or its JSR name. */
function launcherSpecifier(launcherUrl: URL): { run: string; install: string } {
  if (launcherUrl.protocol === "file:") {
    const path = decodeURIComponent(launcherUrl.pathname);
    return { run: path, install: path };
  }
  // A published package is served from jsr.io/@scope/name/<version>/launch.ts.
  const jsr = /^\/(@[^/]+\/[^/]+)\/([^/]+)\/launch\.ts$/.exec(launcherUrl.pathname);
  if (launcherUrl.host === "jsr.io" && jsr) {
    return { run: `jsr:${jsr[1]}@${jsr[2]}`, install: `jsr:${jsr[1]}@${jsr[2]}` };
  }
  return { run: launcherUrl.href, install: launcherUrl.href };
}

/** Hosts Deno imports code from without `--allow-import` (Deno 2.9's default list). */
const IMPORT_HOSTS = new Set([
  "deno.land",
  "jsr.io",
  "esm.sh",
  "cdn.jsdelivr.net",
  "raw.githubusercontent.com",
  "gist.githubusercontent.com",
]);

/** `--allow-import=<host>` when the launcher came from a host Deno does not import from. */
function importFlags(launcherUrl: URL): string[] {
  if (launcherUrl.protocol !== "http:" && launcherUrl.protocol !== "https:") return [];
  return IMPORT_HOSTS.has(launcherUrl.host) ? [] : [`--allow-import=${launcherUrl.host}`];
}

/** The launcher's missing grants, worded for the person: message, cause and remedy. */
export interface MissingGrants {
  message: string;
  cause: string;
  remedy: string;
}

/**
 * `undefined` when the launcher has what it needs to start the client; otherwise what is
 * missing and the command lines that grant it, for `args` (the command line given) and the
 * launcher at `launcherUrl`.
 */
export function missingGrants(
  args: readonly string[],
  launcherUrl: URL,
): MissingGrants | undefined {
  const missing = NEEDS.filter((need) => !granted(need.query()));
  if (missing.length === 0) return undefined;
  const flags = [...importFlags(launcherUrl), ...launcherFlags()].map(quote).join(" ");
  const where = launcherSpecifier(launcherUrl);
  const given = args.map(quote).join(" ");
  const run = `deno run ${flags} ${quote(where.run)}${given ? ` ${given}` : ""}`;
  const install = `deno install --global --force --name patchbay ${flags} ${quote(where.install)}`;
  const lines = [`run: ${run}`, `install: ${install}`];
  if (launcherUrl.protocol === "file:") {
    // A checkout's tasks pass them, from any folder (the task works where it was started).
    const manifest = decodeURIComponent(new URL("deno.json", launcherUrl).pathname);
    const task = `deno task --config ${quote(manifest)}`;
    lines.unshift(`run: ${task} start${given ? ` ${given}` : ""}`);
    lines[2] = `install: ${task} install`;
  }
  return {
    message: "patchbay's launcher was started without the Deno permissions it needs",
    cause: `it was started without ${missing.map((need) => need.flag).join(", ")}, so it ` +
      `cannot do its first steps (${missing.map((need) => need.why).join(", ")})`,
    remedy: `start it with them, one of:\n${lines.map((line) => `    ${line}`).join("\n")}`,
  };
}

/**
 * One line when the launcher may not write its own folder: it then computes the plan at
 * every start and cannot restart the client under a wider plan (`/refresh`).
 */
export function unwritableStateNotice(): string | undefined {
  if (!granted({ name: "env" })) return undefined;
  const state = stateFolder();
  if (granted({ name: "write", path: state })) return undefined;
  return `patchbay: the launcher may not write ${state}, so it computes the permission plan ` +
    "at every start and cannot restart the client under a wider one (/refresh after adding " +
    `a server); start it with --allow-write=${state}`;
}
