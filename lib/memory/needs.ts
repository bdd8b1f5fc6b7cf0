/**
 * What memory needs of the permission plan: the variables that select Redis, the whole
 * environment when ioredis loads, the Redis addresses (or notes where they are known only
 * at run time), its CA file; and for the leases (lease_holder.ts), the machine's name and
 * the `kill` program, which tell a conversation held by an ended process on this machine.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import { type MachineFacts, type NeedsSink, netAddress } from "../deno_permission/needs.ts";
import type { Environment } from "../env.ts";
import { redisConfigured, resolveRedisSettings } from "../redis/settings.ts";
import { KILL_PROGRAM } from "../transports/process.ts";

/** Variables `Memory.backend: auto` (and `/memory` from `off`) read to choose the store. */
const REDIS_SELECTORS = ["REDIS_URL", "REDIS_HOST"] as const;

/** What {@linkcode memoryNeeds} reads of the plan's inputs. */
export interface MemoryNeedsInputs extends MachineFacts {
  config: Pick<Config, "memory">;
  env: Environment;
}

/** Adds what the memory store and its leases need. */
export function memoryNeeds(plan: NeedsSink, inputs: MemoryNeedsInputs): void {
  storeNeeds(plan, inputs);
  leaseNeeds(plan, inputs);
}

function storeNeeds(plan: NeedsSink, inputs: MemoryNeedsInputs): void {
  const { memory } = inputs.config;
  if (memory.backend === "file") return;
  for (const name of REDIS_SELECTORS) plan.add("env", name, "selects Redis for memory");
  const wantsRedis = memory.backend === "redis" || redisConfigured(memory, inputs.env);
  if (!wantsRedis) return;
  plan.allEnv(
    "memory is kept in Redis, and its client (ioredis) reads the whole environment when it " +
      "loads, which a list of variables does not allow",
  );
  let settings;
  try {
    settings = resolveRedisSettings(memory, inputs.env);
  } catch {
    return; // The doctor's memory check reports unusable REDIS_* values.
  }
  const topology = settings.topology;
  if (topology.mode === "standalone") {
    plan.add("net", netAddress(topology.address), "the Redis memory store");
  } else if (topology.mode === "sentinel") {
    for (const sentinel of topology.sentinels) {
      plan.add("net", netAddress(sentinel), "a Redis sentinel");
    }
    plan.note(
      "Redis Sentinel: the master's address comes from the sentinels at run time; add the " +
        "host:port of every server that can become master to --allow-net.",
    );
  } else {
    for (const node of topology.nodes) plan.add("net", netAddress(node), "a Redis Cluster node");
    plan.note(
      "Redis Cluster: the other nodes are discovered at run time; add the host:port of " +
        "every node to --allow-net.",
    );
  }
  if (settings.tls?.caFile) {
    plan.add("read", settings.tls.caFile, "the CA certificate of Redis (REDIS_TLS_CA_FILE)");
  }
}

/**
 * lease_holder.ts: a conversation held by a process on this machine that has ended is
 * taken over at once; telling needs the machine's name and `kill -0 <pid>`.
 */
function leaseNeeds(plan: NeedsSink, inputs: MemoryNeedsInputs): void {
  if (inputs.config.memory.backend === "off") return;
  plan.add("sys", "hostname", "tells a conversation held on this machine from one held elsewhere");
  plan.add(
    "run",
    inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd) ?? KILL_PROGRAM,
    "asks whether the process holding a conversation on this machine still runs (kill -0)",
  );
}
