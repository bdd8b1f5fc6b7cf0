/**
 * The images folder (lib/agent/image_store.ts): named by content under the folder whatever
 * type a server names, and bounded in size, the oldest images removed first.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { saveImage } from "../../lib/agent/image_store.ts";
import { tempDir } from "../support/temp_dir.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

Deno.test("a type naming another folder is saved as .bin inside the images folder", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = await saveImage("image/../../x.sh", b64(new Uint8Array([1, 2, 3])), { dir });
  assert.equal(join(dir, path.slice(dir.length + 1)), path);
  assert.match(path.slice(dir.length + 1), /^[0-9a-f]{24}\.bin$/);
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("the images folder keeps at most its bound: the oldest go first, the newest stays", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const paths: string[] = [];
  for (let i = 0; i < 6; i++) {
    const bytes = new Uint8Array(1000).fill(i);
    paths.push(await saveImage("image/png", b64(bytes), { dir, maxFolderBytes: 3500 }));
    // Distinct times, so "oldest" is well defined on coarse clocks.
    await Deno.utime(paths[i], i + 1, i + 1);
  }
  const left = [...Deno.readDirSync(dir)].map((e) => join(dir, e.name)).sort();
  assert.deepEqual(left, paths.slice(3).sort());
});
