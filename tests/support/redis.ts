/**
 * Real Redis servers for tests: standalone, Sentinel and Cluster, each started from
 * Debian's `redis-server` on random loopback ports in a temporary folder, and removed with
 * `await using`. A server can be stopped, SIGKILLed and restarted on the same port.
 *
 * redis-server cannot be told to pick its own port (`--port 0` turns TCP off), so a port
 * is chosen free and released first; when another program takes it in between, the
 * server fails to bind and is started again on another port ({@linkcode PORT_ATTEMPTS}),
 * unless the test asked for that very port, which then fails with
 * {@linkcode RedisPortTakenError} saying so.
 *
 * @module
 */

import { join } from "node:path";
import { hasProcFs, listeningPorts } from "../../lib/transports/process.ts";

const HOST = "127.0.0.1";
const READY_TIMEOUT_MS = 10_000;
/** Ports tried for a server whose port the test left to the helper. */
const PORT_ATTEMPTS = 5;
const decoder = new TextDecoder();

/** redis-server could not listen: another program holds the port. */
export class RedisPortTakenError extends Error {
  readonly port: number;
  constructor(port: number, what = "redis-server") {
    super(
      `${what} could not listen on port ${port}: another program holds it (it took the port ` +
        "after the test chose it, or while the server was down); run the test again",
    );
    this.name = "RedisPortTakenError";
    this.port = port;
  }
}

/** Whether the log of a redis-server that exited says its port was taken. */
async function bindFailed(logFile: string): Promise<boolean> {
  const log = await Deno.readTextFile(logFile).catch(() => "");
  return /Address already in use/i.test(log);
}

/**
 * Whether the port answering is `child`'s own (where `/proc` tells): another program
 * that took the port must not pass for the server.
 */
function owns(child: Deno.ChildProcess, port: number): boolean {
  return !hasProcFs() || listeningPorts([child.pid]).includes(port);
}

