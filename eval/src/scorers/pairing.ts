import type { Message } from '@claw/core';
import { canceledObservationText } from '@claw/engine';
import {
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
} from '@claw/session-store';
import { runMessages } from './evidence.js';
import { result, type ScoreResult, type Scorer } from './types.js';

const repairTexts = new Set([
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
]);

/**
 * What is wrong with the pairing of `messages` (empty when nothing): every tool call of an
 * assistant message has exactly one Observation in the run of tool messages right after it, and
 * no Observation stands anywhere else. Written here on purpose, not taken from the engine: the
 * scorer must not share the code it checks.
 */
export function pairingProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let index = 0;
  while (index < messages.length) {
    const message = messages[index];
    index += 1;
    if (message === undefined) continue;
    if (message.role === 'tool') {
      problems.push(`message ${index - 1}: an Observation for ${message.toolCallId} follows no tool call`);
      continue;
    }
    if (message.role !== 'assistant' || (message.toolCalls ?? []).length === 0) continue;
    const seen = new Map<string, number>();
    while (messages[index]?.role === 'tool') {
      const observation = messages[index] as Extract<Message, { role: 'tool' }>;
      seen.set(observation.toolCallId, (seen.get(observation.toolCallId) ?? 0) + 1);
      index += 1;
    }
    const ids = new Set<string>();
    for (const call of message.toolCalls ?? []) {
      ids.add(call.id);
      const count = seen.get(call.id) ?? 0;
      if (count !== 1) {
        problems.push(`${call.id} (${call.name}) has ${count} Observations, not exactly one`);
      }
    }
    for (const id of seen.keys()) {
      if (!ids.has(id)) problems.push(`an Observation for ${id} answers no call of the message before it`);
    }
  }
  return problems;
}

/**
 * The pairing scorer (EVAL-3): every tool call id has exactly one Observation — in the session's
 * history after the run (also after a cancel) and in every request the model was sent — and the
 * counts the case expects of canceled and repaired Observations.
 */
export const scorePairing: Scorer = (context) => {
  const { run, evalCase } = context;
  if (run.infraError !== undefined) return [];
  const results: ScoreResult[] = [];
  const history = pairingProblems(run.history);
  results.push(result('pairing', 'history paired', 'invariant', history.length === 0,
    history.length === 0
      ? `every tool call in the history (${run.history.length} messages) has exactly one Observation`
      : history.join('; '),
    { expected: [], actual: history }));
  const unpairedRequests = run.modelCalls
    .map((call) => ({ call, problems: pairingProblems(call.messages) }))
    .filter((entry) => entry.problems.length > 0);
  results.push(result('pairing', 'requests paired', 'invariant', unpairedRequests.length === 0,
    unpairedRequests.length === 0
      ? `every request (${run.modelCalls.length}) was sent with its tool calls paired`
      : unpairedRequests.map((entry) => `request ${entry.call.attempt}: ${entry.problems.join('; ')}`).join(' | '),
    {
      expected: [],
      actual: unpairedRequests.map(({ call, problems }) => ({ attempt: call.attempt, problems })),
    }));

  const expectation = evalCase.expect.pairing;
  if (expectation === undefined) return results;
  const observations = runMessages(context).filter((message) => message.role === 'tool');
  if (expectation.canceled !== undefined) {
    const count = observations
      .filter((message) => message.content === canceledObservationText).length;
    results.push(result('pairing', 'canceled Observations', 'positive', count === expectation.canceled,
      `${count} Observation(s) say "${canceledObservationText}"${count === expectation.canceled ? '' : `, expected ${expectation.canceled}`}`,
      { expected: expectation.canceled, actual: count }));
  }
  if (expectation.repaired !== undefined) {
    const count = run.history.filter((message) => message.role === 'tool' && repairTexts.has(message.content)).length;
    results.push(result('pairing', 'repaired Observations', 'positive', count === expectation.repaired,
      `${count} Observation(s) were inserted by the repair of an interrupted run${count === expectation.repaired ? '' : `, expected ${expectation.repaired}`}`,
      { expected: expectation.repaired, actual: count }));
  }
  if (expectation.firstRequestPaired === true) {
    const first = run.modelCalls[0];
    const problems = first === undefined ? ['no request was sent'] : pairingProblems(first.messages);
    const unpairedBefore = run.seededMessages > 0
      ? pairingProblems(evalCase.session?.history ?? [])
      : [];
    const pass = problems.length === 0 && unpairedBefore.length > 0;
    results.push(result('pairing', 'first request paired', 'positive', pass,
      problems.length > 0
        ? `the first request was sent unpaired: ${problems.join('; ')}`
        : unpairedBefore.length === 0
          ? 'the seeded history had nothing to repair: the case tests nothing'
          : `the stored history had ${unpairedBefore.length} unpaired call(s); the first request had none`,
      { expected: [], actual: problems }));
  }
  return results;
};
