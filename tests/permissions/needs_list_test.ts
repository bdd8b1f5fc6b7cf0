/**
 * The permission plan collects every subsystem's declaration of its needs: each function
 * named `…Needs` that a folder's `needs.ts` exports is in the plan's one list (`NEEDS`),
 * and the list holds nothing else but patchbay's own needs, defined beside it. A subsystem
 * that declares a need the plan never calls would run under flags that lack it.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { NEEDS } from "../../lib/permissions/plan.ts";

const LIB = fileURLToPath(new URL("../../lib/", import.meta.url));

/** The leaf with the shape of a declaration (types and a helper), not a declaration. */
const SHAPE = "deno_permission/needs.ts";

/** What the plan needs for patchbay itself (its files and variables), defined in plan.ts. */
const OWN = ["ownFileNeeds", "folderVariableNeeds", "ownVariableNeeds"];

/** Every `needs.ts` under lib/, relative to it. */
async function needsModules(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name === "needs.ts") found.push(relative(LIB, path));
    }
  };
  await walk(LIB);
  return found.sort();
}

Deno.test("the plan's list holds every declaration of needs found in a folder's needs.ts", async () => {
  const modules = (await needsModules()).filter((m) => m !== SHAPE);
  // The subsystems that state needs today: the list must not shrink unnoticed.
  assert.ok(modules.length >= 10, modules.join(", "));
  const listed = new Set<unknown>(NEEDS);
  const declared: string[] = [];
  for (const module of modules) {
    const exports = await import(pathToFileURL(join(LIB, module)).href) as Record<
      string,
      unknown
    >;
    const needs = Object.entries(exports).filter(([name, value]) =>
      typeof value === "function" && name.endsWith("Needs")
    );
    assert.ok(needs.length > 0, `lib/${module} declares no …Needs function`);
    for (const [name, value] of needs) {
      assert.ok(listed.has(value), `${name} (lib/${module}) is not in NEEDS (plan.ts)`);
      declared.push(name);
    }
  }
  // Nothing else in the list but patchbay's own, and each entry once.
  const others = NEEDS.map((needs) => needs.name).filter((name) => !declared.includes(name));
  assert.deepEqual(others.sort(), [...OWN].sort());
  assert.equal(new Set(NEEDS).size, NEEDS.length, "an entry of NEEDS twice");
});
