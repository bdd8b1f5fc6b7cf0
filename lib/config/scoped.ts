/**
 * The configuration in effect: the files `locateSources` names (the user's and the
 * project's, merged; or the one `--config` names), with the administrator's policy over
 * them (docs/policy.md): its `settings` merged last, then its rules applied. Every consumer
 * (start-up, `/refresh`, `config check`, the doctor, the editing commands' checks) reads the
 * configuration here, so each sees the same servers, refusals and forced settings.
 *
 * A problem is reported in the file it is written in (several files: the problems grouped
 * by file, each located in its own). A problem in the policy's `settings` stops patchbay as
 * any unusable policy does ({@linkcode PolicyInvalidError}).
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import type { Environment } from "../env.ts";
import { type ConfigProblem, ConfigValidationError, PolicyInvalidError } from "../errors.ts";
import { applyPolicy } from "../policy/apply.ts";
import { type Policy, readPolicy } from "../policy/load.ts";
import type { JsonValue } from "./json.ts";
import {
  keychainPass,
  type LoadOptions,
  parseConfig,
  parseStrict,
  readConfigText,
} from "./load.ts";
import type { ConfigSources } from "./locate.ts";
import { type Layer, layerDuplicates, mergedLocator, mergeLayers, origin } from "./merge.ts";
import { renderProblems, sortProblems } from "./problems.ts";
import type { Config, ConfigScope, ConfigSource } from "./types.ts";
import { Validator } from "./validate.ts";
import { describeType } from "./zod_issues.ts";

/** Options of {@linkcode loadScopedConfig}. */
export interface ScopedOptions {
  /**
   * The administrator's policy already read (`null`: none); read from its fixed place
   * when absent.
   */
  policy?: Policy | null;
  /** The text of a file to use instead of what is on disk (an edit checked before writing). */
  texts?: ReadonlyMap<string, string>;
  /** Reads the `${keychain:NAME}` values the files use ({@linkcode LoadOptions.keychain}). */
  keychain?: LoadOptions["keychain"];
}

/** Reads, merges and validates the configuration files of `sources` under the policy. */
export async function loadScopedConfig(
  sources: ConfigSources,
  env: Environment,
  options: ScopedOptions = {},
): Promise<Config> {
  const policy = options.policy === undefined ? await readPolicy() : options.policy ?? undefined;
  const texts: { scope: ConfigScope; path: string; text: string }[] = [];
  for (const file of sources.files) {
    const text = options.texts?.get(file.path) ?? await readConfigText(file.path);
    texts.push({ ...file, text });
  }
  const read: ConfigSource[] = [
    ...sources.files,
    ...(policy ? [{ scope: "managed" as const, path: policy.file }] : []),
  ];
  const config = await keychainPass(
    texts[0]?.text ?? "",
    sources.primary,
    env,
    options,
    (keychain) =>
      texts.length === 1 && !policy?.settings
        ? oneFile(texts[0], env, keychain)
        : merged(texts, sources.primary, env, policy, keychain),
  );
  const scoped = { ...config, file: sources.primary, sources: read };
  return policy ? applyPolicy(scoped, policy) : scoped;
}

/** One file, read as it always was; its servers are of its scope. */
function oneFile(
  file: { scope: ConfigScope; path: string; text: string },
  env: Environment,
  keychain?: (name: string) => string | undefined,
) {
  const config = parseConfig(file.text, file.path, env, keychain);
  return {
    ...config,
    servers: config.servers.map((server) => ({ ...server, scope: file.scope })),
  };
}

function merged(
  files: readonly { scope: ConfigScope; path: string; text: string }[],
  primary: string,
  env: Environment,
  policy: Policy | undefined,
  keychain?: (name: string) => string | undefined,
): Config {
  const layers: Layer[] = files.map(({ scope, path, text }) => {
    const parsed = parseStrict(text, path);
    const value = parsed.value!;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      const problem = {
        path: "",
        message: `the file must hold a JSON object, not ${describeType(value)}`,
      };
      throw new ConfigValidationError(path, [problem], renderProblems([problem], text));
    }
    return { file: path, scope, value: value as Record<string, JsonValue>, at: [], parsed };
  });
  const root = layers.length - 1;
  if (policy?.settings) {
    layers.push({
      file: policy.file,
      scope: "managed",
      value: policy.settings,
      at: ["settings"],
      parsed: policy.parsed,
    });
  }
  const result = mergeLayers(layers, root);
  const layerOf = (path: (string | number)[]) => {
    const found = origin(result, path);
    return found ? layers[found.layer] : layers[root];
  };
  const validator = new Validator(
    {
      locator: mergedLocator(result),
      duplicates: layerDuplicates(layers),
      folder: (path) => dirname(resolve(layerOf(path).file)),
      scope: (path) => origin(result, path) ? layerOf(path).scope : undefined,
    },
    primary,
    env,
    keychain,
  );
  const config = validator.run(result.value);
  if (validator.problems.length > 0 || !config) {
    throw problemsError(validator.problems, files, primary, policy);
  }
  const notices = result.replaced.map(({ name, from, by }) => {
    const winner = layers[by].scope === "managed"
      ? `the administrator's policy (${layers[by].file})`
      : `${layers[by].file} (${layers[by].scope})`;
    return `Server '${name}': the entry of ${winner} replaces the one of ${layers[from].file} ` +
      `(${layers[from].scope})`;
  });
  return { ...config, notices: [...config.notices ?? [], ...notices] };
}

/** The problems of several files, each file's shown with its own lines. */
function problemsError(
  problems: readonly ConfigProblem[],
  files: readonly { path: string; text: string }[],
  primary: string,
  policy: Policy | undefined,
): Error {
  const texts = new Map(files.map((file) => [file.path, file.text]));
  if (policy) texts.set(policy.file, policy.text);
  const sorted = sortProblems([...problems]);
  const byFile = new Map<string, ConfigProblem[]>();
  for (const problem of sorted) {
    const file = problem.file ?? primary;
    byFile.set(file, [...byFile.get(file) ?? [], problem]);
  }
  const details = [...byFile].flatMap(([file, list]) => [
    ...(byFile.size > 1 ? [`${file}:`] : []),
    ...renderProblems(list, texts.get(file) ?? ""),
  ]);
  const inPolicy = policy && byFile.get(policy.file);
  if (policy && inPolicy) {
    return new PolicyInvalidError(
      policy.file,
      `its settings are invalid: ${
        inPolicy.length === 1 ? inPolicy[0].message : `${inPolicy.length} problems`
      }`,
      details,
    );
  }
  return new ConfigValidationError([...byFile.keys()].join(" and "), sorted, details);
}
