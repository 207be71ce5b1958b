import type { StreamTaskResult } from '@claw/channel';
import {
  summaryOfTally,
  tallyTask,
  type ServerEvent,
  type TaskTally,
} from '@claw/channel/protocol';

/** The one object `claw -p --output json` prints: how the task went, and what it did. */
export type TaskResultJson = {
  type: 'result';
  session_id: string;
  task_id?: string;
  status: 'completed' | 'canceled' | 'failed' | 'error';
  /** The final answer (completed). */
  answer?: string;
  /** Why it was canceled. */
  reason?: string;
  /** What went wrong (failed: the task; error: the session or the output). */
  error?: { code: string; message: string };
  model_calls?: number;
  tool_calls?: number;
  failed_tool_calls?: number;
  tokens?: number;
  /** Of the prompt tokens, those the server read from its prompt cache (REAL-5). */
  cached_tokens?: number;
  cost_usd?: number;
  unpriced_calls?: number;
  elapsed_ms?: number;
};

/** The tally after `event` (as `streamTask` tells it): session events count, not others. */
export function tallyEvent(
  tally: TaskTally | undefined,
  event: ServerEvent,
): TaskTally | undefined {
  if (!('seq' in event) || !('at' in event)) return tally;
  const at = Date.parse(event.at);
  return tallyTask(tally, event, Number.isNaN(at) ? Date.now() : at);
}

/** The result object of a streamed task (`tally`: its events counted, see `tallyLines`). */
export function taskResultJson(
  sessionId: string,
  result: StreamTaskResult,
  tally: TaskTally | undefined,
): TaskResultJson {
  if (!result.ok) {
    const error = 'error' in result
      ? { code: result.error.code, message: result.error.message }
      : { code: 'output_closed', message: `the output closed: ${result.closed.message}` };
    return { type: 'result', session_id: sessionId, status: 'error', error };
  }
  const { end } = result;
  const outcome: Pick<TaskResultJson, 'status' | 'answer' | 'reason' | 'error'> =
    end.type === 'task_completed'
      ? { status: 'completed', answer: end.content }
      : end.type === 'task_canceled'
        ? { status: 'canceled', ...(end.reason === undefined ? {} : { reason: end.reason }) }
        : { status: 'failed', error: { code: end.code, message: end.error } };
  const counted = tally?.taskId === end.task_id
    ? summaryOfTally(tally, Date.parse(end.at))
    : undefined;
  return {
    type: 'result',
    session_id: sessionId,
    task_id: end.task_id,
    ...outcome,
    ...(counted === undefined
      ? {}
      : {
          model_calls: counted.modelCalls,
          tool_calls: counted.toolCalls,
          failed_tool_calls: counted.failedToolCalls,
          tokens: counted.tokens,
          cached_tokens: counted.cachedTokens,
          cost_usd: counted.costUsd,
          unpriced_calls: counted.unpricedCalls,
          elapsed_ms: counted.elapsedMs,
        }),
  };
}
