/**
 * A tiny HTTP proxy on loopback for tests: answers `CONNECT` (tunnels) and absolute-form
 * requests (forwarding), records the first request line of every connection, and only ever
 * connects onward to 127.0.0.1, so that no test traffic leaves the machine. A request for
 * any other host is refused with 403 after it has been recorded.
 *
 * @module
 */

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
export function startTestProxy(): TestProxy {
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
    if (method === "CONNECT") {
      const [host, port] = target.split(":");
      if (host !== "127.0.0.1") {
        await client.write(encoder.encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"));
        return;
      }
      const upstream = await Deno.connect({ hostname: host, port: Number(port) });
      open.add(upstream);
      await client.write(encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      if (rest.length > 0) await upstream.write(rest);
      await pipeBoth(client, upstream);
      return;
    }
    const url = new URL(target);
    if (url.hostname !== "127.0.0.1") {
      await client.write(encoder.encode("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"));
      return;
    }
    const upstream = await Deno.connect({ hostname: url.hostname, port: Number(url.port || 80) });
    open.add(upstream);
    const forwarded = [`${method} ${url.pathname}${url.search} ${lines[0].split(" ")[2]}`]
      .concat(lines.slice(1).filter((l) => !/^proxy-/i.test(l)))
      .join("\r\n");
    await upstream.write(encoder.encode(forwarded));
    if (rest.length > 0) await upstream.write(rest);
    await pipeBoth(client, upstream);
  };

  const pipeBoth = async (a: Deno.Conn, b: Deno.Conn) => {
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
    await Promise.all([copy(a, b), copy(b, a)]);
    open.delete(b);
    try {
      b.close();
    } catch { /* already closed */ }
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
