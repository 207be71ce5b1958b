import type { Compaction, Message } from '@claw/core';
import type { ModelCallRecord } from '../model.js';
import type { RunRecord } from '../run-record.js';
import { compactSpans, runSpan } from '../span-tree.js';
import {
  conversationOf,
  isCompactionMessage,
  isSummaryRequest,
  prunedStubPattern,
} from './requests.js';
import { result, type ScoreResult, type Scorer } from './types.js';

/** JSON with object keys sorted: equal values give equal text whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item);
}

const plural = (value: number, noun: string): string => `${value} ${noun}${value === 1 ? '' : 's'}`;

function describe(compaction: Compaction): string {
  const what = compaction.summarisedMessages === 0
    ? 'nothing summarised'
    : `${compaction.summarisedMessages} messages ${compaction.summaryError === undefined ? 'summarised' : 'left out'}`;
  return `${compaction.reason} (${compaction.tokensBefore} → ${compaction.tokensAfter} tokens, ` +
    `${compaction.prunedResults} pruned, ${what})`;
}

/** The summary calls the model was sent; an attempt sent again (the same request) counts once. */
function summaryRequests(run: RunRecord): ModelCallRecord[] {
  const calls = run.modelCalls;
  return calls.filter((call, index) => {
    if (!isSummaryRequest(call)) return false;
    const next = calls[index + 1];
    const retried = call.kind === 'fault' && next !== undefined &&
      JSON.stringify(next.wire) === JSON.stringify(call.wire);
    return !retried;
  });
}

/** What a `context_compacted` event must say of a compaction (CMP-5). */
function eventFields(compaction: Compaction): Record<string, unknown> {
  return {
    reason: compaction.reason,
    tokens_before: compaction.tokensBefore,
    tokens_after: compaction.tokensAfter,
    pruned_results: compaction.prunedResults,
    summarised_messages: compaction.summarisedMessages,
    // The summary is told when one was made in this compaction.
    summary: compaction.summarisedMessages === 0 ? undefined : compaction.summary,
    error: compaction.summaryError,
  };
}

/** How the reporter's compactions, the run's result and the session's events disagree. */
function agreementProblems(run: RunRecord): string[] {
  const problems: string[] = [];
  const heard = run.compactions.map((entry) => entry.compaction);
  if (run.eventsError !== undefined) problems.push(`the session's events could not be read: ${run.eventsError}`);
  if (run.compactionEvents.length !== heard.length) {
    problems.push(`the reporter was told of ${heard.length}, the session logged ${plural(run.compactionEvents.length, 'context_compacted event')}`);
  }
  const counted = run.result?.compactions;
  if (counted !== undefined && counted !== heard.length) {
    problems.push(`the run's result counts ${counted}, the reporter was told of ${heard.length}`);
  }
  for (const [index, compaction] of heard.entries()) {
    const event = run.compactionEvents[index] as Record<string, unknown> | undefined;
    if (event === undefined) continue;
    const differing = Object.entries(eventFields(compaction))
      .filter(([key, value]) => event[key] !== value)
      .map(([key, value]) => `${key} ${JSON.stringify(event[key] ?? null)}, expected ${JSON.stringify(value ?? null)}`);
    if (differing.length > 0) problems.push(`event ${index + 1}: ${differing.join(', ')}`);
  }
  return problems;
}

/**
 * What is wrong with `request` as the view of `history` under `compaction` (CMP-2): the user
 * messages kept come first, verbatim, then the message that stands for the replaced part (the
 * summary, or that it was left out), none of the replaced calls, and pruned results as a stub.
 * Written from the rule, not from the engine's code.
 */
function viewProblems(
  request: ModelCallRecord,
  history: readonly Message[],
  compaction: Compaction,
): string[] {
  const problems: string[] = [];
  const messages = conversationOf(request);
  if (compaction.upTo > 0) {
    for (const [position, index] of compaction.kept.entries()) {
      const kept = history[index];
      const sent = messages[position];
      if (kept === undefined || sent?.role !== 'user' || sent.content !== kept.content) {
        problems.push(`message ${position + 1} is not the user's message ${index} verbatim`);
      }
    }
    const stand = messages[compaction.kept.length];
    if (stand === undefined || !isCompactionMessage(stand)) {
      problems.push(`no message stands for the ${compaction.upTo} replaced messages after the kept ones`);
    } else if (compaction.summary !== undefined &&
      !stand.content.includes(`<summary>\n${compaction.summary.trim()}\n</summary>`)) {
      problems.push('the message that stands for the replaced part does not hold the summary');
    } else if (compaction.summary === undefined && !stand.content.includes('left out')) {
      problems.push('the message that stands for the replaced part does not say it was left out');
    }
    const replaced = new Set(history.slice(0, compaction.upTo).flatMap((message) =>
      message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : []));
    const sentIds = messages.flatMap((message) =>
      message.role === 'assistant'
        ? (message.toolCalls ?? []).map((call) => call.id)
        : message.role === 'tool' ? [message.toolCallId] : []);
    const leaked = [...new Set(sentIds.filter((id) => replaced.has(id)))];
    if (leaked.length > 0) problems.push(`replaced calls were sent again: ${leaked.join(', ')}`);
  }
  for (const id of compaction.pruned) {
    const sent = messages.find((message) => message.role === 'tool' && message.toolCallId === id);
    if (sent !== undefined && !prunedStubPattern.test(sent.content)) {
      problems.push(`the pruned result of ${id} was sent whole`);
    }
  }
  return problems;
}

