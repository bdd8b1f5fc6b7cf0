/**
 * Several configuration files read as one, as Claude Code and gemini-cli read theirs: the
 * user's (`~/.config/patchbay/servers_config.json`), then the project's
 * (`./servers_config.json`), then the `settings` the administrator's policy forces; each
 * later layer wins. The rules, block by block (docs/configuration.md, "Scopes"):
 *
 * - `mcpServers`: entries are added by name; a later layer's entry replaces an earlier one
 *   of the same name whole (said in a notice, `replaced`), never field by field, so an
 *   entry is always one file's.
 * - `LLM`: field by field, except that a later layer naming another `provider` replaces the
 *   block whole (an address, deployment or key of one provider means nothing to another).
 * - {@linkcode LIST_BLOCKS} (`Hooks`): field by field, and where both layers have a list,
 *   the later layer's items are added after the earlier's (a policy's hooks run besides the
 *   user's, not instead).
 * - every other block (`AgentConfig`, `Memory`, `Trace`, blocks to come): field by field,
 *   objects within merged the same way, lists and values replaced.
 *
 * Merged as written (JSON, before validation), so the one validator judges the result and
 * a block this module has never heard of merges too. Each part of the result remembers
 * the file and the path it was written at ({@linkcode Merged.origins}): a problem in the
 * merged configuration points at its own file, line and column.
 *
 * @module
 */

import type { DuplicateKey, JsonParseResult, JsonValue } from "./json.ts";
import { pathKey } from "./json.ts";
import type { FieldLocator, FieldPath } from "./problem_list.ts";
import type { ConfigScope } from "./types.ts";

/** Blocks whose lists are added together rather than replaced. */
export const LIST_BLOCKS: ReadonlySet<string> = new Set(["Hooks"]);

/** One layer of configuration, lowest precedence first. */
export interface Layer {
  file: string;
  scope: ConfigScope;
  /** The configuration object: a file's top level, or the policy's `settings`. */
  value: Record<string, JsonValue>;
  /** Where {@linkcode value} is in its file: `[]`, or `["settings"]` in the policy file. */
  at: FieldPath;
  parsed: JsonParseResult;
}

/** Where a part of the merged configuration was written: its layer and path there. */
export interface Origin {
  layer: number;
  /** The path in the layer's file (its `at` included). */
  path: FieldPath;
}

/** An `mcpServers` entry a later layer replaced. */
export interface Replaced {
  name: string;
  /** The layer whose entry was replaced. */
  from: number;
  /** The layer whose entry replaced it. */
  by: number;
}

/** The merged configuration and where each part of it comes from. */
export interface Merged {
  value: Record<string, JsonValue>;
  layers: readonly Layer[];
  /** By merged path: the origin of each part taken whole from a layer, or merged last by one. */
  origins: Map<string, Origin>;
  replaced: Replaced[];
}

/**
 * Merges `layers` by the rules above. `root` is the layer the configuration as a whole is
 * said to be in (a section missing from every file is reported there): the last
 * configuration file, not the policy's settings.
 */
export function mergeLayers(layers: readonly Layer[], root = layers.length - 1): Merged {
  const merged: Merged = { value: {}, layers, origins: new Map(), replaced: [] };
  if (layers.length > 0) merged.origins.set(pathKey([]), { layer: root, path: layers[root].at });
  layers.forEach((layer, index) => {
    for (const [block, value] of Object.entries(layer.value)) {
      if (block === "$schema") continue;
      mergeBlock(merged, index, block, value);
    }
  });
  return merged;
}

function mergeBlock(merged: Merged, layer: number, block: string, value: JsonValue): void {
  const current = merged.value[block];
  const path = [block];
  if (!isObject(value) || !isObject(current)) return take(merged, layer, path, value);
  if (block === "mcpServers") {
    explode(merged, path, current);
    for (const [name, entry] of Object.entries(value)) {
      const before = Object.hasOwn(current, name) ? origin(merged, [block, name]) : undefined;
      if (before && before.layer !== layer) {
        merged.replaced.push({ name, from: before.layer, by: layer });
      }
      setTaken(merged, layer, [block, name], current, name, entry);
    }
    merged.origins.set(pathKey(path), { layer, path: [...merged.layers[layer].at, block] });
    return;
  }
  if (
    block === "LLM" && typeof value.provider === "string" && typeof current.provider === "string" &&
    value.provider !== current.provider
  ) {
    return take(merged, layer, path, value);
  }
  mergeObject(merged, layer, path, current, value, LIST_BLOCKS.has(block));
}

