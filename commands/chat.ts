/**
 * The default command: the interactive session. At a terminal the prompt comes first and
 * the servers connect behind it; with piped input every server is waited for first.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { onEndingSignal, signalExitCode } from "../lib/cli/ending_signals.ts";
import { RESTART_EXIT_CODE } from "../lib/permissions/restart.ts";
import { banner, completerFor, runLoop } from "../lib/repl/loop.ts";
import { TerminalOutput } from "../lib/ui/output.ts";
import { canRedraw } from "../lib/terminal/terminal.ts";
import { ClientSession } from "../lib/session/client_session.ts";
import { type GlobalOptions, startUp } from "../lib/cli/startup.ts";
import { reportTraceFailures, startSessionTrace, stopTrace } from "../lib/trace/start.ts";
import type { Style } from "../lib/terminal/style.ts";
import { errorPresenter, refusedGrants } from "./_boundary.ts";
import { renderServerStatus } from "./_status.ts";

/** Options of the interactive session. */
export interface ChatOptions extends GlobalOptions {
  /** Approve every tool call and sampling request. @default false */
  yes?: boolean;
  /** Continue the latest conversation (`true`) or the one with this id. */
  resume?: true | string;
  /** Answer servers' forms with their defaults instead of asking. @default false */
  acceptFormDefaults?: boolean;
}

/**
 * Runs the interactive client until the person leaves. Exit code 0 when they leave, 130
 * when start-up was interrupted, 143 on SIGTERM; errors that stop start-up propagate to
 * the boundary.
 */
export async function chat(options: ChatOptions): Promise<number> {
  const runtime = await startUp(options);
  const output = new TerminalOutput({ spinner: canRedraw(Deno.stderr) });
  const presentError = errorPresenter(runtime.logger);
  const renderServers = (s: ClientSession, style: Style, how?: { compact?: boolean }) =>
    renderServerStatus(s.manager.states(), {
      style,
      redactor: runtime.logger.redactor,
      compact: how?.compact,
    });

  // The terminal is raw while patchbay reads keys, so Ctrl+C arrives as a key there; the
  // signal only arrives when it is not (start-up, shutdown): cancel what runs then.
  const startup = new AbortController();
  let session: ClientSession | undefined;
  const onInterrupt = () => {
    if (!session?.interrupt()) startup.abort();
  };
  // SIGTERM, SIGHUP (the terminal closed) and SIGQUIT end the session alike: the servers'
  // process groups are ended and the conversation is saved before patchbay exits.
  const ending = onEndingSignal(() => {
    session?.requestExit();
    startup.abort();
  });
  const terminated = () => ending.received !== undefined;
  const endCode = () => signalExitCode(ending.received ?? "SIGTERM");
  const listeners = addSignalListeners({ SIGINT: onInterrupt });
  /** The person left the prompt (/exit, Ctrl+D, Ctrl+C twice): `SessionEnd`'s reason. */
  let left = false;
  try {
    for (const notice of runtime.notices) output.err(`${notice}\n`);
    // A trace that stops writing (a full disk) says so once, above the prompt.
    reportTraceFailures((notice) => session ? session.warn(notice) : output.err(`${notice}\n`));
    const traceNotice = startSessionTrace(options, runtime);
    if (traceNotice) output.err(`${traceNotice}\n`);
    session = await ClientSession.open({
      runtime,
      output,
      presentError,
      refusedGrants,
      yes: options.yes,
      resume: options.resume,
      signal: startup.signal,
      acceptFormDefaults: options.acceptFormDefaults,
      // A person at the prompt need not wait for the slowest server; a script has
      // nothing to do until the servers are there.
      servers: Deno.stdin.isTerminal() ? "background" : "wait",
      renderServers,
    });
    if (startup.signal.aborted) return terminated() ? endCode() : EXIT.interrupted;
    session.editor.setCompleter(completerFor(session));
    output.err(`${banner(session)}\n`);
    session.goLive();
    await runLoop(session);
    left = !terminated() && !session.restartRequested;
    if (session.restartRequested) return RESTART_EXIT_CODE;
    const hint = resumeHint(session);
    if (hint) output.err(`${session.errStyle.dim(hint)}\n`);
    return terminated() ? endCode() : EXIT.ok;
  } finally {
    await session?.close(left ? "prompt_input_exit" : "other");
    stopTrace();
    listeners.remove();
    ending.remove();
  }
}

/** How to continue the conversation just left, when memory kept something of it. */
function resumeHint(session: ClientSession): string | undefined {
  const conversation = session.memory.session;
  if (!session.memory.enabled || conversation.messages.length === 0) return undefined;
  return `Resume this conversation with: patchbay --resume ${conversation.id}`;
}

function addSignalListeners(handlers: Partial<Record<Deno.Signal, () => void>>) {
  const added: [Deno.Signal, () => void][] = [];
  for (const [signal, handler] of Object.entries(handlers) as [Deno.Signal, () => void][]) {
    try {
      Deno.addSignalListener(signal, handler);
      added.push([signal, handler]);
    } catch {
      // Not every platform has every signal (Windows has no SIGTERM).
    }
  }
  return { remove: () => added.forEach(([s, h]) => Deno.removeSignalListener(s, h)) };
}
