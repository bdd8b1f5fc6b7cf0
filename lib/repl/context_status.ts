/**
 * The `/status` row about what reaches the model besides text: whether images go as image
 * parts (and why), and whether tools are offered through search (and why).
 *
 * @module
 */

import { searchApplies } from "../agent/tool_search.ts";
import { DEFAULTS } from "../defaults.ts";
import { visionInEffect } from "../providers.ts";
import type { ClientSession } from "../session/client_session.ts";

/** `images to the model (LLM.vision auto) · tool search off: 29 tools, at most 40`. */
export function contextStatus(s: ClientSession): string {
  const { llm, agent } = s.runtime.config;
  const setting = llm.vision ?? DEFAULTS.llm.vision;
  const vision = visionInEffect(setting, llm.provider, llm.model);
  const images = `images ${vision ? "to the model" : "described to the model"} ` +
    `(LLM.vision ${setting}${setting === "auto" ? ` for ${llm.model}` : ""})`;
  const settings = agent.toolSearch ?? DEFAULTS.agent.toolSearch;
  const tools = s.manager.tools();
  const on = searchApplies(tools, settings);
  const why = settings.mode !== "auto"
    ? `tool_search ${settings.mode}`
    : `${tools.length} tools, ${on ? "over" : "within"} ${settings.maxTools} tools / ` +
      `${settings.maxTokens} tokens`;
  return `${images} · tool search ${on ? "on" : "off"} (${why})`;
}
