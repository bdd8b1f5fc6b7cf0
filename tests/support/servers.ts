/**
 * Real MCP servers for the connection tests: server-everything in its HTTP modes on a
 * random loopback port, the fixture server of `tests/fixtures/`, normalized server
 * entries, a log that records what it is told, and process checks through `/proc`
 * (tests run with `--allow-all`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { HttpServerConfig, ServerConfig, StdioServerConfig } from "../../lib/config/types.ts";
import { ConnectionManager, type ConnectionManagerOptions } from "../../lib/connections/manager.ts";
import type { ConnectionEvent } from "../../lib/connections/types.ts";
import type { Log, LogLevel } from "../../lib/log/log.ts";
import { listeningPorts } from "../../lib/transports/process.ts";
import { DENO, everythingEntry, NODE } from "./deps.ts";

/** The fixture server's path. */
export const FIXTURE_SERVER = fileURLToPath(
  new URL("../fixtures/stdio_server.ts", import.meta.url),
);

const COMMON = {
  timeoutSeconds: 10,
  trusted: false,
  sampling: "ask" as const,
  disabled: false,
  transportInferred: false,
};

/** A normalized stdio entry. */
export function stdioEntry(
  name: string,
  command: string,
  args: string[] = [],
  extra: Partial<StdioServerConfig> = {},
): StdioServerConfig {
  return { ...COMMON, name, transport: "stdio", command, args, env: {}, ...extra };
}

/** A normalized streamable_http / sse entry. */
export function httpEntry(
  name: string,
  url: string,
  extra: Partial<HttpServerConfig> = {},
): HttpServerConfig {
  return {
    ...COMMON,
    name,
    transport: "streamable_http",
    url,
    headers: {},
    sseReadTimeoutSeconds: 300,
    ...extra,
  };
}

/** The fixture server as a stdio entry, with its flags (see the fixture's doc). */
export function fixtureEntry(
  name: string,
  flags: string[] = [],
  extra: Partial<StdioServerConfig> = {},
): StdioServerConfig {
  return stdioEntry(
    name,
    DENO,
    ["run", "--quiet", "--no-config", "--allow-run", FIXTURE_SERVER, ...flags],
    extra,
  );
}

/** server-everything over stdio. */
export function everythingStdio(name = "everything", extra: Partial<StdioServerConfig> = {}) {
  return stdioEntry(name, NODE, [everythingEntry(), "stdio"], extra);
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (bound, then released). Another
 * program may take it before the test uses it: a server the test starts should pick its
 * own port instead (port 0, then read the port it reports), or retry on `AddrInUse`. For a
 * port the test needs closed, wrap the check in {@linkcode assumingClosed}.
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` right now. */
export async function portOpen(port: number): Promise<boolean> {
  try {
    const connection = await Deno.connect({ hostname: "127.0.0.1", port });
    connection.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `check`, which relies on nothing listening on `port` (from {@linkcode freePort}). If
 * it fails while something does listen there, the failure says so: another program took
 * the port after it was released, which no assertion of the test could have foreseen.
 */
export async function assumingClosed<T>(port: number, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(await portOpen(port))) throw error;
    throw new Error(
      `port ${port} was assumed closed, but another program listens on it now (it took the ` +
        "port after the test released it); the failure below is about that, not patchbay: " +
        "run the test again",
      { cause: error },
    );
  }
}

/**
 * Starts a server again on the port it had. Another program may take a port while the
 * test's server is down, which no test can prevent: that is then said plainly.
 */
export function rebind<T>(port: number, start: () => T): T {
  try {
    return start();
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    throw new Error(
      `port ${port} was taken by another program while the test's server was down; ` +
        "run the test again",
      { cause: error },
    );
  }
}

/** A server process the test started; `await using` stops it. */
export interface RunningServer {
  port: number;
  origin: string;
  pid: number;
  [Symbol.asyncDispose](): Promise<void>;
}

/** How long a server process may take to start listening. */
const LISTEN_TIMEOUT_MS = 15_000;

/**
 * server-everything in `streamableHttp` or `sse` mode, on a port the system picks (`PORT=0`:
 * no other program can take it between a check and the bind). The server prints the port
 * it was given, not the one it got, so the port is read from its listening socket
 * (`/proc`; tests run with `--allow-all`).
 */
