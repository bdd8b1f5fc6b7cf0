/**
 * `patchbay run "<prompt>"`: one turn, then exit. The prompt can also come on stdin
 * (`echo question | patchbay run`); with both, stdin is appended to the prompt. Only the
 * prompt given as arguments is read for `@server:uri` mentions, never piped text. The
 * answer goes to stdout, status and errors to stderr; `--json` writes a stream of
 * newline-delimited JSON events to stdout instead.
 *
 * Ctrl+C while the servers connect skips those still connecting (named on stderr) and the
 * turn goes on with the others; a second Ctrl+C, or one during the turn, cancels it.
 *
 * Exit codes: 0 answered, 1 failed (model, configuration, limits), 2 usage, 3 servers failed
 * (every enabled server failed and the model answered without tools; or, with
 * `--require-servers`, any one failed and the model was not asked), 130 interrupted.
 *
 * @module
 */

import { CancelledError, EXIT, PatchbayError, UsageError } from "../lib/errors.ts";
import { onEndingSignal, signalExitCode } from "../lib/cli/ending_signals.ts";
import type { Redactor } from "../lib/redact/redact.ts";
import { JsonEventsUi, usageJson } from "../lib/ui/json_ui.ts";
import type { CostEstimate } from "../lib/agent/usage_cost.ts";
import { TerminalOutput } from "../lib/ui/output.ts";
import { canRedraw } from "../lib/terminal/terminal.ts";
import type { ClientSession } from "../lib/session/client_session.ts";
import { type GlobalOptions, startUp } from "../lib/cli/startup.ts";
import { reportTraceFailures, startSessionTrace, stopTrace } from "../lib/trace/start.ts";
import { endUnclaimed } from "../lib/transports/spawn.ts";
import { errorJson, errorPresenter, refusedGrants } from "./_boundary.ts";
import { startServerProcesses } from "./_connect.ts";
import { renderServerStatus } from "./_status.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** Options of `patchbay run`. */
export interface RunOptions extends GlobalOptions {
  /** Newline-delimited JSON events on stdout. @default false */
  json?: boolean;
  /** Approve tool calls and sampling without asking. @default false */
  yes?: boolean;
  /** Continue a stored conversation. */
  resume?: true | string;
  /** Answer servers' forms with their defaults instead of asking. @default false */
  acceptFormDefaults?: boolean;
  /** A server that fails to connect ends the run (exit 3) before the model is asked. */
  requireServers?: boolean;
}

/** Reads all of stdin when it is not a terminal. */
async function pipedInput(): Promise<string> {
  if (Deno.stdin.isTerminal()) return "";
  return (await new Response(Deno.stdin.readable).text()).trim();
}

/** The prompt from the arguments and/or stdin. */
export function composePrompt(words: string[], piped: string): string {
  const prompt = words.join(" ").trim();
  if (prompt && piped) return `${prompt}\n\n${piped}`;
  return prompt || piped;
}