/**
 * The compaction scorer (CMP-1 … CMP-6): what the run compacted, told and stored. Invariants of
 * every run that compacted (or started from a stored compaction): the reporter, the run's result
 * and the session's `context_compacted` events agree; the summary calls in the result, the trace
 * (Compact spans) and the requests agree; at most one compaction comes before each model call;
 * the session stores the latest compaction; and the next request the run sent after each is the
 * compacted view (the task first, the summary, none of the replaced calls, pruned results as
 * stubs). Then what the case expects: how many, why, how many summary calls and failed summaries,
 * and that a compaction is stored.
 */
export const scoreCompaction: Scorer = (context) => {
  const { run, evalCase, relaxed } = context;
  if (run.infraError !== undefined) return [];
  const expectation = evalCase.expect.compaction;
  const heard = run.compactions.map((entry) => entry.compaction);
  const spans = compactSpans(run.spans);
  const requests = run.mode === 'scripted' ? summaryRequests(run) : [];
  const happened = heard.length > 0 || run.compactionEvents.length > 0 ||
    (run.result?.compactions ?? 0) > 0 || spans.length > 0 || requests.length > 0 ||
    run.compactionBefore !== undefined;
  if (expectation === undefined && !happened) return [];
  const results: ScoreResult[] = [];

  const disagreements = agreementProblems(run);
  results.push(result('compaction', 'compactions told alike', 'invariant', disagreements.length === 0,
    disagreements.length === 0
      ? `the reporter, the run's result and the session's events each tell of ${plural(heard.length, 'compaction')}${heard.length === 0 ? '' : `: ${heard.map(describe).join('; ')}`}`
      : disagreements.join('; '),
    {
      expected: heard.map(eventFields),
      actual: { events: run.compactionEvents, result: run.result?.compactions ?? null },
    }));

  const summaryCalls = run.result?.summaryCalls;
  // The run's result counts its own summary calls; a subagent's are under its RunSub span.
  const root = runSpan(run.spans);
  const own = spans.filter((span) => root !== undefined && span.parentId === root.id);
  const callProblems: string[] = [];
  if (summaryCalls !== undefined && summaryCalls !== own.length) {
    callProblems.push(`the run's result counts ${summaryCalls}, the trace has ${plural(own.length, 'Compact span')} under ${root?.name ?? 'the run span'}`);
  }
  if (run.mode === 'scripted' && requests.length !== spans.length) {
    callProblems.push(`the model was sent ${plural(requests.length, 'summary call')}, the trace has ${plural(spans.length, 'Compact span')}`);
  }
  results.push(result('compaction', 'summary calls counted alike', 'invariant', callProblems.length === 0,
    callProblems.length === 0
      ? `${plural(spans.length, 'summary call')}, in the run's result, the trace${run.mode === 'scripted' ? ' and the requests' : ''}`
      : callProblems.join('; '),
    {
      expected: spans.length,
      actual: { result: summaryCalls ?? null, requests: requests.length },
    }));

  if (run.mode === 'scripted') {
    // CMP-3: between two turns' requests (a retried call's included), one compaction at most.
    const turns = run.modelCalls.filter((call) => !isSummaryRequest(call));
    const crowded: string[] = [];
    for (let index = 0; index <= turns.length; index += 1) {
      const after = turns[index - 1]?.startedAt ?? Number.NEGATIVE_INFINITY;
      const call = turns[index];
      const until = call?.startedAt ?? Number.POSITIVE_INFINITY;
      const before = run.compactions.filter((entry) => entry.at > after && entry.at <= until);
      if (before.length > 1) {
        crowded.push(`${before.length} compactions ${call === undefined ? 'after the last request' : `before request ${call.attempt}`}`);
      }
    }
    results.push(result('compaction', 'one compaction per model call', 'invariant', crowded.length === 0,
      crowded.length === 0
        ? 'no model call was preceded by more than one compaction'
        : crowded.join('; '),
      { expected: [], actual: crowded }));
  }

  const latest = heard.at(-1);
  if (latest !== undefined && run.status !== 'not_run') {
    const stored = canonical(run.compactionAfter ?? null) === canonical(latest);
    results.push(result('compaction', 'latest compaction stored', 'invariant', stored,
      stored
        ? `the session stores the latest compaction (${describe(latest)})`
        : run.compactionAfter === undefined
          ? 'the session stores no compaction after the run'
          : `the session stores ${describe(run.compactionAfter)}, not the latest one the run made`,
      { expected: latest, actual: run.compactionAfter ?? null }));
  }

  if (run.mode === 'scripted') {
    // The run compacts right before its own next call (a subagent runs in a tool wave, which has
    // ended by then): the next request that is not a summary call is the run's.
    const checks = [
      ...(run.compactionBefore === undefined
        ? []
        : [{ at: Number.NEGATIVE_INFINITY, compaction: run.compactionBefore, what: 'the stored compaction' }]),
      ...run.compactions.map((entry, index) => ({ ...entry, what: `compaction ${index + 1}` })),
    ];
    const problems: string[] = [];
    const checked: string[] = [];
    for (const { at, compaction, what } of checks) {
      const next = run.modelCalls.find((call) => call.startedAt >= at && !isSummaryRequest(call));
      if (next === undefined) continue;
      const wrong = viewProblems(next, run.history, compaction);
      if (wrong.length > 0) problems.push(`request ${next.attempt}, after ${what}: ${wrong.join('; ')}`);
      else checked.push(`request ${next.attempt} after ${what}`);
    }
    if (checks.length > 0) {
      results.push(result('compaction', 'next request is the compacted view', 'invariant', problems.length === 0,
        problems.length > 0
          ? problems.join(' | ')
          : checked.length === 0
            ? 'no request of the run followed a compaction'
            : `${checked.join(', ')}: the user's messages kept first, then the summary, without the replaced calls, pruned results as stubs`,
        { expected: [], actual: problems }));
    }
  }

  if (expectation === undefined) return results;
  if (expectation.count !== undefined && !relaxed) {
    const pass = heard.length === expectation.count;
    results.push(result('compaction', 'compactions', 'positive', pass,
      `the run compacted ${plural(heard.length, 'time').replace(/^1 time$/, 'once')}${pass ? '' : `, expected ${expectation.count}`}${heard.length === 0 ? '' : `: ${heard.map(describe).join('; ')}`}`,
      { expected: expectation.count, actual: heard.length }));
  }
  if (expectation.reasons !== undefined && !relaxed) {
    const reasons = heard.map((compaction) => compaction.reason);
    const pass = JSON.stringify(reasons) === JSON.stringify(expectation.reasons);
    results.push(result('compaction', 'reasons', 'positive', pass,
      `the compactions' reasons: ${reasons.join(', ') || '(none)'}${pass ? '' : `, expected ${expectation.reasons.join(', ') || '(none)'}`}`,
      { expected: expectation.reasons, actual: reasons }));
  }
  if (expectation.summaryCalls !== undefined && !relaxed) {
    const made = summaryCalls ?? spans.length;
    const pass = made === expectation.summaryCalls;
    results.push(result('compaction', 'summary calls', 'positive', pass,
      `${plural(made, 'summary call')}${pass ? '' : `, expected ${expectation.summaryCalls}`}`,
      { expected: expectation.summaryCalls, actual: made }));
  }
  if (expectation.summaryErrors !== undefined && !relaxed) {
    const failed = heard.filter((compaction) => compaction.summaryError !== undefined);
    const pass = failed.length === expectation.summaryErrors;
    results.push(result('compaction', 'failed summaries', 'positive', pass,
      `${plural(failed.length, 'compaction')} without a summary${failed.length === 0 ? '' : ` (${failed.map((compaction) => compaction.summaryError).join('; ')})`}${pass ? '' : `, expected ${expectation.summaryErrors}`}`,
      {
        expected: expectation.summaryErrors,
        actual: failed.map((compaction) => compaction.summaryError),
      }));
  }
  if (expectation.storedUpTo === 'positive') {
    const upTo = run.compactionAfter?.upTo;
    const pass = upTo !== undefined && upTo > 0;
    results.push(result('compaction', 'stored compaction', 'positive', pass,
      upTo === undefined
        ? 'the session stores no compaction after the run'
        : `the session stores a compaction that replaces ${plural(upTo, 'message')}${pass ? '' : ' (none: it only pruned)'}`,
      { expected: '> 0', actual: upTo ?? null }));
  }
  return results;
};
