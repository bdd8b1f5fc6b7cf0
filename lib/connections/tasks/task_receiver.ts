/**
 * patchbay as a receiver of tasks (MCP 2025-11-25): a server may ask for a sampling
 * request or a form (elicitation) as a task (`params.task`), get a task id at once, and
 * poll patchbay for the answer (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`).
 * The official ext-tasks receiver keeps those tasks; the answers come from the same
 * handlers, approvals and bounds as a request sent on its own (`requests.ts`).
 *
 * What a server controls is bounded: at most `RECEIVER_MAX_TASKS` tasks are kept for it
 * at once (the oldest finished one is forgotten first; with every one still running, a
 * new one is refused), each for `RECEIVER_TTL_MS`.
 *
 * @module
 */

import type { Client, CreateMessageRequest, ElicitRequest } from "@modelcontextprotocol/client";
import {
  bindTaskReceiver,
  type TaskReceiverBinding,
} from "@modelcontextprotocol/ext-tasks/receiver";
import {
  RECEIVER_MAX_TASKS,
  RECEIVER_POLL_INTERVAL_MS,
  RECEIVER_TTL_MS,
} from "../../tasks/bounds.ts";
import { answerElicitation, answerSampling, type RequestContext } from "../requests.ts";

/**
 * Serves task-backed sampling (and, when offered, elicitation) requests on `client`.
 * Called after `installRequestHandlers`: a request without `params.task` still goes to
 * the plain handler installed there.
 */
export function receiveTasks(
  client: Client,
  context: RequestContext,
  offersSampling: boolean,
  offersElicitation: boolean,
): TaskReceiverBinding {
  return bindTaskReceiver(client, {
    methods: {
      ...(offersSampling ? { "sampling/createMessage": true } : {}),
      ...(offersElicitation ? { "elicitation/create": true } : {}),
    },
    ttlMs: RECEIVER_TTL_MS,
    pollIntervalMs: RECEIVER_POLL_INTERVAL_MS,
    maxTasks: RECEIVER_MAX_TASKS,
    pageSize: RECEIVER_MAX_TASKS,
    ...(offersSampling
      ? {
        sampling: async (request, { signal }) =>
          await answerSampling(
            context,
            withoutTask(request.params) as CreateMessageRequest["params"],
            signal,
          ) as never,
      }
      : {}),
    ...(offersElicitation
      ? {
        elicitation: async (request, { signal }) =>
          await answerElicitation(
            context,
            withoutTask(request.params) as ElicitRequest["params"],
            signal,
          ) as never,
      }
      : {}),
    onError: (error, where) =>
      context.log.debug(`tasks: ${where.method} as a task`, {
        task: where.taskId,
        error: error instanceof Error ? error.message : String(error),
      }),
  });
}

/** The request's own parameters, without the task augmentation. */
function withoutTask(params: Record<string, unknown>): Record<string, unknown> {
  const { task: _task, ...rest } = params;
  return rest;
}
