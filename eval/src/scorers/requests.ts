import type { Message } from '@claw/core';
import { compactionMarker, type ModelCallRecord } from '../model.js';
import { fillPlaceholders, roundReasoning, type RequestExpectation } from '../script.js';
import { negativeResult, runEvidence, type Evidence } from './evidence.js';
import { result, type ScoreContext, type ScoreResult, type Scorer } from './types.js';

/** The system message of a request: its first message, when that is one. */
export function systemOf(call: ModelCallRecord): string | undefined {
  const first = call.messages[0];
  return first?.role === 'system' ? first.content : undefined;
}

/** How claw's summary instructions begin (CMP-2): the system message of a summary call. */
export const summaryInstructionsStart = 'You write hand-off notes';

/**
 * True when the request is claw's summary call (CMP-2): the model is offered no tools, and the
 * system message is claw's summary instructions. Written here, not taken from the engine.
 */
export function isSummaryRequest(call: ModelCallRecord): boolean {
  return call.tools.length === 0 && (systemOf(call)?.startsWith(summaryInstructionsStart) ?? false);
}

/** A request's messages after its system message. */
export function conversationOf(call: ModelCallRecord): Message[] {
  return call.messages[0]?.role === 'system' ? call.messages.slice(1) : call.messages;
}

/** True when a message stands for a compacted part of the conversation (CMP-2). */
export function isCompactionMessage(message: Message): boolean {
  return message.role === 'user' && message.content.startsWith(compactionMarker);
}

/** The stub a pruned tool result is sent as (CMP-2). */
export const prunedStubPattern = /^\[output of .* removed to save context; run it again if needed\]$/s;

/**
 * `b` stands for `a` in a later request: the same message, or (a tool result) the stub a
 * compaction prunes it to.
 */
