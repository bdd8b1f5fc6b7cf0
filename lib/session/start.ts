/**
 * The parts of a session's start-up that stand on their own: where its questions go, the
 * approvals remembered for the folder, resuming a conversation another process holds, and
 * connecting the servers with the handlers for what they ask (sampling, forms).
 *
 * @module
 */

import type { RememberedApprovals } from "../agent/approval.ts";
import { ApprovalStore } from "../agent/approval_store.ts";
import type { AgentUi, ToolCallEnd } from "../agent/ui.ts";
import { openConnections } from "../connections/open.ts";
import { installingOf } from "../connections/progress.ts";
import type { ConnectionManager } from "../connections/manager.ts";
import type { ServerRequestHandlers } from "../connections/types.ts";
import type { RefusedGrants } from "../deno_permission/refused_grant.ts";
import { ConversationHeldError, PatchbayError } from "../errors.ts";
import type { Conversation, Memory } from "../memory/mod.ts";
import { describeOAuthEvent } from "../oauth/messages.ts";
import type { Runtime } from "../cli/startup.ts";
import type { Style } from "../terminal/style.ts";
import type { Surface } from "../errors/failure_table.ts";
import { plural } from "../text/text.ts";
import { createElicitationHandler, createFormDefaultsHandler } from "../ui/elicitation.ts";
import type { TerminalOutput } from "../ui/output.ts";
import type { LineEditor } from "../terminal/line_editor.ts";

/**
 * The approvals remembered for this folder. A file that cannot be read is said so and
 * left alone: nothing is remembered (or overwritten) this session.
 */
export async function rememberedApprovals(context: {
  output: TerminalOutput;
  presentError: (error: unknown) => string;
  notify: (text: string) => void;
}): Promise<RememberedApprovals | undefined> {
  const store = new ApprovalStore();
  const folder = Deno.cwd();
  try {
    const approvals = (await store.list()).filter((a) => a.folder === folder);
    return {
      folder,
      approvals,
      store,
      // Still approved for this session; the person is told it was not kept.
      onError: (error) => context.notify(`${context.presentError(error)}\n`),
    };
  } catch (error) {
    if (!(error instanceof PatchbayError)) throw error;
    context.output.err(`${context.presentError(error)}\n`);
    return undefined;
  }
}

/**
 * Resumes `target`; when another process has it open, a person at the terminal may
 * continue it as a new branch instead (a script gets the error, which says how).
 */
export async function resumeConversation(
  memory: Memory,
  target: true | string,
  context: { interactive: boolean; editor: LineEditor; output: TerminalOutput },
  signal?: AbortSignal,
): Promise<Conversation> {
  try {
    return await memory.resume(target, Deno.cwd());
  } catch (error) {
    if (!(error instanceof ConversationHeldError) || !context.interactive) throw error;
    const { sessionId, holder } = error;
    const answer = await context.editor.choose(
      `Conversation ${sessionId} is open in another patchbay (process ${holder.pid}, ` +
        `since ${holder.since}).\nContinue it here as a new branch (a copy under a new id; ` +
        "the other process keeps the original)? [y/N] ",
      ["y", "n"],
      "n",
      "n",
      signal,
    );
    if (answer !== "y") throw error;
    const branch = await memory.branch(sessionId);
    context.output.err(`Branched conversation ${sessionId} as ${branch.id}\n`);
    return branch;
  }
}

/** What {@linkcode connectServers} connects with. */
export interface ConnectContext {
  runtime: Runtime;
  output: TerminalOutput;
  editor: LineEditor;
  /** A person can answer forms at the terminal. */
  interactive: boolean;
  promptStyle: Style;
  errStyle: Style;
  /** Answers servers' sampling requests (or refuses them, saying why). */
  sampling: NonNullable<ServerRequestHandlers["sampling"]>;
  /** Writes an unprompted notice around the prompt. */
  notify: (text: string) => void;
  /** Start-up does not wait for the servers. */
  background: boolean;
  /** Answer forms with their defaults instead of asking. */
  acceptFormDefaults: boolean;
  signal?: AbortSignal;
  skip?: AbortSignal;
  onSkip?: (servers: string[]) => void;
  /** Where failures are shown (a failed login's browser page words its remedy so). */
  surface?: Surface;
}

/** Opens the configured servers, with a spinner unless they connect in the background. */
export async function connectServers(context: ConnectContext): Promise<ConnectionManager> {
  const { runtime, background, acceptFormDefaults } = context;
  const handlers: ServerRequestHandlers = {
    sampling: context.sampling,
    elicitation: acceptFormDefaults
      ? createFormDefaultsHandler((text) => context.notify(`${context.errStyle.dim(text)}\n`))
      : context.interactive
      ? createElicitationHandler({
        editor: context.editor,
        output: context.output,
        style: context.promptStyle,
        errStyle: context.errStyle,
      })
      : undefined,
    // Nobody to answer: servers are not told forms are welcome, so they do not ask.
    withoutElicitation: !acceptFormDefaults && !context.interactive,
  };
  const enabled = runtime.config.servers.filter((s) => !s.disabled).length;
  if (enabled > 0 && !background) {
    context.output.spin(
      `connecting to ${plural(enabled, "server")}…${context.skip ? " (Ctrl+C skips)" : ""}`,
    );
  }
  try {
    const { manager } = await openConnections({
      ...runtime.config,
      env: runtime.env,
      logger: runtime.logger,
    }, {
      signal: context.signal,
      skip: context.skip,
      onSkip: context.onSkip,
      wait: !background,
      handlers,
      surface: context.surface,
      onOAuthEvent: (event) => {
        const text = describeOAuthEvent(event);
        if (text) context.notify(`${text}\n`);
      },
      // Waiting for the servers (`run`, piped input): a first `npx` run downloading is said,
      // with the longer bound it gets (in the background, the banner says it).
      onConnecting: (states) => {
        for (const status of states) {
          const installing = installingOf(status);
          if (installing) {
            context.notify(`${context.errStyle.dim(`Server '${status.name}': ${installing}`)}\n`);
          }
        }
      },
    });
    return manager;
  } finally {
    context.output.stopSpinner();
  }
}

/**
 * Where prompts and questions go: to the person at the terminal, never into a file the
 * answer is redirected to. stderr, unless it is redirected and stdout is the terminal
 * (`patchbay 2> log`); `run … > answer.txt` asks on stderr and leaves the file the answer.
 */
export function promptStream(): "stdout" | "stderr" {
  return !Deno.stderr.isTerminal() && Deno.stdout.isTerminal() ? "stdout" : "stderr";
}

/** The width answers are laid out to: the terminal's, at most 120 columns; 80 without one. */
export function terminalWidth(): number {
  try {
    return Math.min(Deno.consoleSize().columns, 120);
  } catch {
    return 80;
  }
}

/**
 * `ui`, keeping the grant a failed tool call's error carries (a refused authorization
 * server): the UI shows that error itself, so `/refresh` learns of the grant here.
 */
export function keepingRefusedGrants(ui: AgentUi, refused: RefusedGrants): AgentUi {
  return new Proxy(ui, {
    get(target, key) {
      if (key === "toolEnd") {
        return (id: string, end: ToolCallEnd) => {
          refused.note(end.error);
          target.toolEnd(id, end);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
