/**
 * The default command: the interactive session.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { type GlobalOptions, startUp } from "../lib/startup.ts";
import { VERSION } from "../lib/version.ts";

/** Starts the interactive client. */
export async function chat(options: GlobalOptions): Promise<number> {
  const runtime = await startUp(options);
  for (const notice of runtime.notices) console.error(notice);
  console.error(`patchbay ${VERSION} — ${runtime.config.llm.provider}/${runtime.config.llm.model}`);
  runtime.logger.close();
  return EXIT.ok;
}
