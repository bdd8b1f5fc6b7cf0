/**
 * The shape of the project's module graph, as `deno info --json` reports it: no import
 * cycle among the project's own modules (a module in a cycle is evaluated before the
 * modules it needs, and no part of a cycle can be understood or moved alone), and
 * lib/permissions/ at the top of the house only: the launcher and the plan sit above the
 * leaves every other module may use (reading a Deno denial and its remedy, and the shape in
 * which each subsystem declares what it needs for the plan to collect, `lib/deno_permission/`;
 * exit codes, `lib/exit_codes.ts`).
 *
 * Every import counts: static and dynamic, type-only too (a type-only cycle is a knot to
 * a reader all the same).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TEST_LOCK } from "../../scripts/run_tests.ts";
import { DENO } from "../support/deps.ts";
import { tempDir } from "../support/temp_dir.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The folders and entry points whose modules are the project's own. */
const PROJECT = ["lib", "commands", "tests", "bench", "scripts", "main.ts", "launch.ts"];

/** Every project module (path relative to the root) and the project modules it imports. */
type Graph = Map<string, string[]>;

async function projectFiles(): Promise<string[]> {
  const files: string[] = [];
  const walk = async (path: string) => {
    const info = await Deno.stat(path);
    if (info.isFile) {
      if (path.endsWith(".ts")) files.push(path);
      return;
    }
    for await (const entry of Deno.readDir(path)) await walk(join(path, entry.name));
  };
  for (const part of PROJECT) await walk(join(ROOT, part));
  return files.sort();
}

