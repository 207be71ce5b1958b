import type { Message } from '@claw/core';
import type { ModelCallRecord } from '../model.js';
import { fillPlaceholders, roundReasoning } from '../script.js';
import { negativeResult, runEvidence, type Evidence } from './evidence.js';
import { result, type ScoreContext, type ScoreResult, type Scorer } from './types.js';

/** The system message of a request: its first message, when that is one. */
export function systemOf(call: ModelCallRecord): string | undefined {
  const first = call.messages[0];
  return first?.role === 'system' ? first.content : undefined;
}

/** A request's messages after its system message. */
function conversationOf(call: ModelCallRecord): Message[] {
  return call.messages[0]?.role === 'system' ? call.messages.slice(1) : call.messages;
}

function sameMessage(a: Message, b: Message): boolean {
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === 'tool' && b.role === 'tool') return a.toolCallId === b.toolCallId;
  if (a.role === 'assistant' && b.role === 'assistant') {
    const left = a.toolCalls ?? [];
    const right = b.toolCalls ?? [];
    return left.length === right.length && left.every((call, index) =>
      call.id === right[index]?.id && call.name === right[index]?.name &&
      call.arguments === right[index]?.arguments);
  }
  return true;
}

function startsWith(messages: readonly Message[], head: readonly Message[]): boolean {
  return head.length <= messages.length && head.every((message, index) => {
    const other = messages[index];
    return other !== undefined && sameMessage(message, other);
  });
}

/**
 * The requests of a run, grouped into conversations: a request goes on the conversation whose
 * latest request's messages (after the system message) its own start with — the longest such,
 * the latest on a tie — and otherwise starts one. The first conversation is the run's own; the
 * others are its subagents' (each keeps its own history). Written here, not taken from the
 * engine: the scorer must not share the code it checks.
 */
export function conversations(calls: readonly ModelCallRecord[]): ModelCallRecord[][] {
  const groups: ModelCallRecord[][] = [];
  for (const call of calls) {
    const messages = conversationOf(call);
    let best: ModelCallRecord[] | undefined;
    let bestLength = -1;
    for (const group of groups) {
      const latest = conversationOf(group[group.length - 1] as ModelCallRecord);
      if (latest.length >= bestLength && startsWith(messages, latest)) {
        best = group;
        bestLength = latest.length;
      }
    }
    if (best === undefined) groups.push([call]);
    else best.push(call);
  }
  return groups;
}

/** Where `text` first differs from `reference`, with a little of each around it. */
export function firstDifference(reference: string, text: string): string {
  let index = 0;
  const end = Math.min(reference.length, text.length);
  while (index < end && reference[index] === text[index]) index += 1;
  const around = (value: string): string =>
    JSON.stringify(value.slice(Math.max(0, index - 20), index + 40));
  return `at character ${index}: ${around(reference)} became ${around(text)}`;
}

/**
 * Where each of `wanted` is found in `text`, each after the end of the one before; with the first
 * that is not, and why.
 */
export function orderIn(
  text: string,
  wanted: readonly string[],
): { positions: number[]; problem?: string } {
  const positions: number[] = [];
  let from = 0;
  for (const [index, piece] of wanted.entries()) {
    const at = text.indexOf(piece, from);
    if (at < 0) {
      const before = wanted[index - 1];
      return {
        positions,
        problem: !text.includes(piece) || before === undefined
          ? `${JSON.stringify(piece)} is not in it`
          : `${JSON.stringify(piece)} does not come after ${JSON.stringify(before)}`,
      };
    }
    positions.push(at);
    from = at + piece.length;
  }
  return { positions };
}

const reasoningFields = ['reasoning', 'reasoning_content', 'reasoning_details'];

/** The reasoning fields a message carries on the wire. */
function wireReasoningFields(message: unknown): string[] {
  if (typeof message !== 'object' || message === null) return [];
  return reasoningFields.filter((field) => field in message);
}