/** Retries `start` on fresh ports while their port turns out taken. */
async function onFreePort<T>(start: (port: number) => Promise<T>, spread?: number): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await start(freePort(spread));
    } catch (error) {
      if (!(error instanceof RedisPortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

/** A free TCP port on the loopback interface (and, with `spread`, port + spread too). */
export function freePort(spread?: number): number {
  for (let attempt = 0; attempt < 50; attempt++) {
    const listener = Deno.listen({ hostname: HOST, port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    if (spread === undefined) return port;
    // Cluster nodes also listen on port + 10000 for their bus.
    if (port + spread > 65535) continue;
    try {
      Deno.listen({ hostname: HOST, port: port + spread }).close();
      return port;
    } catch {
      continue;
    }
  }
  throw new Error("no free port pair found");
}

/** Runs redis-cli against a port and returns its output (trailing newline removed). */
export async function redisCli(
  port: number,
  args: string[],
  password?: string,
): Promise<string> {
  const auth = password ? ["-a", password, "--no-auth-warning"] : [];
  const { stdout, stderr, code } = await new Deno.Command("redis-cli", {
    args: ["-h", HOST, "-p", String(port), ...auth, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`redis-cli ${args.join(" ")}: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout).replace(/\n$/, "");
}

/** Longest wait for a PING's answer: a program that took the port may never answer. */
const PING_TIMEOUT_MS = 500;

/** Whether something answers RESP on the port (a PING reply, or an auth refusal). */
async function answers(port: number): Promise<boolean> {
  let conn: Deno.TcpConn | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    conn = await Deno.connect({ hostname: HOST, port });
    const open = conn;
    timer = setTimeout(() => open.close(), PING_TIMEOUT_MS);
    await conn.write(new TextEncoder().encode("PING\r\n"));
    const buffer = new Uint8Array(64);
    const n = await conn.read(buffer);
    const reply = n ? decoder.decode(buffer.subarray(0, n)) : "";
    return reply.startsWith("+PONG") || reply.startsWith("-NOAUTH");
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    try {
      conn?.close();
    } catch {
      // Closed by the timer.
    }
  }
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what} did not become ready within ${READY_TIMEOUT_MS} ms`);
}

/** Options of {@linkcode RedisServer.start}. */
export interface RedisServerOptions {
  /** `requirepass`. */
  password?: string;
  /**
   * `aof`: every write is fsync'd to an append-only file before it is acknowledged, so
   * the data survives SIGKILL; `none`: memory only. @default "none"
   */
  persistence?: "aof" | "none";
  /**
   * This port and no other: a test that needs it (a store that was down, then comes up)
   * gets {@linkcode RedisPortTakenError} when another program holds it.
   * @default a free port, another one if that is taken meanwhile
   */
  port?: number;
  /** Serve TLS on the port instead of plain TCP. */
  tls?: { cert: string; key: string };
  /** More `--name value` arguments for redis-server. */
  args?: string[];
}

/** A redis-server process. */
export class RedisServer {
  readonly host = HOST;
  readonly port: number;
  readonly options: RedisServerOptions;
  #root: string;
  #dir: string;
  #generation = 0;
  #child: Deno.ChildProcess | undefined;

  private constructor(port: number, root: string, options: RedisServerOptions) {
    this.port = port;
    this.#root = root;
    this.#dir = join(root, "data-0");
    this.options = options;
  }

  /** Starts a server and waits until it answers. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    if (options.port !== undefined) return await RedisServer.#startOn(options.port, options);
    return await onFreePort((port) => RedisServer.#startOn(port, options));
  }

  /** Starts a cluster node: its port and port + 10000 (the bus) must both be free. */
  static async startClusterNode(options: RedisServerOptions): Promise<RedisServer> {
    return await onFreePort((port) => RedisServer.#startOn(port, options), 10000);
  }

  static async #startOn(port: number, options: RedisServerOptions): Promise<RedisServer> {
    const root = await Deno.makeTempDir({ prefix: "patchbay-redis-" });
    const server = new RedisServer(port, root, options);
    try {
      await Deno.mkdir(server.#dir);
      await server.#spawn();
    } catch (error) {
      await server[Symbol.asyncDispose]();
      throw error;
    }
    return server;
  }

  /** Its data folder (where an append-only file lives). */
  get dir(): string {
    return this.#dir;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** REDIS_* variables that point patchbay at this server. */
  get env(): Record<string, string> {
    return {
      REDIS_HOST: HOST,
      REDIS_PORT: String(this.port),
      ...(this.options.password ? { REDIS_PASSWORD: this.options.password } : {}),
    };
  }

  /** Starts a replica of this server and waits until replication is up. */
  async startReplica(): Promise<RedisServer> {
    const replica = await RedisServer.start({
      password: this.options.password,
      args: [
        "--replicaof",
        HOST,
        String(this.port),
        ...(this.options.password ? ["--masterauth", this.options.password] : []),
      ],
    });
    await waitFor(
      `replication to port ${replica.port}`,
      async () => (await replica.cli("INFO", "replication")).includes("master_link_status:up"),
    );
    return replica;
  }

  /** Runs a command through redis-cli. */
  cli(...args: string[]): Promise<string> {
    return redisCli(this.port, args, this.options.password);
  }

  /** SIGKILL: no shutdown, no final save. */
  async kill(): Promise<void> {
    await this.#signal("SIGKILL");
  }

  /** SIGTERM: an orderly shutdown. */
  async stop(): Promise<void> {
    await this.#signal("SIGTERM");
  }

  /** Starts it again on the same port, with the same data or (`fresh`) an empty folder. */
  async restart(options: { fresh?: boolean } = {}): Promise<void> {
    if (this.#child) await this.stop();
    if (options.fresh) {
      this.#dir = join(this.#root, `data-${++this.#generation}`);
      await Deno.mkdir(this.#dir);
    }
    await this.#spawn();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#child) await this.kill();
    await Deno.remove(this.#root, { recursive: true }).catch(() => {});
  }

  /** SIGKILL and folder removal without waiting, for `unload` handlers (benchmarks). */
  disposeSync(): void {
    try {
      this.#child?.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    this.#child = undefined;
    Deno.removeSync(this.#root, { recursive: true });
  }

  async #spawn(): Promise<void> {
    const o = this.options;
    const listen = o.tls
      ? [
        "--port",
        "0",
        "--tls-port",
        String(this.port),
        "--tls-cert-file",
        o.tls.cert,
        "--tls-key-file",
        o.tls.key,
        "--tls-auth-clients",
        "no",
      ]
      : ["--port", String(this.port)];
    const args = [
      ...listen,
      "--bind",
      HOST,
      "--dir",
      this.#dir,
      "--save",
      "",
      "--appendonly",
      o.persistence === "aof" ? "yes" : "no",
      "--appendfsync",
      "always",
      "--logfile",
      join(this.#dir, "redis.log"),
      ...(o.password ? ["--requirepass", o.password] : []),
      ...(o.args ?? []),
    ];
    this.#child = new Deno.Command("redis-server", {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const child = this.#child;
    const exited = child.status.then(() => true);
    const logFile = join(this.#dir, "redis.log");
    await waitFor(`redis-server on port ${this.port}`, async () => {
      if (await Promise.race([exited, Promise.resolve(false)])) {
        this.#child = undefined;
        if (await bindFailed(logFile)) throw new RedisPortTakenError(this.port);
        throw new Error(`redis-server exited; see ${logFile}`);
      }
      const answered = o.tls ? await this.#tlsAnswers() : await answers(this.port);
      return answered && owns(child, this.port);
    });
  }

  async #tlsAnswers(): Promise<boolean> {
    try {
      const conn = await Deno.connectTls({
        hostname: HOST,
        port: this.port,
        caCerts: [await Deno.readTextFile(this.options.tls!.cert)],
      });
      conn.close();
      return true;
    } catch {
      return false;
    }
  }

  async #signal(signal: Deno.Signal): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = undefined;
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
    await child.status;
  }
}

/** A Redis Sentinel watching one master. */
export class RedisSentinel {
  readonly host = HOST;
  readonly port: number;
  readonly masterName: string;
  #child: Deno.ChildProcess;
  #dir: string;

  private constructor(port: number, name: string, child: Deno.ChildProcess, dir: string) {
    this.port = port;
    this.masterName = name;
    this.#child = child;
    this.#dir = dir;
  }

  /** Starts a sentinel monitoring `master` as `name` and waits until it knows it. */
  static start(master: RedisServer, name = "mymaster"): Promise<RedisSentinel> {
    return onFreePort((port) => RedisSentinel.#startOn(port, master, name));
  }

  static async #startOn(port: number, master: RedisServer, name: string): Promise<RedisSentinel> {
    const dir = await Deno.makeTempDir({ prefix: "patchbay-sentinel-" });
    const conf = join(dir, "sentinel.conf");
    const password = master.options.password;
    await Deno.writeTextFile(
      conf,
      [
        `port ${port}`,
        `bind ${HOST}`,
        `dir ${dir}`,
        `logfile ${join(dir, "sentinel.log")}`,
        `sentinel monitor ${name} ${HOST} ${master.port} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        ...(password ? [`sentinel auth-pass ${name} ${password}`] : []),
        "",
      ].join("\n"),
    );
    const child = new Deno.Command("redis-server", {
      args: [conf, "--sentinel"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const sentinel = new RedisSentinel(port, name, child, dir);
    const exited = child.status.then(() => true);
    try {
      await waitFor(`sentinel on port ${port}`, async () => {
        if (await Promise.race([exited, Promise.resolve(false)])) {
          if (await bindFailed(join(dir, "sentinel.log"))) {
            throw new RedisPortTakenError(port, "redis-sentinel");
          }
          throw new Error(`redis-sentinel exited; see ${join(dir, "sentinel.log")}`);
        }
        if (!(await answers(port)) || !owns(child, port)) return false;
        const reply = await redisCli(port, ["SENTINEL", "get-master-addr-by-name", name]);
        return reply.includes(String(master.port));
      });
    } catch (error) {
      await sentinel[Symbol.asyncDispose]();
      throw error;
    }
    return sentinel;
  }

  /** Waits until the sentinel has connected to `replica` and found it in sync. */
  async awaitReplica(replica: RedisServer): Promise<void> {
    await waitFor(`sentinel to accept port ${replica.port} as a replica`, async () => {
      const reply = await redisCli(this.port, ["SENTINEL", "replicas", this.masterName]);
      const fields = reply.split("\n");
      const value = (name: string) => fields[fields.indexOf(name) + 1];
      return value("port") === String(replica.port) && value("flags") === "slave" &&
        value("master-link-status") === "ok";
    });
  }

  /** Waits until the sentinel names `server` as the master (after a failover). */
  async awaitMaster(server: RedisServer): Promise<void> {
    await waitFor(`failover to port ${server.port}`, async () => {
      const reply = await redisCli(this.port, [
        "SENTINEL",
        "get-master-addr-by-name",
        this.masterName,
      ]);
      return reply.split("\n")[1] === String(server.port) &&
        (await server.cli("ROLE")).startsWith("master");
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.#child.status;
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}

/** A Redis Cluster of masters without replicas. */
export class RedisCluster {
  readonly nodes: RedisServer[];

  private constructor(nodes: RedisServer[]) {
    this.nodes = nodes;
  }

  /** Starts `size` cluster-enabled servers and joins them into one cluster. */
  static async start(size = 3): Promise<RedisCluster> {
    const nodes: RedisServer[] = [];
    const cluster = new RedisCluster(nodes);
    try {
      for (let i = 0; i < size; i++) {
        nodes.push(
          await RedisServer.startClusterNode({
            args: [
              "--cluster-enabled",
              "yes",
              "--cluster-config-file",
              "nodes.conf",
              "--cluster-node-timeout",
              "2000",
            ],
          }),
        );
      }
      const { code, stderr, stdout } = await new Deno.Command("redis-cli", {
        args: [
          "--cluster",
          "create",
          ...nodes.map((n) => `${HOST}:${n.port}`),
          "--cluster-replicas",
          "0",
          "--cluster-yes",
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (code !== 0) {
        throw new Error(
          `cluster create failed: ${decoder.decode(stdout)}${decoder.decode(stderr)}`,
        );
      }
      await waitFor("cluster_state:ok on every node", async () => {
        for (const node of nodes) {
          if (!(await node.cli("CLUSTER", "INFO")).includes("cluster_state:ok")) return false;
        }
        return true;
      });
    } catch (error) {
      await cluster[Symbol.asyncDispose]();
      throw error;
    }
    return cluster;
  }

  /** `host:port` of every node, for Memory.cluster_nodes. */
  get addresses(): string[] {
    return this.nodes.map((n) => `${HOST}:${n.port}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const node of this.nodes) await node[Symbol.asyncDispose]();
  }
}

/**
 * A loopback relay in front of a real server that records round trips: each time the
 * client sends after the server last answered (or sends first), it waited for an answer
 * before going on, which starts a round trip. Commands pipelined together share one.
 */
export class RoundTripRelay {
  readonly port: number;
  /** What the client sent in each round trip, as received (one byte per character). */
  #wire: string[] = [];
  #listener: Deno.TcpListener;
  #conns: Deno.TcpConn[] = [];
  #pumps: Promise<void>[] = [];
  #accepting: Promise<void>;

  constructor(targetPort: number) {
    this.#listener = Deno.listen({ hostname: HOST, port: 0 });
    this.port = (this.#listener.addr as Deno.NetAddr).port;
    const listener = this.#listener;
    this.#accepting = (async () => {
      try {
        for await (const client of listener) {
          const server = await Deno.connect({ hostname: HOST, port: targetPort });
          this.#conns.push(client, server);
          const turn: Turn = { last: "server", trip: -1 };
          this.#pumps.push(this.#pump(client, server, "client", turn));
          this.#pumps.push(this.#pump(server, client, "server", turn));
        }
      } catch {
        // Closed.
      }
    })();
  }

  /** The commands (lower-case names) the client sent in each round trip so far. */
  get trips(): string[][] {
    return this.#wire.map(commandNames);
  }

  async #pump(from: Deno.TcpConn, to: Deno.TcpConn, side: Turn["last"], turn: Turn) {
    const buffer = new Uint8Array(64 * 1024);
    const latin1 = new TextDecoder("latin1");
    try {
      for (let n = await from.read(buffer); n !== null; n = await from.read(buffer)) {
        if (side === "client") {
          if (turn.last === "server") turn.trip = this.#wire.push("") - 1;
          this.#wire[turn.trip] += latin1.decode(buffer.subarray(0, n));
        }
        turn.last = side;
        let written = 0;
        while (written < n) written += await to.write(buffer.subarray(written, n));
      }
    } catch {
      // One side went away; the other is closed below.
    }
    // Passes the end on; the other side may be closed already.
    await to.closeWrite().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#listener.close();
    await this.#accepting;
    for (const conn of this.#conns) {
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    }
    await Promise.all(this.#pumps);
  }
}

/** Who spoke last on a relayed connection, and the round trip the client is in. */
interface Turn {
  last: "client" | "server";
  trip: number;
}

/** The command names in RESP requests (arrays of bulk strings), in order. */
function commandNames(wire: string): string[] {
  const names: string[] = [];
  let at = 0;
  const line = () => {
    const end = wire.indexOf("\r\n", at);
    const text = wire.slice(at, end);
    at = end + 2;
    return text;
  };
  while (at < wire.length) {
    const count = Number(line().slice(1));
    for (let i = 0; i < count; i++) {
      const size = Number(line().slice(1));
      if (i === 0) names.push(wire.slice(at, at + size).toLowerCase());
      at += size + 2;
    }
  }
  return names;
}
