/**
 * The remedies of the model's provider failing (`lib/llm/`) and of the session limits of
 * `AgentConfig` (`lib/agent/limits.ts`): part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within the
 * size of a file. A step naming a slash command is worded per surface; a function takes
 * the values only known when it fails.
 *
 * @module
 */

import { perSurface, type Remedy } from "./failure_table.ts";

/** How a session limit is raised; `noLimit`: whether removing it is offered. */
function raise(noLimit: boolean): Remedy {
  const where = "in the AgentConfig section of servers_config.json " +
    (noLimit ? "(remove it for no limit), " : "") + "then restart patchbay";
  return { repl: `${where}; /api_stats shows what the session has used`, script: where };
}

/** Steps of the remedies of the model's provider and of the session limits. */
export const MODEL_STEPS = {
  /** A redirect loop behind LLM.base_url. */
  redirectLoop: "the loop is in the server or in a gateway or proxy in front of it, not in " +
    "LLM.base_url's origin: check LLM.base_url's path (it usually ends in /v1, and a " +
    "trailing slash can matter) and the redirect rules of the server or gateway",
  /** More redirects than patchbay follows. */
  tooManyRedirects: "set LLM.base_url to the address the redirects end at, or fix the " +
    "redirect rules of the server or gateway",
  /** An unknown model, or an address that does not serve it. */
  unknownModel: "check LLM.model (the provider's model list names the valid ones) and, if " +
    "set, LLM.base_url (it usually ends in /v1)",
  /** A request past the model's context. */
  contextTooLong: "lower LLM.max_context_length so that patchbay trims more of the history " +
    "(or start a new conversation)",
  /** The provider failing again and again. */
  providerDown: "try again in a while; if it persists, check the provider's status page or " +
    "switch provider",
  /** A model request that timed out; `proxyHint`: the proxy's part, if any. */
  timeout: (seconds: number, host: string, proxyHint: string): string =>
    `raise LLM.timeout (now ${seconds} s) if the model is slow, ` +
    `and test that ${host} is reachable` + proxyHint,
  /** An answer cut off mid-stream. */
  dropped: (proxyHint: string): string =>
    "send the message again; if it keeps happening, check the network and any proxy " +
    "between you and the provider" + proxyHint,
  /** An address that answers, but not as the provider's API. */
  notTheApi: (api: string): string =>
    `check that LLM.base_url is the provider's ${api} address (it usually ends in /v1), ` +
    "not a web page or another service",
  /** A proxy variable that is not a URL. */
  proxySetting: "set the proxy variable to a URL such as http://proxy.example.com:3128, " +
    "in .env or the environment, then restart patchbay",
  /** A local provider without LLM.base_url. */
  baseUrl:
    'set LLM.base_url to the server\'s OpenAI-compatible address, e.g. "http://localhost:8000/v1"',
  /** A proxy that refused to open a tunnel to `host`; `variable`: the proxy's variable. */
  tunnelRefused: (host: string, variable: string): string =>
    `check that the proxy allows connections to ${host} and that its credentials ` +
    `(user:password@ in ${variable}) are right; ` +
    "NO_PROXY lists hosts to reach directly",
  /** AgentConfig.request_limit reached. */
  requestLimit: perSurface`raise request_limit ${raise(true)}`,
  /** AgentConfig.sampling_per_tool_call reached. */
  samplingPerToolCall: perSurface`if the tool really needs more, raise sampling_per_tool_call ${
    raise(true)
  }`,
  /** AgentConfig.sampling_request_limit reached. */
  samplingRequestLimit: perSurface`raise sampling_request_limit ${raise(true)}`,
  /** AgentConfig.total_tokens_limit reached. */
  totalTokensLimit: perSurface`raise total_tokens_limit ${
    raise(true)
  }; a lower ${"LLM.max_context_length sends less history per request"}`,
  /** AgentConfig.max_steps reached. */
  maxSteps: perSurface`raise max_steps ${
    raise(false)
  }, or split the task; ${'the tool results so far are kept, so "continue" carries on from here'}`,
} as const;
