/**
 * What the scriptable commands (`tools`, `prompts`, `resources`, `call`, `read`,
 * `prompt`) share: start up, connect the servers they need (no model), act, close.
 *
 * @module
 */

import process from "node:process";
import type { ConnectionManager } from "../lib/connections/manager.ts";
import type { ServerRequestHandlers, ServerStatus } from "../lib/connections/types.ts";
import { CancelledError, EndedBySignalError, policyRefusal } from "../lib/errors.ts";
import { onEndingSignal, signalExitCode } from "../lib/cli/ending_signals.ts";
import { describeOAuthEvent } from "../lib/oauth/messages.ts";
import { installingOf } from "../lib/connections/progress.ts";
import { createElicitationHandler, createFormDefaultsHandler } from "../lib/ui/elicitation.ts";
import { type GlobalOptions, type Runtime, startUp } from "../lib/cli/startup.ts";
import { endUnclaimed, prespawnAll, stdioSpawnSpecs } from "../lib/transports/spawn.ts";
import { stderrStyle } from "../lib/terminal/style.ts";
import { terminalColumns } from "../lib/terminal/terminal.ts";
import { fitLines } from "../lib/text/text.ts";
import { maskSecrets } from "../lib/redact/redact.ts";
import { reportTraceFailures, startSessionTrace, stopTrace } from "../lib/trace/start.ts";
import { activeTrace } from "../lib/trace/active.ts";
import { errorJson } from "./_boundary.ts";
import { renderServerStatus } from "./_status.ts";

/** Options every scriptable command takes. */
export interface ScriptOptions extends GlobalOptions {
  /** JSON on stdout instead of text. @default false */
  json?: boolean;
  /** Answer servers' forms with their defaults instead of asking. @default false */
  acceptFormDefaults?: boolean;
}

const encoder = new TextEncoder();

function writeStderr(text: string): void {
  const bytes = encoder.encode(text);
  let written = 0;
  while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
}

/**
 * These commands load no model, so they cannot answer a server's sampling request: they do
 * not declare sampling (servers then hide what needs it, as server-everything hides
 * `trigger-sampling-request`), rather than declaring it and refusing every request.
 * `patchbay run` and the interactive client answer sampling with the configured model.
 */
const NO_MODEL = { withoutSampling: true } as const;

/**
 * Who answers a server's form (MCP elicitation) during a scripting command: the person at
 * the terminal, asked on stderr (stdout carries the command's output, and never a
 * question); `--accept-form-defaults`; or nobody, and then servers are not told forms are
 * welcome at all.
 */
async function formAnswers(
  options: ScriptOptions,
): Promise<{ handlers: ServerRequestHandlers; close(): void }> {
  const style = stderrStyle();
  if (options.acceptFormDefaults) {
    const notice = (text: string) => console.error(style.dim(text));
    return {
      handlers: { elicitation: createFormDefaultsHandler(notice), ...NO_MODEL },
      close() {},
    };
  }
  if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) {
    return { handlers: { withoutElicitation: true, ...NO_MODEL }, close() {} };
  }
  const [{ LineEditor }, { TerminalOutput }] = await Promise.all([
    import("../lib/terminal/line_editor.ts"),
    import("../lib/ui/output.ts"),
  ]);
  const editor = new LineEditor({ output: process.stderr });
  const output = new TerminalOutput({ stdout: writeStderr, stderr: writeStderr });
  return {
    handlers: {
      elicitation: createElicitationHandler({ editor, output, style, errStyle: style }),
      ...NO_MODEL,
    },
    close: () => editor.close(),
  };
}

/** How {@linkcode withServers} reports. */
export interface WithServersOptions {
  /**
   * The action shows every server's state itself (`mcp list --check`), so the failed ones
   * are not also shown on stderr first. @default false
   */
  showsFailures?: boolean;
}

/** What an action gets to work with. */
export interface Connected {
  runtime: Runtime;
  manager: ConnectionManager;
  states: ServerStatus[];
  /** Enabled servers that did not connect. */
  failed: ServerStatus[];
  signal: AbortSignal;
}

/**
 * Connects the servers (those `select` picks from the configured names, when given), runs
 * `action`, and closes everything.
 * Failed servers are shown on stderr (in text mode) with their diagnosis.
 *
 * Ctrl+C while servers connect skips the ones still connecting (named on stderr; they
 * count as failed) and the command goes on with the others; a second Ctrl+C, or one
 * at any other time, cancels the command.
 */
