// What the running task has done, counted from its events, for the line that ends it (pure).
import { describeTaskSummary, type SessionEvent } from '@claw/channel/protocol';
import type { TaskTally } from './types.js';

/**
 * The tally after `event`: a new one at `task_started` (from its time), counted on by the task's
 * model calls, tool calls and results, and usage; other events leave it as it is.
 */
export function tallied(
  tally: TaskTally | undefined,
  event: SessionEvent,
  at: number,
): TaskTally | undefined {
  if (event.type === 'task_started') {
    return {
      taskId: event.task_id,
      startedAt: at,
      modelCalls: 0,
      toolCalls: 0,
      failedToolCalls: 0,
      tokens: 0,
      costUsd: 0,
      unpricedCalls: 0,
    };
  }
  if (tally === undefined || !('task_id' in event) || event.task_id !== tally.taskId) return tally;
  if (event.type === 'thinking') return { ...tally, modelCalls: tally.modelCalls + 1 };
  if (event.type === 'tool_call') return { ...tally, toolCalls: tally.toolCalls + 1 };
  if (event.type === 'tool_result' && event.is_error) {
    return { ...tally, failedToolCalls: tally.failedToolCalls + 1 };
  }
  if (event.type === 'usage') {
    return {
      ...tally,
      tokens: event.run.total_tokens,
      costUsd: event.cost.run_usd,
      unpricedCalls: tally.unpricedCalls + (event.cost.call_usd === null ? 1 : 0),
    };
  }
  return tally;
}

/**
 * The line that tells what task `taskId` did, as the terminal tells it (`describeTaskSummary`),
 * when this page saw it from its start and it did something (tokens or tool calls): a task that
 * failed before any work is told by its error alone.
 */
export function taskSummaryText(
  tally: TaskTally | undefined,
  taskId: string,
  endedAt: number,
): string | undefined {
  if (tally === undefined || tally.taskId !== taskId) return undefined;
  if (tally.tokens === 0 && tally.toolCalls === 0) return undefined;
  return describeTaskSummary({ ...tally, elapsedMs: Math.max(0, endedAt - tally.startedAt) });
}