function sameMessage(a: Message, b: Message): boolean {
  if (a.role === 'tool' && b.role === 'tool' && a.toolCallId === b.toolCallId &&
    prunedStubPattern.test(b.content)) {
    return true;
  }
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
 * the latest on a tie (a pruned tool result matches the result it stands for); a compacted one
 * (it holds the message that stands for the replaced part, CMP-2) goes on the conversation whose
 * task — its first message, which compaction keeps verbatim — is its own; any other starts one.
 * The first conversation is the run's own; the others are its subagents' (each keeps its own
 * history). Summary calls belong to none. Written here, not taken from the engine: the scorer
 * must not share the code it checks.
 */
export function conversations(calls: readonly ModelCallRecord[]): ModelCallRecord[][] {
  const groups: ModelCallRecord[][] = [];
  for (const call of calls) {
    if (isSummaryRequest(call)) continue;
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
    const task = messages[0];
    if (best === undefined && task !== undefined && messages.some(isCompactionMessage)) {
      best = groups.find((group) => {
        const first = conversationOf(group[0] as ModelCallRecord)[0];
        return first !== undefined && first.role === task.role && first.content === task.content;
      });
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

/** The text of a message as a request carries it: its content and its calls' arguments. */
function messageText(message: Message): string {
  if (message.role !== 'assistant') return message.content;
  const calls = (message.toolCalls ?? []).map((call) => `${call.name} ${call.arguments}`);
  return [message.content, ...calls].join('\n');
}

const clipped = (text: string): string => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** What is wrong with `call` against what its round expects of it (empty when nothing). */
function requestProblems(call: ModelCallRecord, expected: RequestExpectation): string[] {
  const problems: string[] = [];
  const texts = call.messages.map(messageText);
  if (expected.isSummary !== undefined && isSummaryRequest(call) !== expected.isSummary) {
    problems.push(expected.isSummary
      ? `it is not a summary call (${call.tools.length} tool(s) offered; system message ${clipped(systemOf(call) ?? '(none)')})`
      : 'it is a summary call, not a turn');
  }
  if (expected.firstUser !== undefined) {
    const first = conversationOf(call)[0];
    if (first?.role !== 'user' || first.content !== expected.firstUser) {
      problems.push(`its first message is ${first === undefined ? 'missing' : `${first.role}: ${clipped(first.content)}`}, not the user's ${clipped(expected.firstUser)}`);
    }
  }
  for (const text of expected.contains ?? []) {
    if (!texts.some((candidate) => candidate.includes(text))) problems.push(`it lacks ${clipped(text)}`);
  }
  return problems;
}

/**
 * What the requests the rounds answered held, against each round's `expectRequest`; and, once
 * the run made a summary call, that every summary call was answered by a round written for one
 * (`isSummary: true`): a script must not answer a call it was not written for.
 */
function roundResults(context: ScoreContext): ScoreResult[] {
  const { run } = context;
  const results: ScoreResult[] = [];
  const evidence = runEvidence(context);
  for (const [index, round] of run.script.entries()) {
    const expected = round.expectRequest;
    if (expected === undefined) continue;
    const number = index + 1;
    const call = run.modelCalls.find((candidate) => candidate.round === number);
    const positive = expected.contains !== undefined || expected.firstUser !== undefined ||
      expected.isSummary !== undefined;
    if (positive) {
      const problems = call === undefined ? [`round ${number} answered no request`] : requestProblems(call, expected);
      results.push(result('requests', `round ${number} request`, 'positive', problems.length === 0,
        problems.length === 0
          ? `request ${call?.attempt} (answered by round ${number}) is as the round expects`
          : call === undefined ? problems.join('; ') : `request ${call.attempt} (round ${number}): ${problems.join('; ')}`,
        {
          expected,
          actual: call === undefined
            ? null
            : {
                attempt: call.attempt,
                summary: isSummaryRequest(call),
                messages: call.messages.length,
              },
        }));
    }
    if (expected.absent !== undefined) {
      const texts = call?.messages.map(messageText) ?? [];
      const found = expected.absent.filter((text) =>
        texts.some((candidate) => candidate.includes(text)));
      // The request was sent: that is the evidence that it could have carried them.
      const sent: Evidence = call === undefined
        ? { reached: false, reason: `round ${number} answered no request` }
        : evidence.reached
          ? { reached: true, reason: `request ${call.attempt} was sent` }
          : evidence;
      results.push(negativeResult('requests', `round ${number} request leaves out`, found.length === 0, sent,
        found.length === 0
          ? `request ${call?.attempt ?? '?'} carries none of ${expected.absent.map(clipped).join(', ')}`
          : `request ${call?.attempt ?? '?'} (round ${number}) carries ${found.map(clipped).join(', ')}`,
        { expected: expected.absent, actual: found }));
    }
  }
  const summaries = run.modelCalls.filter(isSummaryRequest);
  const marked = run.script.some((round) => round.expectRequest?.isSummary === true);
  if (summaries.length > 0 || marked) {
    const unmarked = summaries.filter((call) =>
      call.round !== undefined && run.script[call.round - 1]?.expectRequest?.isSummary !== true);
    results.push(result('requests', 'summary calls answered as scripted', 'invariant', unmarked.length === 0,
      unmarked.length === 0
        ? `each of the ${count(summaries.length, 'summary call')} was answered by a round written for one`
        : unmarked.map((call) => `request ${call.attempt} is a summary call, but round ${call.round} was not written for one (mark it expectRequest: { isSummary: true })`).join('; '),
      {
        expected: [],
        actual: unmarked.map((call) => ({ attempt: call.attempt, round: call.round })),
      }));
  }
  return results;
}

/**
 * The requests scorer (REAL-1, REAL-2, REAL-4, CMP-2): what claw sent the model, as the scripted
 * model received it (over HTTP: the request bodies the fake server got). The system message of
 * the run's requests contains the given texts, in order, and leaves others out; it is
 * byte-identical in every request of the run, and of each subagent (checked apart; summary calls
 * have claw's summary instructions instead); the reasoning of a reply is never sent back; each
 * round's request holds what the round expects, and summary calls are answered by rounds written
 * for them. Scripted runs only: against a real model the requests are not recorded.
 */
export const scoreRequests: Scorer = (context) => {
  const { run, evalCase } = context;
  if (run.infraError !== undefined || run.mode !== 'scripted') return [];
  const rounds = roundResults(context);
  if (evalCase.expect.requests === undefined) return rounds;
  const groups = conversations(run.modelCalls);
  return [...systemResults(context, groups), ...reasoningResult(context), ...rounds];
};