const count = (value: number, noun: string, plural = `${noun}s`): string =>
  `${value} ${value === 1 ? noun : plural}`;

function systemResults(context: ScoreContext, groups: ModelCallRecord[][]): ScoreResult[] {
  const { run, evalCase } = context;
  const expectation = evalCase.expect.requests?.system;
  if (expectation === undefined) return [];
  const results: ScoreResult[] = [];
  const fill = (text: string): string =>
    run.folders === undefined ? text : fillPlaceholders(text, run.folders);
  const own = groups[0] ?? [];
  const sent = own.length === 0 ? 'no request was sent' : undefined;

  if (expectation.contains !== undefined) {
    const wanted = expectation.contains.map(fill);
    const problems = own.flatMap((call) => {
      const text = systemOf(call);
      if (text === undefined) return [{ attempt: call.attempt, missing: wanted }];
      const missing = wanted.filter((piece) => !text.includes(piece));
      return missing.length === 0 ? [] : [{ attempt: call.attempt, missing }];
    });
    const pass = own.length > 0 && problems.length === 0;
    results.push(result('requests', 'system message contains', 'positive', pass,
      sent ?? (pass
        ? `each of the run's ${count(own.length, 'request')} carries the ${count(wanted.length, 'expected text')} in its system message`
        : problems.map((problem) => `request ${problem.attempt} lacks ${problem.missing.map((piece) => JSON.stringify(piece)).join(', ')}`).join('; ')),
      { expected: wanted, actual: problems }));
  }

  if (expectation.order !== undefined) {
    const wanted = expectation.order.map(fill);
    const problems: string[] = [];
    let positions: number[] = [];
    for (const call of own) {
      const text = systemOf(call);
      if (text === undefined) {
        problems.push(`request ${call.attempt} has no system message`);
        continue;
      }
      const found = orderIn(text, wanted);
      if (call === own[0]) positions = found.positions;
      if (found.problem !== undefined) problems.push(`request ${call.attempt}: ${found.problem}`);
    }
    const pass = own.length > 0 && problems.length === 0;
    results.push(result('requests', 'system message order', 'positive', pass,
      sent ?? (pass
        ? `in each of the run's ${count(own.length, 'request')}, the system message has the ${count(wanted.length, 'text')} in order (at characters ${positions.join(', ')} of the first)`
        : problems.join('; ')),
      { expected: wanted, actual: { positions, problems } }));
  }

  if (expectation.absent !== undefined) {
    const unwanted = expectation.absent.map(fill);
    const found = own.flatMap((call) => {
      const text = systemOf(call) ?? '';
      const present = unwanted.filter((piece) => text.includes(piece));
      return present.length === 0 ? [] : [{ attempt: call.attempt, present }];
    });
    const base = runEvidence(context);
    const withSystem = own.filter((call) => systemOf(call) !== undefined).length;
    // A run that sent no system message lacks every text, which proves nothing.
    const evidence: Evidence = !base.reached
      ? base
      : withSystem === 0
        ? { reached: false, reason: 'no request of the run carried a system message' }
        : { reached: true, reason: `${base.reason}; ${count(withSystem, 'request')} with a system message` };
    results.push(negativeResult('requests', 'system message leaves out', found.length === 0, evidence,
      found.length === 0
        ? `no request of the run carries ${unwanted.map((piece) => JSON.stringify(piece)).join(', ')} in its system message`
        : found.map((entry) => `request ${entry.attempt} carries ${entry.present.map((piece) => JSON.stringify(piece)).join(', ')}`).join('; '),
      { expected: unwanted.map(() => 'absent'), actual: found }));
  }

  if (expectation.stable === true) {
    const problems: string[] = [];
    const facts: string[] = [];
    for (const [index, group] of groups.entries()) {
      const who = index === 0 ? 'the run' : `subagent ${index}`;
      const first = group[0] as ModelCallRecord;
      const reference = systemOf(first);
      if (reference === undefined) {
        problems.push(`${who}: request ${first.attempt} has no system message`);
        continue;
      }
      const differing = group.find((call) => systemOf(call) !== reference);
      if (differing !== undefined) {
        const text = systemOf(differing);
        problems.push(text === undefined
          ? `${who}: request ${differing.attempt} has no system message, request ${first.attempt} had one`
          : `${who}: the system message of request ${differing.attempt} differs from request ${first.attempt}'s ${firstDifference(reference, text)}`);
        continue;
      }
      facts.push(`${who}: ${count(group.length, 'request')}, ${reference.length} characters`);
    }
    const enough = own.length >= 2;
    const pass = enough && problems.length === 0;
    results.push(result('requests', 'system message stable', 'positive', pass,
      sent ?? (problems.length > 0
        ? problems.join('; ')
        : enough
          ? `one byte-identical system message in every request: ${facts.join('; ')}`
          : `the run sent ${count(own.length, 'request')}: nothing to compare it with`),
      {
        expected: 'one system message per conversation',
        actual: groups.map((group) => ({
          requests: group.map((call) => call.attempt),
          systemMessages: new Set(group.map((call) => systemOf(call) ?? null)).size,
        })),
      }));
  }
  return results;
}