export async function startEverythingHttp(
  mode: "streamableHttp" | "sse",
  /** A port to bind again (a server restarted where it was); another program may hold it. */
  port = 0,
): Promise<RunningServer> {
  const child = new Deno.Command(NODE, {
    args: [everythingEntry(), mode],
    env: { PORT: String(port), PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let bound: number;
  try {
    bound = await listeningPort(child);
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // It exited by itself.
    }
    await child.status;
    if (port !== 0 && await portOpen(port)) {
      throw new Error(
        `port ${port} was taken by another program while the test's server was down; ` +
          "run the test again",
        { cause: error },
      );
    }
    throw error;
  }
  return {
    port: bound,
    origin: `http://127.0.0.1:${bound}`,
    pid: child.pid,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
    },
  };
}

/** The TCP port `child` listens on, once it does. */
export async function listeningPort(child: Deno.ChildProcess): Promise<number> {
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + LISTEN_TIMEOUT_MS;
  while (Date.now() < deadline && !exited) {
    const [port] = listeningPorts([child.pid]);
    if (port !== undefined) return port;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(
    exited
      ? `process ${child.pid} exited before it listened on a port`
      : `process ${child.pid} listened on no port within ${LISTEN_TIMEOUT_MS} ms`,
  );
}

/** One line a {@linkcode RecordingLog} received. */
export interface LogLine {
  level: LogLevel;
  component: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A {@linkcode Log} that keeps every line, for assertions. */
export class RecordingLog implements Log {
  readonly lines: LogLine[];
  readonly #component: string;

  constructor(component = "test", lines: LogLine[] = []) {
    this.#component = component;
    this.lines = lines;
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: "debug", component: this.#component, message, fields });
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: "info", component: this.#component, message, fields });
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: "warn", component: this.#component, message, fields });
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: "error", component: this.#component, message, fields });
  }
  child(component: string): Log {
    return new RecordingLog(`${this.#component}:${component}`, this.lines);
  }

  /** Lines whose message matches `pattern`. */
  matching(pattern: RegExp): LogLine[] {
    return this.lines.filter((line) => pattern.test(line.message));
  }
}

/** Whether `pid` is a living process (not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/** `pid` and its living descendants. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z") parents.set(Number(entry.name), Number(fields[1]));
    } catch {
      // Exited while listing.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree.filter((p) => parents.has(p));
}

/** Processes started by this test process (children and theirs), still alive. */
export function ownDescendants(): number[] {
  return descendants(Deno.pid).filter((pid) => pid !== Deno.pid);
}

/** Living processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(marker) && processAlive(Number(entry.name))) {
        found.push(Number(entry.name));
      }
    } catch {
      // Exited while listing.
    }
  }
  return found;
}

/** The first text of a tool result's content; `undefined` when it has none. */
export function firstText(result: { content?: unknown }): string | undefined {
  return ((result.content ?? []) as Array<{ text?: string }>)[0]?.text;
}

/** A loopback listener that accepts connections and never answers. */
export interface SilentListener {
  port: number;
  /** Closes the listener and every connection it accepted. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a listener on a random loopback port that accepts connections and never answers
 * what it is sent: a host that is up but stuck. With `greeting`, it first writes that to
 * each connection, as a server of another protocol does (an SSH banner).
 */
export function silentListener(options: { greeting?: string } = {}): SilentListener {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held = new Set<Deno.Conn>();
  const accepting = (async () => {
    for await (const connection of listener) {
      held.add(connection);
      if (options.greeting !== undefined) {
        connection.write(new TextEncoder().encode(options.greeting)).catch(() => {});
      }
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const connection of held) {
        try {
          connection.close();
        } catch {
          // Already closed.
        }
      }
      await accepting.catch(() => {});
    },
  };
}

/** Waits until `check` holds (polling), failing with `what` after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Server entries are plain data; this keeps a test's list readable. */
export type Entries = ServerConfig[];

/**
 * A started connection manager whose log and events are recorded; `await using` closes it.
 * `options.log` replaces the recording log.
 */
export async function startManager(
  options: Omit<ConnectionManagerOptions, "log"> & {
    log?: Log;
  },
) {
  const log = new RecordingLog();
  const manager = new ConnectionManager({ log, ...options });
  const events: ConnectionEvent[] = [];
  manager.on((event) => events.push(event));
  const states = await manager.start();
  return {
    manager,
    log,
    events,
    states,
    /** The states `server` went through, in order. */
    statesOf: (server: string) =>
      events.flatMap((e) => e.type === "state" && e.server === server ? [e.state] : []),
    async [Symbol.asyncDispose]() {
      await manager.close();
    },
  };
}