/** Runs one turn and returns the exit code. */
export async function run(words: string[], options: RunOptions): Promise<number> {
  const prompt = composePrompt(words, await pipedInput());
  // Mentions are the person's: only the prompt typed as arguments is read for them. Piped
  // text (a file, a diff, a page) is sent as it is and never makes patchbay read a resource.
  const typed = words.join(" ").trim();
  if (!prompt) {
    throw new UsageError(
      "nothing to ask: give a prompt or pipe text on stdin",
      USAGE_STEPS.runPrompt,
    );
  }
  const runtime = await startUp(options);
  const output = new TerminalOutput({ spinner: !options.json && canRedraw(Deno.stderr) });
  const json = options.json
    ? new JsonEventsUi({
      write: (line) => output.out(`${line}\n`),
      autoApprove: options.yes ?? false,
      redactor: runtime.logger.redactor,
    })
    : undefined;
  const presentError = errorPresenter(runtime.logger, "script");
  const controller = new AbortController();
  const skip = new AbortController();
  let connecting = true;
  const onInterrupt = () => {
    if (connecting && !skip.signal.aborted) skip.abort();
    else controller.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  // SIGTERM, SIGHUP and SIGQUIT cancel the turn; the servers end with the session below.
  const ending = onEndingSignal(() => controller.abort());
  let session: ClientSession | undefined;
  try {
    // A trace that stops writing (a full disk) says so once, as any notice of the run.
    reportTraceFailures((notice) =>
      json ? json.notice("warning", notice) : output.err(`${notice}\n`)
    );
    const traceNotice = startSessionTrace(options, runtime);
    for (const notice of [...runtime.notices, ...(traceNotice ? [traceNotice] : [])]) {
      if (json) json.notice("info", notice);
      else output.err(`${notice}\n`);
    }
    // The servers boot while the session's code (SDK, model client, memory) loads.
    startServerProcesses(runtime);
    const { ClientSession } = await import("../lib/session/client_session.ts");
    session = await ClientSession.open({
      runtime,
      output,
      presentError,
      refusedGrants,
      yes: options.yes,
      resume: options.resume,
      signal: controller.signal,
      skip: skip.signal,
      onSkip: (skipped) => {
        // Nothing was connecting any more: the Ctrl+C cancels.
        if (skipped.length === 0) return controller.abort();
        const text = `Skipping ${skipped.map((name) => `'${name}'`).join(", ")}: still ` +
          "connecting (Ctrl+C again cancels)";
        if (json) json.notice("warning", text);
        else output.err(`${text}\n`);
      },
      ui: json,
      // stdin is the prompt (or not a terminal): only a terminal on both ends can answer.
      interactive: !json && Deno.stdin.isTerminal() && Deno.stderr.isTerminal(),
      acceptFormDefaults: options.acceptFormDefaults,
      surface: "script",
    });
    connecting = false;
    reportServers(session, json, output, runtime.logger.redactor);
    // Required servers offered from their kept lists are waited for: they must connect.
    if (options.requireServers) await session.manager.cachedAttempts();
    const enabled = session.manager.states().filter((s) => !s.disabled);
    const failed = enabled.filter((s) => s.state !== "connected" && !s.listsFromCache)
      .map((s) => s.name);
    if (options.requireServers && failed.length > 0) throw serversRequired(failed);
    if (!session.agent) throw session.modelError;
    // A mention that cannot be read fails the run before anything is sent.
    const attachments = await session.mentionAttachments(typed, controller.signal);
    const result = await session.agent.runTurn(prompt, { signal: controller.signal, attachments });
    // A script must be able to tell an answer given without any of its servers.
    const code = failed.length > 0 && failed.length === enabled.length
      ? EXIT.serversFailed
      : EXIT.ok;
    if (json) {
      json.emit("done", {
        text: result.text,
        steps: result.steps,
        tool_calls: result.toolCalls,
        usage: usageJson(result.usage),
        ...estimatedCost(session.model?.stats.snapshot().cost),
        session: session.memory.session.id,
        servers_failed: failed,
      });
    } else {
      session.ui.textDone();
      if (code !== EXIT.ok) {
        output.err(
          `warning: answered without tools: no configured server connected (exit code ${code})\n`,
        );
      }
    }
    return code;
  } catch (error) {
    await session?.discardUnanswered();
    if (ending.received) return signalExitCode(ending.received);
    if (!json) throw error;
    json.emit("error", { error: errorJson(error) });
    return error instanceof CancelledError
      ? EXIT.interrupted
      : error instanceof PatchbayError
      ? error.exitCode
      : EXIT.failure;
  } finally {
    output.stopSpinner();
    await session?.close();
    stopTrace();
    Deno.removeSignalListener("SIGINT", onInterrupt);
    ending.remove();
    await endUnclaimed();
  }
}

/**
 * `done`'s `estimated_cost_usd`: the run's requests (sampling included) at list prices, when
 * the model's price is known (`lib/llm/prices.ts`, `LLM.price`); absent otherwise.
 */
function estimatedCost(cost: CostEstimate | undefined): { estimated_cost_usd?: number } {
  if (!cost || cost.priced.length === 0 || cost.unpriced.length > 0) return {};
  return { estimated_cost_usd: Number(cost.usd.toPrecision(6)) };
}

/** `--require-servers` and a server that did not connect: the model is not asked. */
function serversRequired(failed: readonly string[]): PatchbayError {
  const names = failed.map((name) => `'${name}'`).join(", ");
  return new PatchbayError("server_connect_failed", `Required servers failed: ${names}`, {
    reason: "--require-servers was given and these servers did not connect (the reason of each " +
      "is above, or in the server events)",
    remedy: USAGE_STEPS.requiredServers,
    exitCode: EXIT.serversFailed,
  });
}

/** Servers that failed are worth knowing about even in one-shot mode (stderr, or events). */
function reportServers(
  session: ClientSession,
  json: JsonEventsUi | undefined,
  output: TerminalOutput,
  redactor: Redactor,
): void {
  const states = session.manager.states();
  if (json) {
    for (const status of states) {
      json.emit("server", {
        name: status.name,
        state: status.state,
        tools: status.counts.tools,
        ...(status.error ? { error: errorJson(status.error) } : {}),
      });
    }
    return;
  }
  const failed = states.filter((s) => !s.disabled && s.state !== "connected" && !s.listsFromCache);
  if (failed.length === 0) return;
  // The header counts every server; only the failed ones are listed.
  const only = (s: (typeof states)[number]) => failed.includes(s);
  output.err(
    `${
      renderServerStatus(states, { style: session.errStyle, redactor, only, surface: "script" })
    }\n`,
  );
}