function reasoningResult(context: ScoreContext): ScoreResult[] {
  const { run, evalCase } = context;
  if (evalCase.expect.requests?.reasoningNotSent !== true) return [];
  const reasoned = run.modelCalls.flatMap((call) => {
    const round = call.round === undefined ? undefined : run.script[call.round - 1];
    const text = round === undefined ? '' : roundReasoning(round);
    return call.kind === 'reply' && call.outcome === 'completed' && text.trim() !== ''
      ? [{ attempt: call.attempt, text }]
      : [];
  });
  const first = reasoned[0];
  if (first === undefined) {
    return [result('requests', 'reasoning not sent back', 'positive', false,
      'no reply of the run had reasoning: there was nothing that could be sent back',
      { expected: 'requests after a reply with reasoning', actual: [] })];
  }
  const problems: string[] = [];
  const later = run.modelCalls.filter((call) => call.attempt > first.attempt);
  for (const call of later) {
    const before = reasoned.filter((entry) => entry.attempt < call.attempt);
    const fields = call.wire.flatMap((message, index) =>
      wireReasoningFields(message).map((field) => `message ${index} has "${field}"`));
    const wire = JSON.stringify(call.wire);
    const echoed = before.filter((entry) => wire.includes(JSON.stringify(entry.text).slice(1, -1)));
    if (fields.length > 0) problems.push(`request ${call.attempt}: ${fields.join(', ')}`);
    for (const entry of echoed) {
      problems.push(`request ${call.attempt} sends the reasoning of reply ${entry.attempt} back (${JSON.stringify(entry.text.slice(0, 60))})`);
    }
  }
  const pass = later.length > 0 && problems.length === 0;
  return [result('requests', 'reasoning not sent back', 'positive', pass,
    later.length === 0
      ? `no request followed the reply with reasoning (request ${first.attempt}): nothing was checked`
      : pass
        ? `${count(later.length, 'request')} after ${count(reasoned.length, 'reply', 'replies')} with reasoning carried no reasoning field and none of its text`
        : problems.join('; '),
    { expected: [], actual: problems })];
}

/**
 * The requests scorer (REAL-1, REAL-2, REAL-4): what claw sent the model, as the scripted model
 * received it (over HTTP: the request bodies the fake server got). The system message of the
 * run's requests contains the given texts, in order, and leaves others out; it is byte-identical
 * in every request of the run, and of each subagent (checked apart); the reasoning of a reply is
 * never sent back. Scripted runs only: against a real model the requests are not recorded.
 */
export const scoreRequests: Scorer = (context) => {
  const { run, evalCase } = context;
  if (evalCase.expect.requests === undefined || run.infraError !== undefined) return [];
  if (run.mode !== 'scripted') return [];
  const groups = conversations(run.modelCalls);
  return [...systemResults(context, groups), ...reasoningResult(context)];
};
