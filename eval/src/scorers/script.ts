import type { Message } from '@claw/core';
import { result, type ScoreResult, type Scorer } from './types.js';

/** A short, readable form of a request's messages (the last `count`). */
export function describeMessages(messages: readonly Message[], count = 4): string[] {
  const shown = messages.slice(-count).map((message) => {
    switch (message.role) {
      case 'assistant': {
        const calls = (message.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`);
        return `assistant: ${clip(message.content)}${calls.length > 0 ? ` [${calls.join(', ')}]` : ''}`;
      }
      case 'tool':
        return `tool ${message.toolCallId}: ${clip(message.content)}`;
      case 'system':
      case 'user':
        return `${message.role}: ${clip(message.content)}`;
    }
  });
  return messages.length > count ? [`… ${messages.length - count} earlier messages`, ...shown] : shown;
}

function clip(text: string, max = 160): string {
  const flat = text.replaceAll('\n', '⏎');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * The script scorer (EVAL-1): the scripted model must be called exactly as scripted. An extra
 * model call fails the case and shows the request it got; a round no call used fails it too.
 */
export const scoreScript: Scorer = ({ run, relaxed }) => {
  const results: ScoreResult[] = [];
  if (run.timedOut === true) {
    results.push(result('script', 'the run ended in time', 'invariant', false,
      `the run did not end in time: the harness canceled it (it ended ${run.status}); the engine ` +
      'hangs, or the case waits longer than the run time limit',
      { expected: 'the run ends by itself', actual: run.status }));
  }
  if (relaxed || run.mode !== 'scripted') return results;
  const extra = run.modelCalls.filter((call) => call.kind === 'extra');
  const rounds = run.script.length;
  const first = extra[0];
  results.push(
    first === undefined
      ? result('script', 'no extra model call', 'invariant', true,
          `the model was called ${run.modelCalls.length} time(s), within the ${rounds} scripted round(s)`,
          { expected: rounds, actual: run.modelCalls.length })
      : result('script', 'no extra model call', 'invariant', false,
          `the engine made ${extra.length} model call(s) past the script of ${rounds} round(s); ` +
          `call ${first.attempt} was sent:\n${describeMessages(first.messages).join('\n')}`,
          {
            expected: `${rounds} model call(s)`,
            actual: { calls: run.modelCalls.length, request: first.messages, tools: first.tools },
          }),
  );
  results.push(
    run.unusedRounds.length === 0
      ? result('script', 'every round used', 'invariant', true, `all ${rounds} round(s) were replayed`,
          { expected: rounds, actual: rounds })
      : result('script', 'every round used', 'invariant', false,
          `round(s) ${run.unusedRounds.join(', ')} of ${rounds} were never asked for: the run ` +
          `stopped early (${run.status}${run.errorMessage === undefined ? '' : `: ${run.errorMessage}`})`,
          { expected: rounds, actual: rounds - run.unusedRounds.length }),
  );
  return results;
};