/** Merges `source` (of `layer`, at merged `path`) into `target`, field by field. */
function mergeObject(
  merged: Merged,
  layer: number,
  path: FieldPath,
  target: Record<string, JsonValue>,
  source: Record<string, JsonValue>,
  addLists: boolean,
): void {
  explode(merged, path, target);
  const at = merged.layers[layer].at;
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    const inner = [...path, key];
    if (isObject(current) && isObject(value)) {
      mergeObject(merged, layer, inner, current, value, addLists);
    } else if (addLists && Array.isArray(current) && Array.isArray(value)) {
      explode(merged, inner, current);
      value.forEach((item, i) => {
        merged.origins.set(pathKey([...inner, current.length]), {
          layer,
          path: [...at, ...inner, i],
        });
        current.push(structuredClone(item));
      });
      merged.origins.set(pathKey(inner), { layer, path: [...at, ...inner] });
    } else {
      setTaken(merged, layer, inner, target, key, value);
    }
  }
  merged.origins.set(pathKey(path), { layer, path: [...at, ...path] });
}

/** The whole block at `path` (one key deep) becomes `layer`'s `value`. */
function take(merged: Merged, layer: number, path: FieldPath, value: JsonValue): void {
  setTaken(merged, layer, path, merged.value, String(path[0]), value);
}

/** `target[key]` (at merged `path`) becomes `layer`'s `value`, whose origin it remembers. */
function setTaken(
  merged: Merged,
  layer: number,
  path: FieldPath,
  target: Record<string, JsonValue>,
  key: string,
  value: JsonValue,
): void {
  target[key] = structuredClone(value);
  forgetBelow(merged, path);
  merged.origins.set(pathKey(path), { layer, path: [...merged.layers[layer].at, ...path] });
}

/**
 * Records where each member of `container` (at `path`) comes from before a later layer
 * changes it: their origin so far was the container's, which is about to be the later one.
 */
function explode(
  merged: Merged,
  path: FieldPath,
  container: Record<string, JsonValue> | JsonValue[],
): void {
  const keys = Array.isArray(container) ? container.map((_, i) => i) : Object.keys(container);
  for (const key of keys) {
    const inner = [...path, key];
    if (!merged.origins.has(pathKey(inner))) {
      const found = origin(merged, inner);
      if (found) merged.origins.set(pathKey(inner), found);
    }
  }
}

/** Forgets the origins recorded below `path`, whose value was just replaced. */
function forgetBelow(merged: Merged, path: FieldPath): void {
  // `["a","b"]` is below `["a"]` when it starts `["a",` (a key of the same prefix, `["ab"]`
  // or `["a1"]`, does not).
  const below = `${pathKey(path).slice(0, -1)},`;
  for (const key of [...merged.origins.keys()]) {
    if (key.startsWith(below)) merged.origins.delete(key);
  }
}

/** Where the merged `path` was written: its deepest recorded part, and the rest below it. */
export function origin(merged: Merged, path: FieldPath): Origin | undefined {
  for (let i = path.length; i >= 0; i--) {
    const found = merged.origins.get(pathKey(path.slice(0, i)));
    if (found) return { layer: found.layer, path: [...found.path, ...path.slice(i)] };
  }
  return undefined;
}

/** Positions and files of the merged configuration's fields, in the files they come from. */
export function mergedLocator(merged: Merged): FieldLocator {
  const find = (path: FieldPath) => {
    const found = origin(merged, path);
    return found && { layer: merged.layers[found.layer], key: pathKey(found.path) };
  };
  return {
    value: (path) => {
      const found = find(path);
      return found?.layer.parsed.valuePositions.get(found.key);
    },
    key: (path) => {
      const found = find(path);
      return found?.layer.parsed.keyPositions.get(found.key);
    },
    file: (path) => find(path)?.layer.file,
  };
}

/** The layers' duplicate keys within what each contributes, with the file of each. */
export function layerDuplicates(
  layers: readonly Layer[],
): (DuplicateKey & { file: string })[] {
  return layers.flatMap((layer) =>
    layer.parsed.duplicates
      .filter((duplicate) => startsWith([...duplicate.path, duplicate.key], layer.at))
      .map((duplicate) => ({ ...duplicate, file: layer.file }))
  );
}

function startsWith(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.every((part, i) => path[i] === part) && path.length > prefix.length;
}

function isObject(value: JsonValue | undefined): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
