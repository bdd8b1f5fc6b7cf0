/**
 * An npm registry on loopback serving the tarballs `scripts/test_deps.ts` packed
 * (`npxTarballsDir()`, with their `index.json`): a real `npx` installs a real package from
 * it, offline, as slowly as a test wants (`tarballDelayMs`), into a cache folder of the
 * test's own.
 *
 * @module
 */

import { join } from "node:path";
import { delay } from "../../lib/async/delay.ts";
import { npxTarballsDir } from "./deps.ts";

/** One packed package, as `index.json` lists it. */
interface Packed {
  name: string;
  version: string;
  filename: string;
  integrity: string;
  shasum: string;
  dependencies: Record<string, string>;
  bin?: unknown;
  engines?: unknown;
}

/** A running registry. */
export interface NpmRegistry extends AsyncDisposable {
  /** `http://127.0.0.1:<port>/`, for `npm_config_registry`. */
  url: string;
  /** The paths asked for, in order. */
  requests: string[];
}

/** Options of {@linkcode startNpmRegistry}. */
export interface NpmRegistryOptions {
  /** Held before each tarball is sent (a slow download). @default 0 */
  tarballDelayMs?: number;
}

/** Starts the registry on a random loopback port; `await using` stops it. */
export async function startNpmRegistry(options: NpmRegistryOptions = {}): Promise<NpmRegistry> {
  const dir = npxTarballsDir();
  const index: Packed[] = JSON.parse(await Deno.readTextFile(join(dir, "index.json")));
  const requests: string[] = [];
  const closing = new AbortController();
  let url = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: closing.signal, onListen() {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      requests.push(path);
      const file = path.startsWith("/-/")
        ? index.find((p) => `/-/${p.filename}` === path)
        : undefined;
      if (file) {
        await delay(options.tarballDelayMs ?? 0, { signal: closing.signal }).catch(() => {});
        return new Response(await Deno.readFile(join(dir, file.filename)), {
          headers: { "content-type": "application/octet-stream" },
        });
      }
      const name = path.slice(1);
      const versions = index.filter((p) => p.name === name);
      if (versions.length === 0) return Response.json({ error: "Not found" }, { status: 404 });
      const packument = {
        name,
        "dist-tags": { latest: versions.at(-1)!.version },
        versions: Object.fromEntries(versions.map((p) => [p.version, {
          name: p.name,
          version: p.version,
          dependencies: p.dependencies,
          ...(p.bin ? { bin: p.bin } : {}),
          ...(p.engines ? { engines: p.engines } : {}),
          dist: { tarball: `${url}-/${p.filename}`, integrity: p.integrity, shasum: p.shasum },
        }])),
      };
      return Response.json(packument);
    },
  );
  url = `http://127.0.0.1:${server.addr.port}/`;
  return {
    url,
    requests,
    async [Symbol.asyncDispose]() {
      closing.abort();
      await server.finished;
    },
  };
}
