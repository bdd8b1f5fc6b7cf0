/**
 * A provider's refusal of a request that carried image parts, told apart from other
 * failures and given its remedy: `LLM.vision: false`, which makes images reach the model as
 * words instead.
 *
 * @module
 */

import { ProviderRequestError } from "../errors.ts";
import { AGENT_STEPS } from "../errors/agent_steps.ts";

/**
 * Whether a failed request with image parts was refused for them, as far as an answer can
 * tell: a 400, 415 or 422 (what OpenAI-compatible servers answer to a content part they do
 * not take), or a 404 that speaks of images (gateways that find no vision endpoint).
 */
export function refusesImages(error: unknown): error is ProviderRequestError {
  if (!(error instanceof ProviderRequestError)) return false;
  if (error.status === 400 || error.status === 415 || error.status === 422) return true;
  return error.status === 404 && /image|vision/i.test(`${error.message} ${error.reason}`);
}

/**
 * A provider's refusal of a request with image parts: most likely a model that takes text only,
 * which `LLM.vision: false` settles (images are then described in words).
 */
export function imagesRefused(error: ProviderRequestError): ProviderRequestError {
  return new ProviderRequestError(
    `The model refused a request with images: ${error.message}`,
    error.status,
    {
      reason: `the request carried image parts and the provider answered HTTP ${error.status} (${
        error.reason ?? "no reason given"
      }); the model may not take images`,
      remedy: AGENT_STEPS.noVision,
      cause: error,
    },
  );
}
