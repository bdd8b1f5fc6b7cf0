/**
 * Opening the authorization URL in the user's browser.
 *
 * The command comes from `$BROWSER` when it is set (the convention shared by git, Python's
 * webbrowser and xdg-utils: a `:`-separated list of commands, `%s` standing for the URL,
 * which is appended when absent), else the platform's opener. Commands run through
 * `Deno.Command` with the URL as one argument: no shell ever sees it, so a URL holding
 * `&`, `;` or quotes cannot run anything. Only http and https URLs are opened.
 *
 * Opening can fail silently on headless machines, so callers always show the URL too.
 *
 * @module
 */

import { denoPermissionFlag } from "../deno_permission/denial.ts";

/** What became of an attempt to open a URL. */
export interface BrowserOpenResult {
  opened: boolean;
  /** The command that was run (program and arguments before the URL), when one started. */
  command?: string;
  /** Why no browser opened. */
  reason?: string;
  /**
   * Waits for the opener process to exit (tests do; patchbay never waits for a browser,
   * which is detached so it cannot keep patchbay running).
   */
  waitForExit?: () => Promise<void>;
}

/** Opens `url`; never throws. */
export type BrowserOpener = (url: URL) => Promise<BrowserOpenResult>;

/** Options of {@linkcode openBrowser}. */
export interface OpenBrowserOptions {
  /** Reads an environment variable (for `$BROWSER`). @default Deno.env.get */
  getEnv?: (name: string) => string | undefined;
  /** @default Deno.build.os */
  os?: typeof Deno.build.os;
  /**
   * How long to wait for the opener to exit before assuming it is the browser itself,
   * still running. xdg-open and open exit at once; `$BROWSER=firefox` does not.
   * @default OPENER_GRACE_MS
   */
  graceMs?: number;
}

/** Milliseconds an opener may take to report failure before it counts as a running browser. */
export const OPENER_GRACE_MS = 2_000;

/** xdg-open's documented exit codes, for a reason a person can act on. */
const XDG_OPEN_EXIT: Readonly<Record<number, string>> = {
  1: "xdg-open reported a syntax error",
  2: "xdg-open could not find the URL handler",
  3: "xdg-open found no browser (is a desktop environment running?)",
  4: "xdg-open could not start the browser",
};

/** The commands to try for `url`, in order, as argument vectors. */
export function browserCommands(
  url: string,
  browserVariable: string | undefined,
  os: typeof Deno.build.os,
): string[][] {
  const configured = (browserVariable ?? "").split(os === "windows" ? ";" : ":")
    .map((entry) => entry.trim()).filter(Boolean);
  if (configured.length > 0) {
    return configured.map((entry) => {
      const words = splitWords(entry);
      return words.some((word) => word.includes("%s"))
        ? words.map((word) => word.replaceAll("%s", url))
        : [...words, url];
    });
  }
  switch (os) {
    case "darwin":
      return [["open", url]];
    case "windows":
      // rundll32 hands the URL to the default browser without cmd.exe, whose `start`
      // would parse `&` in the query string as a command separator.
      return [["rundll32", "url.dll,FileProtocolHandler", url]];
    default:
      return [["xdg-open", url]];
  }
}

/** Splits a command line on whitespace, honouring single and double quotes. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]);
  return words;
}

/** Opens `url` in a browser; reports why when it could not. */
export async function openBrowser(
  url: URL,
  options: OpenBrowserOptions = {},
): Promise<BrowserOpenResult> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { opened: false, reason: `refused to open a ${url.protocol} URL (only http and https)` };
  }
  const getEnv = options.getEnv ?? ((name: string) => Deno.env.get(name));
  const os = options.os ?? Deno.build.os;
  const reasons: string[] = [];
  for (const argv of browserCommands(url.href, getEnv("BROWSER"), os)) {
    const result = await runOpener(argv, options.graceMs ?? OPENER_GRACE_MS);
    if (result.opened) return result;
    reasons.push(result.reason ?? `${argv[0]} failed`);
  }
  return { opened: false, reason: reasons.join("; ") };
}

async function runOpener(argv: string[], graceMs: number): Promise<BrowserOpenResult> {
  const [program, ...args] = argv;
  const command = argv.slice(0, -1).join(" ") || program;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      stdin: "null",
      // Discarded, not piped: a browser left running would block once a pipe filled.
      stdout: "null",
      stderr: "null",
    }).spawn();
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound
      ? `${program} is not installed`
      : denoPermissionFlag(error)
      ? `patchbay may not run ${program} (add ${denoPermissionFlag(error)})`
      : `${program} could not start: ${(error as Error).message}`;
    return { opened: false, reason };
  }
  const exited = child.status.then(() => {});
  const waitForExit = () => {
    child.ref();
    return exited;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<"running">((resolve) => {
    timer = setTimeout(() => resolve("running"), graceMs);
  });
  const outcome = await Promise.race([child.status, grace]);
  clearTimeout(timer);
  if (outcome === "running") {
    // Still running: the command is the browser itself. It must not keep patchbay alive.
    child.unref();
    return { opened: true, command, waitForExit };
  }
  if (outcome.success) return { opened: true, command, waitForExit };
  const known = program === "xdg-open" ? XDG_OPEN_EXIT[outcome.code] : undefined;
  return {
    opened: false,
    command,
    reason: known ?? `${command} exited with code ${outcome.code}`,
    waitForExit,
  };
}