/** The graph of every project module, read by one `deno info` over a module importing all. */
async function moduleGraph(): Promise<Graph> {
  await using dir = await tempDir("patchbay-graph-");
  const files = await projectFiles();
  const entry = join(dir.path, "all.ts");
  await Deno.writeTextFile(
    entry,
    files.map((file) => `import "${pathToFileURL(file).href}";\n`).join(""),
  );
  const { code, stdout, stderr } = await new Deno.Command(DENO, {
    // The tests' own lock: the graph holds the packages only tests use (deno.lock must not).
    args: ["info", "--json", "--config", join(ROOT, "deno.json"), `--lock=${TEST_LOCK}`, entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, `deno info failed: ${new TextDecoder().decode(stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
    }[];
  };
  const own = (specifier: string | undefined) =>
    specifier?.startsWith("file://") && fileURLToPath(specifier).startsWith(ROOT)
      ? relative(ROOT, fileURLToPath(specifier))
      : undefined;
  const graph: Graph = new Map();
  for (const module of info.modules) {
    const from = own(module.specifier);
    if (!from) continue;
    const targets = new Set<string>();
    for (const dependency of module.dependencies ?? []) {
      for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
        const to = own(target);
        if (to) targets.add(to);
      }
    }
    graph.set(from, [...targets]);
  }
  assert.ok(graph.size >= files.length, `deno info saw ${graph.size} of ${files.length} modules`);
  return graph;
}

/** The strongly connected components of `graph` with a cycle in them (Tarjan's algorithm). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string) => {
    index.set(module, next);
    low.set(module, next++);
    stack.push(module);
    onStack.add(module);
    for (const target of graph.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(module, Math.min(low.get(module)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(module, Math.min(low.get(module)!, index.get(target)!));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || graph.get(module)!.includes(module)) found.push(component.sort());
  };
  for (const module of graph.keys()) if (!index.has(module)) visit(module);
  return found;
}

/** Everything `from` imports, directly or not. */
function reachable(graph: Graph, from: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...from];
  while (queue.length > 0) {
    for (const target of graph.get(queue.pop()!) ?? []) {
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return seen;
}

/** Which modules of the program (not tests, benchmarks or scripts) import `module`. */
function importersOf(graph: Graph, module: string): string[] {
  const program = (m: string) => !/^(tests|bench|scripts)\//.test(m);
  return [...graph].filter(([from, targets]) => program(from) && targets.includes(module))
    .map(([from]) => from).sort();
}

const graph = await moduleGraph();

Deno.test("the cycle finder finds a cycle, and the project has none among its modules", () => {
  // The finder itself, on a graph with one knot of three and a loop on itself.
  const knot: Graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts", "d.ts"]],
    ["c.ts", ["a.ts"]],
    ["d.ts", []],
    ["e.ts", ["e.ts"]],
  ]);
  assert.deepEqual(cycles(knot), [["a.ts", "b.ts", "c.ts"], ["e.ts"]]);

  const found = cycles(graph);
  assert.deepEqual(found, [], found.map((c) => `cycle: ${c.join(" <-> ")}`).join("\n"));
});

Deno.test("lib/permissions/ is the top of the house: nothing it builds on imports it back", () => {
  const permissions = [...graph.keys()].filter((m) => m.startsWith("lib/permissions/"));
  assert.ok(permissions.includes("lib/permissions/plan.ts"), permissions.join(", "));
  const below = [...reachable(graph, permissions)].filter((m) => !m.startsWith("lib/permissions/"));
  const back = below.flatMap((module) =>
    graph.get(module)!.filter((t) => t.startsWith("lib/permissions/")).map((t) =>
      `${module} -> ${t}`
    )
  );
  assert.deepEqual(back, []);
});

Deno.test("only the launcher's path imports the launcher; only what computes a plan imports the plan", () => {
  assert.deepEqual(importersOf(graph, "lib/permissions/launcher.ts"), ["launch.ts"]);
  // `patchbay permissions`, the doctor's permission check and `/refresh` compute the plan;
  // lib/permissions/ reads its types. Nothing else in lib/ or commands/ depends on it.
  const planUsers = importersOf(graph, "lib/permissions/plan.ts").filter((m) =>
    !m.startsWith("lib/permissions/")
  );
  assert.deepEqual(planUsers, [
    "commands/permissions.ts",
    "lib/doctor/permission_check.ts",
    "lib/doctor/run.ts",
    "lib/repl/reload.ts",
  ]);
});

Deno.test("the leaves stay leaves: denial, remedy, refused grants and exit codes import nothing above them", () => {
  const leaves = [...graph.keys()].filter((m) =>
    m.startsWith("lib/deno_permission/") || m === "lib/exit_codes.ts"
  );
  assert.ok(leaves.includes("lib/deno_permission/remedy.ts"), leaves.join(", "));
  const allowed = (m: string) => m.startsWith("lib/deno_permission/") || m === "lib/cause_chain.ts";
  const above = leaves.flatMap((leaf) =>
    [...reachable(graph, [leaf])].filter((m) => !allowed(m)).map((m) => `${leaf} -> ${m}`)
  );
  assert.deepEqual(above, []);
  assert.deepEqual(graph.get("lib/exit_codes.ts"), []);
});

Deno.test("the REPL is a room of its own: only the chat command's path imports lib/repl/", () => {
  // The session core (lib/session/) and the terminal and output (lib/terminal/, lib/ui/) are
  // what the REPL and the scripting commands share; a change to the interactive client must
  // not reach `patchbay run` or `call` through an arrow running back up into lib/repl/.
  const starters = new Set(["commands/chat.ts", "main.ts", "launch.ts"]);
  const program = [...graph.keys()].filter((m) => /^(lib|commands)\/|^(main|launch)\.ts$/.test(m));
  const intoRepl = program.filter((m) => !m.startsWith("lib/repl/") && !starters.has(m))
    .flatMap((m) =>
      graph.get(m)!.filter((t) => t.startsWith("lib/repl/")).map((t) => `${m} -> ${t}`)
    );
  assert.deepEqual(intoRepl, []);
  // The REPL is in the graph at all, and the chat command does start it: the rule has teeth.
  assert.ok(graph.get("commands/chat.ts")!.some((t) => t.startsWith("lib/repl/")));
  const uiIntoRepl = [...graph].filter(([m]) => m.startsWith("lib/ui/"))
    .flatMap(([m, targets]) =>
      targets.filter((t) => t.startsWith("lib/repl/")).map((t) => `${m} -> ${t}`)
    );
  assert.deepEqual(uiIntoRepl, []);
});

/** How many modules the lib root may hold: only leaves shared across the house stay there. */
const LIB_ROOT_MODULES_MAX = 15;

Deno.test(`the lib root holds at most ${LIB_ROOT_MODULES_MAX} shared leaves; the rest live in rooms`, async () => {
  const root: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, "lib"))) {
    if (entry.isFile && entry.name.endsWith(".ts")) root.push(entry.name);
  }
  assert.ok(root.length > 0, "lib/ holds no module at its root: is ROOT right?");
  assert.ok(
    root.length <= LIB_ROOT_MODULES_MAX,
    `lib/ holds ${root.length} modules at its root (at most ${LIB_ROOT_MODULES_MAX}): ` +
      `${root.sort().join(", ")}; give the new one a folder that says what it is for`,
  );
});
