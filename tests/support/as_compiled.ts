/**
 * Preloaded (`deno run --preload`) into `main.ts` to stand for a compiled binary, which
 * cannot be built on the test machines (`deno compile` downloads its runtime, `denort`, from
 * a host they cannot reach). It changes one thing only: `Deno.build.standalone` reads true,
 * as it does in a binary. Everything else is the real Deno; the permission flags are the
 * ones `deno task compile` bakes in (scripts/compile.ts), given by the test.
 *
 * @module
 */

const real = Deno;
const build = Object.freeze({ ...real.build, standalone: true });
// `Deno.build` is frozen, but the global `Deno` itself may be replaced: patchbay's code
// reads it through the global, Deno's own code does not.
Object.defineProperty(globalThis, "Deno", {
  value: new Proxy(real, {
    get: (target, key) => key === "build" ? build : Reflect.get(target, key),
  }),
  writable: false,
  enumerable: false,
  configurable: true,
});
