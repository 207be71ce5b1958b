// The line that ends a task in the transcript: what it did, as the terminal says it (pure).
import { describeTaskSummary, summaryOfTally, type TaskTally } from '@claw/channel/protocol';

/**
 * The line that tells what task `taskId` did (`describeTaskSummary`), when this page saw it from
 * its start (`tally`, counted by `tallyTask`) and it did something (tokens or tool calls): a task
 * that failed before any work is told by its error alone.
 */
export function taskSummaryText(
  tally: TaskTally | undefined,
  taskId: string,
  endedAt: number,
): string | undefined {
  if (tally === undefined || tally.taskId !== taskId) return undefined;
  if (tally.tokens === 0 && tally.toolCalls === 0) return undefined;
  return describeTaskSummary(summaryOfTally(tally, endedAt));
}
