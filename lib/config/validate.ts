/**
 * The configuration's rules, section by section: zod checks each section's shape and
 * applies its defaults (lib/config/schema.ts), the sections' own modules add what zod
 * cannot judge alone (lib/config/llm.ts, lib/config/servers.ts), and every problem is
 * collected with its field path and position rather than stopping at the first.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";
import type { ConfigProblem } from "../errors.ts";
import { readHooks } from "./hooks.ts";
import type { DuplicateKey, JsonParseResult, JsonValue } from "./json.ts";
import { readLlm } from "./llm.ts";
import { type FieldLocator, type FieldPath, parsedLocator, ProblemList } from "./problem_list.ts";
import {
  AgentSchema,
  FileSectionsSchema,
  MemorySchema,
  TelemetrySchema,
  TraceSchema,
} from "./schema.ts";
import { readServers } from "./servers.ts";
import type { Config, ConfigScope, TelemetrySettings } from "./types.ts";
import { type BaseFolder, ConfigValues } from "./values.ts";
import { describeType, parseSection } from "./zod_issues.ts";

/**
 * A configuration made of several files (lib/config/merge.ts): where each field is written,
 * the duplicate keys of each file, the folder each relative path is taken from, and which
 * scope each server entry comes from.
 */
export interface ConfigDocument {
  locator: FieldLocator;
  duplicates: readonly (DuplicateKey & { file?: string })[];
  folder: (path: FieldPath) => string;
  scope: (path: FieldPath) => ConfigScope | undefined;
}

/** Walks the parsed file, collecting problems and building the normalized configuration. */
export class Validator {
  readonly #list: ProblemList;
  readonly #values: ConfigValues;
  readonly #document: ConfigDocument;

  constructor(
    source: JsonParseResult | ConfigDocument,
    private readonly file: string,
    env: Environment,
    /** Values of `${keychain:NAME}`; without it, references stay as written. */
    keychain?: (name: string) => string | undefined,
  ) {
    const folder = dirname(resolve(file));
    this.#document = "locator" in source ? source : {
      locator: parsedLocator(source),
      duplicates: source.duplicates,
      folder: () => folder,
      scope: () => undefined,
    };
    this.#list = new ProblemList(this.#document.locator);
    const base: BaseFolder = "locator" in source ? source.folder : folder;
    this.#values = new ConfigValues(this.#list, env, base, keychain);
  }

  /** Everything wrong with the file, in the order found. */
  get problems(): ConfigProblem[] {
    return this.#list.problems;
  }

  /** What is worth saying but does not stop the client. */
  get warnings(): ConfigProblem[] {
    return this.#list.warnings;
  }

  run(raw: JsonValue): Config | undefined {
    const problems = this.#list;
    for (const duplicate of this.#document.duplicates) {
      problems.add(
        [...duplicate.path, duplicate.key],
        `duplicate key "${duplicate.key}" (first at line ${duplicate.first.line})`,
        "a JSON reader silently keeps only the last one; remove or rename one of them",
        duplicate.second,
        duplicate.file,
      );
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      problems.add([], `the file must hold a JSON object, not ${describeType(raw)}`);
      return undefined;
    }
    // Sections are validated one by one (servers entry by entry), so one broken part
    // never hides the problems of another.
    parseSection(problems, FileSectionsSchema, raw, []);
    const reader = { problems, values: this.#values };
    const llm = "LLM" in raw ? readLlm(problems, this.#values, raw.LLM) : undefined;
    const servers = ("mcpServers" in raw ? readServers(reader, raw.mcpServers) : []).map(
      (server) => {
        const scope = this.#document.scope(["mcpServers", server.name]);
        return scope ? { ...server, scope } : server;
      },
    );
    // An absent section is an empty one: zod fills in its defaults.
    const agent = parseSection(problems, AgentSchema, orEmpty(raw.AgentConfig), ["AgentConfig"]);
    const memory = parseSection(problems, MemorySchema, orEmpty(raw.Memory), ["Memory"]);
    const trace = raw.Trace === undefined
      ? undefined
      : parseSection(problems, TraceSchema, raw.Trace, ["Trace"]);
    // Hooks run in the folder of the file that declares them (scopes: docs/configuration.md).
    const folder = this.#document.folder(["Hooks"]);
    const hooks = raw.Hooks === undefined
      ? undefined
      : readHooks(reader, raw.Hooks, { folder, file: resolve(this.file) });
    const telemetry = raw.Telemetry === undefined
      ? undefined
      : this.#telemetry(parseSection(problems, TelemetrySchema, raw.Telemetry, ["Telemetry"]));
    if (problems.problems.length > 0 || !llm || !agent || !memory) return undefined;
    return {
      file: this.file,
      llm,
      servers,
      agent: {
        toolCallTimeoutSeconds: agent.tool_call_timeout,
        connectWaitSeconds: agent.connect_wait,
        maxSteps: agent.max_steps,
        requestLimit: agent.request_limit ?? DEFAULTS.agent.requestLimit,
        totalTokensLimit: agent.total_tokens_limit ?? DEFAULTS.agent.totalTokensLimit,
        toolSearch: {
          mode: agent.tool_search.mode,
          maxTools: agent.tool_search.max_tools,
          maxTokens: agent.tool_search.max_tokens,
        },
        samplingRequestLimit: agent.sampling_request_limit,
        samplingPerToolCall: agent.sampling_per_tool_call,
      },
      memory: {
        backend: memory.backend,
        ttlSeconds: memory.ttl_seconds ?? DEFAULTS.memory.ttlSeconds,
        keyPrefix: memory.key_prefix,
        sentinels: memory.sentinels,
        sentinelName: memory.sentinel_name,
        clusterNodes: memory.cluster_nodes,
      },
      ...(trace
        ? {
          trace: {
            file: this.#traceFile(trace.file),
            model: trace.model,
            modelBodies: trace.model_bodies,
          },
        }
        : {}),
      ...(hooks ? { hooks } : {}),
      ...(telemetry ? { telemetry } : {}),
      warnings: problems.warnings,
      secretValues: [...this.#values.secretValues],
      keychainEntries: [...this.#values.keychainEntries],
    };
  }

  /**
   * The `Telemetry` section: its endpoint checked like any URL, its headers checked (and
   * their `${VAR}` values registered as secrets) but kept as written, for the launcher.
   */
  #telemetry(
    section: ReturnType<typeof TelemetrySchema.parse> | undefined,
  ): TelemetrySettings | undefined {
    if (!section) return undefined;
    const path = ["Telemetry"];
    for (const [name, value] of Object.entries(section.headers)) {
      this.#values.header(name, value, [...path, "headers", name]);
    }
    const endpoint = this.#values.url(section.endpoint, [...path, "endpoint"]);
    return {
      ...(endpoint ? { endpoint } : {}),
      ...(section.protocol ? { protocol: section.protocol } : {}),
      headers: section.headers,
      ...(section.service_name ? { serviceName: section.service_name } : {}),
      captureContent: section.capture_content,
    };
  }

  /**
   * `Trace.file` made absolute against the folder of the file it is written in (the one
   * file's, which lib/trace/choice.ts would take it from too, or the merged files' own).
   */
  #traceFile(file: string): string {
    return isAbsolute(file) ? file : resolve(this.#document.folder(["Trace", "file"]), file);
  }
}

function orEmpty(section: JsonValue | undefined): JsonValue {
  return section === undefined ? {} : section;
}
