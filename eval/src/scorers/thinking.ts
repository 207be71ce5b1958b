import type { AssistantMessage } from '@claw/core';
import type { RunRecord } from '../run-record.js';
import { callId, roundReasoning, roundText, type Round } from '../script.js';
import { negativeResult, runEvidence, runMessages, type Evidence } from './evidence.js';
import { result, type ScoreContext, type ScoreResult } from './types.js';

/** The reasoning the run reported, its pieces joined (the reporter's `onThinkingDelta`). */
export function reportedThinking(run: RunRecord): string {
  return run.timeline
    .filter((event) => event.type === 'thinking_delta')
    .map((event) => event.detail)
    .join('');
}

/** The scripted replies the run got, in order, with their rounds. */
function answeredRounds(run: RunRecord): Array<{ number: number; round: Round }> {
  return run.modelCalls.flatMap((call) => {
    const round = call.round === undefined ? undefined : run.script[call.round - 1];
    return call.kind === 'reply' && call.outcome === 'completed' && round !== undefined && call.round !== undefined
      ? [{ number: call.round, round }]
      : [];
  });
}

/**
 * The assistant message a scripted reply left in the run's history: the one with the reply's
 * call ids, or for a reply of text alone, the one with its text and no calls. Undefined for a
 * reply that is not in this history (a subagent's).
 */
function messageOf(
  messages: readonly AssistantMessage[],
  number: number,
  round: Round,
): AssistantMessage | undefined {
  if ((round.toolCalls ?? []).length > 0) {
    const id = callId(number, 0);
    return messages.find((message) => message.toolCalls?.[0]?.id === id);
  }
  const text = roundText(round);
  return messages.find((message) =>
    (message.toolCalls ?? []).length === 0 && message.content === text);
}

/**
 * The thinking expectations (REAL-4), scored by the state scorer: the reasoning the run reported
 * (exactly a text, or the script's), kept on the reply's message in the session, and never in
 * the answer.
 */
export function thinkingResults(context: ScoreContext): ScoreResult[] {
  const { run, evalCase, relaxed } = context;
  const expectation = evalCase.expect.thinking;
  if (expectation === undefined || run.infraError !== undefined) return [];
  const results: ScoreResult[] = [];
  const reported = reportedThinking(run);
  const pieces = run.timeline.filter((event) => event.type === 'thinking_delta').length;
  if (expectation.equals !== undefined && !relaxed) {
    const pass = reported === expectation.equals;
    results.push(result('state', 'thinking', 'positive', pass,
      pass
        ? `the run reported the expected reasoning in ${pieces} piece(s)`
        : reported === '' ? 'the run reported no reasoning' : 'the run reported other reasoning',
      { expected: expectation.equals, actual: reported }));
  }
  const answered = answeredRounds(run);
  const scripted = answered.filter((entry) => roundReasoning(entry.round) !== '');
  if (expectation.fromScript === true && !relaxed) {
    const expected = answered.map((entry) => roundReasoning(entry.round)).join('');
    const pass = expected !== '' && reported === expected;
    results.push(result('state', 'thinking from the script', 'positive', pass,
      expected === ''
        ? 'no reply of the run had scripted reasoning: there is nothing to compare'
        : pass
          ? `the run reported the reasoning of ${scripted.length} scripted repl${scripted.length === 1 ? 'y' : 'ies'}, in order (${pieces} piece(s))`
          : reported === '' ? 'the run reported no reasoning' : 'the reported reasoning is not the scripted replies\' reasoning',
      { expected, actual: reported }));
  }
  const messages = runMessages(context).filter(
    (message): message is AssistantMessage => message.role === 'assistant',
  );
  if (expectation.stored === true && !relaxed) {
    const problems: string[] = [];
    let checked = 0;
    for (const { number, round } of scripted) {
      const message = messageOf(messages, number, round);
      if (message === undefined) continue;
      checked += 1;
      if (message.reasoning !== roundReasoning(round)) {
        problems.push(message.reasoning === undefined
          ? `the message of reply ${number} keeps no reasoning`
          : `the message of reply ${number} keeps other reasoning: ${JSON.stringify(message.reasoning.slice(0, 60))}`);
      }
    }
    const pass = checked > 0 && problems.length === 0;
    results.push(result('state', 'thinking stored', 'positive', pass,
      checked === 0
        ? 'no reply with reasoning left a message in the run\'s history: nothing was checked'
        : pass ? `the messages of ${checked} repl${checked === 1 ? 'y' : 'ies'} with reasoning keep it in the session` : problems.join('; '),
      {
        expected: scripted.map((entry) => roundReasoning(entry.round)),
        actual: messages.map((message) => message.reasoning ?? null),
      }));
  }
  if (expectation.notInAnswer === true) {
    // The scripted reasoning (the reported one against a real model), each reply's apart.
    const texts = (relaxed ? [reported] : scripted.map((entry) => roundReasoning(entry.round)))
      .map((text) => text.trim())
      .filter((text) => text !== '');
    const found: string[] = [];
    for (const text of texts) {
      const shown = JSON.stringify(text.slice(0, 60));
      if (run.finalText.includes(text)) found.push(`the final answer holds ${shown}`);
      const index = messages.findIndex((message) => message.content.includes(text));
      if (index >= 0) found.push(`assistant message ${index + 1} of the run holds ${shown} in its text`);
    }
    const base = runEvidence(context);
    const evidence: Evidence = !base.reached
      ? base
      : reported === ''
        ? { reached: false, reason: 'the run reported no reasoning that could have leaked' }
        : base;
    results.push(negativeResult('state', 'thinking not in the answer', found.length === 0, evidence,
      found.length === 0 ? 'no reasoning shows in the answer or the replies\' text' : found.join('; '),
      { expected: [], actual: found }));
  }
  return results;
}
