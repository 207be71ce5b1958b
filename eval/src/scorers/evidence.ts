import type { Message, ToolCall, ToolMessage } from '@claw/core';
import type { ScorerName } from '../case.js';
import { result, type ScoreContext, type ScoreResult } from './types.js';

/** Whether the run got as far as a negative assertion needs, and why (not). */
export interface Evidence {
  reached: boolean;
  reason: string;
}

/**
 * Evidence that the run got as far as the case meant it to (EVAL-3): a negative assertion ("no
 * write happened") proves nothing about a run that stopped before the write. The run must have
 * ended the way the case expects (completed, unless its outcome says otherwise), and a scripted
 * run must have used every round of its script.
 */
export function runEvidence(context: ScoreContext): Evidence {
  const { run, evalCase } = context;
  if (run.infraError !== undefined) {
    return { reached: false, reason: `the harness failed: ${run.infraError.split('\n')[0]}` };
  }
  const expectedStatus = evalCase.expect.outcome?.status ?? 'completed';
  if (run.status !== expectedStatus) {
    return {
      reached: false,
      reason:
        `the run ended ${run.status}${run.errorMessage === undefined ? '' : ` (${run.errorMessage})`}, ` +
        `not ${expectedStatus} as the case expects, so it may have stopped before the point this checks`,
    };
  }
  if (run.mode === 'scripted' && run.unusedRounds.length > 0) {
    return {
      reached: false,
      reason: `round${run.unusedRounds.length === 1 ? '' : 's'} ${run.unusedRounds.join(', ')} of the script never ran`,
    };
  }
  return {
    reached: true,
    reason: run.mode === 'scripted'
      ? `the run ended ${run.status} after every round of the script`
      : `the run ended ${run.status}`,
  };
}

/** The messages of this run (after the seeded history). */
export function runMessages(context: ScoreContext): Message[] {
  return context.run.history.slice(context.run.seededMessages);
}

/** The tool calls of this run's assistant messages, in order. */
export function runToolCalls(context: ScoreContext): ToolCall[] {
  return runMessages(context).flatMap((message) =>
    message.role === 'assistant' ? message.toolCalls ?? [] : [],
  );
}

/** The Observations in `messages` for the call `id`. */
export function observationsOf(messages: readonly Message[], id: string): ToolMessage[] {
  return messages.filter(
    (message): message is ToolMessage => message.role === 'tool' && message.toolCallId === id,
  );
}

/** A negative assertion: it passes only when it holds and the run got far enough to matter. */
export function negativeResult(
  scorer: ScorerName,
  assertion: string,
  holds: boolean,
  evidence: Evidence,
  reason: string,
  values: { expected?: unknown; actual?: unknown },
  kind: ScoreResult['kind'] = 'negative',
): ScoreResult {
  if (!holds) return result(scorer, assertion, kind, false, reason, values);
  if (!evidence.reached) {
    return result(scorer, assertion, kind, false,
      `${reason}, but that proves nothing: ${evidence.reason}`, values);
  }
  return result(scorer, assertion, kind, true, `${reason} (${evidence.reason})`, values);
}