export async function withServers<T>(
  options: ScriptOptions,
  action: (connected: Connected) => Promise<T>,
  select?: (names: string[], runtime: Runtime) => string[] | Promise<string[]>,
  how: WithServersOptions = {},
): Promise<T> {
  const runtime = await startUp(options);
  const controller = new AbortController();
  const skip = new AbortController();
  let connecting = false;
  const onInterrupt = () => {
    if (connecting && !skip.signal.aborted) skip.abort();
    else controller.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  // SIGTERM, SIGHUP and SIGQUIT cancel the command; the servers end with the manager below.
  const ending = onEndingSignal(() => controller.abort());
  let forms: { handlers: ServerRequestHandlers; close(): void } | undefined;
  try {
    for (const notice of runtime.notices) console.error(notice);
    // A trace that stops writing (a full disk) says so once, on stderr.
    reportTraceFailures((notice) => console.error(notice));
    const traceNotice = startSessionTrace(options, runtime);
    // That a trace is recorded is left out of JSON runs; that it cannot be never is.
    if (traceNotice && (!options.json || !activeTrace())) console.error(traceNotice);
    if (select) {
      const chosen = new Set(await select(runtime.config.servers.map((s) => s.name), runtime));
      runtime.config.servers = runtime.config.servers.filter((s) => chosen.has(s.name));
    }
    // The servers' processes start first, and boot while the code that speaks to them loads.
    startServerProcesses(runtime);
    const [{ openConnections }] = await Promise.all([
      import("../lib/connections/open.ts"),
      formAnswers(options).then((answers) => forms = answers),
    ]);
    connecting = true;
    const { manager, states } = await openConnections({
      ...runtime.config,
      env: runtime.env,
      logger: runtime.logger,
    }, {
      signal: controller.signal,
      handlers: forms!.handlers,
      skip: skip.signal,
      // The last answer is in: the servers have nothing left to do.
      closePromptly: true,
      surface: "script",
      // A first `npx` run downloads the package: said, with the longer bound it gets.
      onConnecting: (states) => {
        if (options.json) return;
        for (const status of states) {
          const installing = installingOf(status);
          if (installing) {
            console.error(stderrStyle().dim(`Server '${status.name}': ${installing}`));
          }
        }
      },
      onSkip: (skipped) => {
        // Nothing was connecting any more (a login, a slow close): the Ctrl+C cancels.
        if (skipped.length === 0) return controller.abort();
        console.error(
          `Skipping ${skipped.map((name) => `'${name}'`).join(", ")}: still connecting ` +
            "(Ctrl+C again cancels)",
        );
      },
      // The authorization URL must always be shown, so a login can finish by hand.
      onOAuthEvent: (event) => {
        const text = describeOAuthEvent(event);
        if (text) console.error(text);
      },
    });
    connecting = false;
    try {
      if (controller.signal.aborted) throw new CancelledError("connecting");
      // A server still connecting whose kept lists are offered has not failed (yet).
      const failed = states.filter((s) =>
        !s.disabled && s.state !== "connected" && !s.listsFromCache
      );
      if (failed.length > 0 && !options.json && !how.showsFailures) {
        const block = renderServerStatus(states, {
          style: stderrStyle(),
          redactor: runtime.logger.redactor,
          only: (s) => failed.includes(s),
          surface: "script",
        });
        console.error(fitLines(block, terminalColumns(Deno.stderr)));
      }
      return await action({ runtime, manager, states, failed, signal: controller.signal });
    } finally {
      await manager.close();
    }
  } catch (error) {
    if (ending.received) {
      throw new EndedBySignalError(ending.received, signalExitCode(ending.received));
    }
    throw error;
  } finally {
    forms?.close();
    stopTrace();
    Deno.removeSignalListener("SIGINT", onInterrupt);
    ending.remove();
    await endUnclaimed();
  }
}

/**
 * Starts the process of every enabled stdio server, to be claimed by the connections
 * opened next (see `lib/transports/spawn.ts`); the caller ends the unclaimed ones.
 */
export function startServerProcesses(runtime: Runtime): void {
  // Those the early start started (lib/early_start.ts) are not started again.
  prespawnAll(stdioSpawnSpecs(runtime.config.servers, (name) => runtime.env.get(name)));
}

/** Server states as JSON (errors as `errorJson` gives them, stderr lines included). */
export function statesJson(states: readonly ServerStatus[]) {
  // A failure may quote what the entry holds (a command line with a secret argument, a
  // server's stderr): masked here as on every other surface.
  return maskSecrets(states.map((s) => ({
    name: s.name,
    transport: s.transport,
    // A disabled server is not a failure to connect: it was never meant to.
    state: s.refused ? "refused" : s.disabled ? "disabled" : s.state,
    ...(s.protocolVersion ? { protocol: s.protocolVersion } : {}),
    ...(s.warnings ? { warnings: s.warnings } : {}),
    ...(s.error ? { error: errorJson(s.error) } : {}),
    // Refused by the administrator's policy: its error, as `call` would show it.
    ...(s.refused ? { error: errorJson(policyRefusal(s.name, s.refused)) } : {}),
  })));
}
