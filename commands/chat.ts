/**
 * The default command: the interactive session. For now it connects every server,
 * shows how each one fared, and closes them all again; the REPL (issue 5) builds on the
 * same start-up and shutdown.
 *
 * @module
 */

import { openConnections } from "../lib/connections/open.ts";
import { EXIT } from "../lib/errors.ts";
import { describeOAuthEvent } from "../lib/oauth/messages.ts";
import { type GlobalOptions, startUp } from "../lib/startup.ts";
import { stderrStyle } from "../lib/style.ts";
import { VERSION } from "../lib/version.ts";
import { renderServerStatus } from "./_status.ts";

/** Signals that end the session in order (servers closed, process trees ended). */
const STOP_SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

/**
 * Starts the interactive client. Exit code: 0 when every enabled server connected, 1
 * when one failed, 130 when interrupted.
 */
export async function chat(options: GlobalOptions): Promise<number> {
  const runtime = await startUp(options);
  const style = stderrStyle();
  const interrupt = new AbortController();
  const stop = () => interrupt.abort();
  const listening = STOP_SIGNALS.filter((signal) => {
    try {
      Deno.addSignalListener(signal, stop);
      return true;
    } catch {
      return false; // Not every platform has every signal (Windows has no SIGTERM).
    }
  });
  try {
    for (const notice of runtime.notices) console.error(notice);
    console.error(
      `patchbay ${VERSION} — ${runtime.config.llm.provider}/${runtime.config.llm.model}`,
    );
    const { manager, states } = await openConnections(runtime, {
      signal: interrupt.signal,
      onOAuthEvent: (event) => {
        const text = describeOAuthEvent(event);
        if (text) console.error(text);
      },
    });
    try {
      if (interrupt.signal.aborted) return EXIT.interrupted;
      console.error(renderServerStatus(states, { style, redactor: runtime.logger.redactor }));
      const failed = states.some((s) => !s.disabled && s.state !== "connected");
      return failed ? EXIT.failure : EXIT.ok;
    } finally {
      await manager.close();
    }
  } finally {
    for (const signal of listening) Deno.removeSignalListener(signal, stop);
    runtime.logger.close();
  }
}
