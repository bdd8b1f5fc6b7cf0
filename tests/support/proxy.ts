/**
 * A tiny HTTP proxy on loopback for tests: answers `CONNECT` (tunnels) and absolute-form
 * requests (forwarding), records the first request line of every connection, and only ever
 * connects onward to 127.0.0.1, so that no test traffic leaves the machine. A request for
 * any other host is refused with 403 after it has been recorded.
 *
 * A forwarded request gets `Connection: close` on its way on, so each one has its own
 * connection (and its own recorded line); a tunnel carries whatever the client sends.
 * `routes` stand in for a network only the proxy reaches: a request for one of their
 * addresses goes to another port on 127.0.0.1 instead. A route may name a host that does
 * not exist (`mcp.example.test:443`): the proxy then stands in for the internet, and a
 * loopback server for a remote one.
 *
 * @module
 */

/** Options of {@linkcode startTestProxy}. */
export interface TestProxyOptions {
  /**
   * `"<host>:<port>"` as requested → the port on 127.0.0.1 the proxy really connects to:
   * a server reachable only through the proxy (`127.0.0.1:<port>`), or one standing in
   * for a remote host (`mcp.example.test:443`).
   */
  routes?: Readonly<Record<string, number>>;
  /**
   * Answers every request itself with this status line (e.g. `407 Proxy Authentication
   * Required`, `502 Bad Gateway`) instead of forwarding it: a proxy that refuses.
   */
  answerAll?: string;
}

/** A running proxy. */
export interface TestProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** First request line of each connection, e.g. `CONNECT api.openai.com:443 HTTP/1.1`. */
  readonly requestLines: string[];
  /** `Proxy-Authorization` header values seen. */
  readonly authorizations: string[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const HEAD_END = new TextEncoder().encode("\r\n\r\n");

/** Starts the proxy on 127.0.0.1, port chosen by the system. */
export function startTestProxy(options: TestProxyOptions = {}): TestProxy {
  const routes = options.routes ?? {};
  const onward = (host: string, port: number) => routes[`${host}:${port}`] ?? port;
  const reachable = (host: string, port: number) =>
    host === "127.0.0.1" || routes[`${host}:${port}`] !== undefined;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const requestLines: string[] = [];
  const authorizations: string[] = [];
  const open = new Set<Deno.Conn>();
  const tasks = new Set<Promise<void>>();

  const serve = async () => {
    for await (const conn of listener) {
      open.add(conn);
      const task = handle(conn).catch(() => {}).finally(() => {
        open.delete(conn);
        try {
          conn.close();
        } catch { /* already closed */ }
      });
      tasks.add(task);
      task.finally(() => tasks.delete(task));
    }
  };

  const handle = async (client: Deno.Conn) => {
    const { head, rest } = await readHead(client);
    const lines = new TextDecoder().decode(head).split("\r\n");
    const [method, target] = lines[0].split(" ");
    requestLines.push(lines[0]);
    const auth = lines.find((l) => /^proxy-authorization:/i.test(l));
    if (auth) authorizations.push(auth.slice(auth.indexOf(":") + 1).trim());
    const encoder = new TextEncoder();
    if (options.answerAll) {
      await client.write(
        encoder.encode(
          `HTTP/1.1 ${options.answerAll}\r\nproxy-authenticate: Basic realm="test"\r\n` +
            "content-length: 0\r\nconnection: close\r\n\r\n",
        ),
      );
      return;
    }
    if (method === "CONNECT") {
      const [host, port] = target.split(":");
      if (!reachable(host, Number(port))) {
        await client.write(encoder.encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"));
        return;
      }
      const upstream = await Deno.connect({
        hostname: "127.0.0.1",
        port: onward(host, Number(port)),
      });
      open.add(upstream);
      await client.write(encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      if (rest.length > 0) await upstream.write(rest);
      await pipeBoth(client, upstream);
      return;
    }
    const url = new URL(target);
    if (!reachable(url.hostname, Number(url.port || 80))) {
      await client.write(encoder.encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"));
      return;
    }
    const upstream = await Deno.connect({
      hostname: "127.0.0.1",
      port: onward(url.hostname, Number(url.port || 80)),
    });
    open.add(upstream);
    // The head ends with an empty line; the connection header goes in before it.
    const headers = lines.slice(1, -2).filter((l) => !/^(?:proxy-|connection:)/i.test(l));
    const forwarded = [`${method} ${url.pathname}${url.search} ${lines[0].split(" ")[2]}`]
      .concat(headers, "Connection: close", "", "")
      .join("\r\n");
    await upstream.write(encoder.encode(forwarded));
    if (rest.length > 0) await upstream.write(rest);
    // The rest of the request body flows on while the answer is awaited.
    const sending = copy(client, upstream);
    // The client must not send a second request on this connection (it would reach the
    // server unrecorded, in absolute form): the answer says the connection closes.
    const answer = await readHead(upstream);
    const answerLines = new TextDecoder().decode(answer.head).split("\r\n");
    const answerHead = [answerLines[0]]
      .concat(answerLines.slice(1, -2).filter((l) => !/^(?:connection|keep-alive):/i.test(l)))
      .concat("Connection: close", "", "")
      .join("\r\n");
    await client.write(encoder.encode(answerHead));
    if (answer.rest.length > 0) await client.write(answer.rest);
    await copy(upstream, client);
    end(upstream);
    end(client);
    await sending;
  };

  const copy = async (from: Deno.Conn, to: Deno.Conn) => {
    const buffer = new Uint8Array(16 * 1024);
    try {
      while (true) {
        const n = await from.read(buffer);
        if (n === null) break;
        await to.write(buffer.subarray(0, n));
      }
    } catch { /* the other side went away */ }
    try {
      await to.closeWrite();
    } catch { /* already closed */ }
  };

  const end = (conn: Deno.Conn) => {
    open.delete(conn);
    try {
      conn.close();
    } catch { /* already closed */ }
  };

  const pipeBoth = async (a: Deno.Conn, b: Deno.Conn) => {
    await Promise.all([copy(a, b), copy(b, a)]);
    end(b);
  };

  const serving = serve().catch(() => {});
  const close = async () => {
    listener.close();
    for (const conn of open) {
      try {
        conn.close();
      } catch { /* already closed */ }
    }
    await Promise.allSettled([...tasks]);
    await serving;
  };
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    requestLines,
    authorizations,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Reads up to the blank line ending the request head; returns the head and what followed. */
async function readHead(conn: Deno.Conn): Promise<{ head: Uint8Array; rest: Uint8Array }> {
  let data = new Uint8Array(0);
  const buffer = new Uint8Array(8192);
  while (true) {
    const end = indexOf(data, HEAD_END);
    if (end >= 0) {
      return { head: data.subarray(0, end + 4), rest: data.subarray(end + 4) };
    }
    const n = await conn.read(buffer);
    if (n === null) throw new Error("connection closed before the request head ended");
    const next = new Uint8Array(data.length + n);
    next.set(data);
    next.set(buffer.subarray(0, n), data.length);
    data = next;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
