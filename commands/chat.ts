/**
 * The default command: the interactive session.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { openMemory } from "../lib/memory/open.ts";
import { type GlobalOptions, startUp } from "../lib/startup.ts";
import { plural } from "../lib/text.ts";
import { VERSION } from "../lib/version.ts";

/** Options of the interactive session. */
export interface ChatOptions extends GlobalOptions {
  /** `--resume`: `true` for the most recent conversation, or an id (prefix). */
  resume?: string | true;
}

/** Starts the interactive client. */
export async function chat(options: ChatOptions): Promise<number> {
  const runtime = await startUp(options);
  try {
    for (const notice of runtime.notices) console.error(notice);
    console.error(
      `patchbay ${VERSION} — ${runtime.config.llm.provider}/${runtime.config.llm.model}`,
    );
    if (options.resume !== undefined) {
      const memory = await openMemory(runtime.config.memory, runtime.env, {
        log: runtime.logger.child("memory"),
        redactor: runtime.logger.redactor,
        strict: true,
      });
      try {
        const session = await memory.resume(options.resume);
        console.error(
          `Resuming session ${session.id} (${plural(session.messages.length, "message")})`,
        );
      } finally {
        await memory.close();
      }
    }
    return EXIT.ok;
  } finally {
    runtime.logger.close();
  }
}
