import type { ToolCall, ToolMessage } from '@claw/core';
import { canceledObservationText } from '@claw/engine';
import type { RunLimits, RunRecord } from '../run-record.js';
import { result, type ScoreResult, type Scorer } from './types.js';

/** Run errors that stop a wave before its results are reported (ENG-7). */
const waveFailures = new Set(['reporter_failed', 'tool_journal_failed', 'tool_wave_failed']);

/** Exact enough for sums of prices (binary fractions of a dollar, or close). */
const costTolerance = 1e-9;

/**
 * The reports scorer: what the run's reporter was told (the app's view of the run: a terminal, a
 * socket, the channel's events) agrees with what the session stored. Invariants of every run:
 * - each reported tool result is the stored Observation (content, error flag) of a call of this
 *   run, under the call's tool name;
 * - each call reported (`onToolCall`) gets exactly one result report, unless it was canceled
 *   before it ran or a failure stopped its wave (then at most one);
 * - a start (`onToolStarted`) comes only for a reported call, once, before its result; a case's
 *   scripted tools were reported started exactly as often as they ran;
 * - the usage reports add up: each call's tokens, the run's totals as the sum of its calls' (a
 *   summary call's and subagents' included), the run's cost as the sum of the priced calls';
 * - `budgetsLeft` holds each limited budget and no other, at `limit - used` (never below 0),
 *   with `used` from the same report; tool time and subagents within their limits.
 * Written from the Reporter contract, not from the engine's code.
 */
export const scoreReports: Scorer = (context) => {
  const { run } = context;
  if (run.infraError !== undefined || run.status === 'not_run') return [];
  const expected = context.evalCase.expect.reports ?? {};
  const stored = callsAndObservations(run);
  return [
    resultsAsStored(run, stored),
    everyCallAnswered(run, stored),
    startsReported(run, stored, context.evalCase.tools?.map((tool) => tool.name) ?? []),
    usageAddsUp(run),
    budgetsLeftAsUsed(run),
    ...counted('results reported', expected.results, run.reported.results.length),
    ...counted('starts reported', expected.started, run.reported.started.length),
  ];
};

function counted(assertion: string, expected: number | undefined, actual: number): ScoreResult[] {
  if (expected === undefined) return [];
  return [result('reports', assertion, 'positive', actual === expected,
    `${actual} ${assertion.split(' ')[0]} reported, ${expected} expected`, { expected, actual })];
}

function invariant(assertion: string, problems: string[], ok: string): ScoreResult {
  return result('reports', assertion, 'invariant', problems.length === 0,
    problems.length === 0 ? ok : problems.slice(0, 5).join('; ') +
      (problems.length > 5 ? `; and ${problems.length - 5} more` : ''),
    { expected: [], actual: problems });
}

/** The calls of this run (not the seeded history's), by id, and every Observation, by id. */
interface Stored {
  calls: Map<string, ToolCall>;
  observations: Map<string, ToolMessage>;
}

function callsAndObservations(run: RunRecord): Stored {
  const calls = new Map<string, ToolCall>();
  for (const message of run.history.slice(run.seededMessages)) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.set(call.id, call);
  }
  const observations = new Map<string, ToolMessage>();
  for (const message of run.history) {
    if (message.role === 'tool') observations.set(message.toolCallId, message);
  }
  return { calls, observations };
}

function resultsAsStored(run: RunRecord, { calls, observations }: Stored): ScoreResult {
  const problems: string[] = [];
  for (const report of run.reported.results) {
    const id = report.toolCallId;
    const call = calls.get(id);
    const stored = observations.get(id);
    if (call === undefined || stored === undefined) {
      problems.push(`a result was reported for ${id}, which is no call of this run with an Observation`);
      continue;
    }
    if (report.toolName !== call.name) {
      problems.push(`${id}: reported as a result of "${String(report.toolName)}", the call is to "${call.name}"`);
    }
    if (report.content !== stored.content) {
      problems.push(`${id}: the reported result differs from the stored Observation`);
    }
    if (report.isError !== (stored.isError === true)) {
      problems.push(`${id}: reported ${report.isError ? 'as an error' : 'as a success'}, stored ${stored.isError === true ? 'as an error' : 'as a success'}`);
    }
  }
  return invariant('reported results as stored', problems,
    `${run.reported.results.length} reported result(s), each the stored Observation of its call`);
}

function everyCallAnswered(run: RunRecord, { calls, observations }: Stored): ScoreResult {
  const reportedCalls = run.timeline.filter((event) => event.type === 'tool_call');
  const resultCount = new Map<string, number>();
  for (const report of run.reported.results) {
    resultCount.set(report.toolCallId, (resultCount.get(report.toolCallId) ?? 0) + 1);
  }
  const stoppedWave = run.errorCode !== undefined && waveFailures.has(run.errorCode);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const event of reportedCalls) {
    const id = event.toolCallId ?? '';
    if (seen.has(id)) problems.push(`${id} was reported as a call twice`);
    seen.add(id);
    if (!calls.has(id)) {
      problems.push(`${id} was reported as a call, but no assistant message of the run holds it`);
      continue;
    }
    const count = resultCount.get(id) ?? 0;
    const canceled = observations.get(id)?.content === canceledObservationText;
    const atMostOne = canceled || stoppedWave;
    if (count > 1 || (!atMostOne && count !== 1)) {
      problems.push(`${id} (${calls.get(id)?.name ?? '?'}) got ${count} result reports, not exactly one`);
    }
  }
  for (const id of resultCount.keys()) {
    if (!seen.has(id)) problems.push(`a result was reported for ${id} before any report of its call`);
  }
  return invariant('every reported call answered', problems,
    `${reportedCalls.length} reported call(s), each answered by one result report` +
    (stoppedWave ? ' or stopped with its wave' : ''));
}

function startsReported(
  run: RunRecord,
  { calls }: Stored,
  scriptedNames: readonly string[],
): ScoreResult {
  const calledAt = new Map<string, number>();
  for (const event of run.timeline) {
    if (event.type === 'tool_call' && event.toolCallId !== undefined) calledAt.set(event.toolCallId, event.at);
  }
  const resultAt = new Map(run.reported.results.map((report) => [report.toolCallId, report.at]));
  const problems: string[] = [];
  const starts = new Map<string, number>();
  for (const start of run.reported.started) {
    const id = start.toolCallId;
    starts.set(id, (starts.get(id) ?? 0) + 1);
    const called = calledAt.get(id);
    if (called === undefined) problems.push(`${id} was reported started without a report of its call`);
    else if (start.at < called) problems.push(`${id} was reported started before its call`);
    const ended = resultAt.get(id);
    if (ended !== undefined && ended < start.at) problems.push(`${id} was reported started after its result`);
  }
  for (const [id, count] of starts) {
    if (count > 1) problems.push(`${id} was reported started ${count} times`);
  }
  for (const name of new Set(scriptedNames)) {
    const ran = run.toolExecutions.filter((execution) => execution.name === name).length;
    const started = run.reported.started.filter(
      (start) => start.name === name && calls.has(start.toolCallId),
    ).length;
    if (ran !== started) {
      problems.push(`the scripted tool ${name} ran ${ran} time(s), but ${started} start(s) were reported`);
    }
  }
  return invariant('tool starts reported', problems,
    `${run.reported.started.length} start(s) reported, each once, between its call and its result, ` +
    'and one for each run of a scripted tool');
}

function usageAddsUp(run: RunRecord): ScoreResult {
  const problems: string[] = [];
  let tokens = 0;
  let usd = 0;
  let unpriced = 0;
  run.reported.usage.forEach((report, index) => {
    const where = `usage report ${index + 1}`;
    const { call } = report;
    const numbers = [call?.promptTokens, call?.completionTokens, call?.totalTokens];
    if (!numbers.every((value) => Number.isInteger(value) && value >= 0)) {
      problems.push(`${where}: the call's tokens are not counts (${JSON.stringify(call)})`);
      return;
    }
    if (call.totalTokens !== call.promptTokens + call.completionTokens) {
      problems.push(`${where}: the call's total ${call.totalTokens} is not prompt + completion`);
    }
    tokens += call.totalTokens;
    if (report.callCostUsd === undefined) unpriced += 1;
    else usd += report.callCostUsd;
    if (report.run?.totalTokens !== tokens) {
      problems.push(`${where}: the run's total is ${String(report.run?.totalTokens)}, its calls' sum ${tokens}`);
    }
    if (report.runCost === undefined || Math.abs(report.runCost.usd - usd) > costTolerance ||
      report.runCost.unpricedCalls !== unpriced) {
      problems.push(`${where}: the run's cost is ${JSON.stringify(report.runCost)}, its calls' ` +
        `$${usd} with ${unpriced} unpriced`);
    }
    if (!(report.session?.totalTokens >= report.run.totalTokens)) {
      problems.push(`${where}: the session's total ${String(report.session?.totalTokens)} is below the run's`);
    }
  });
  return invariant('usage reports add up', problems,
    `${run.reported.usage.length} usage report(s): the run's tokens and cost the sum of its calls'`);
}

/** The budgets of `budgetsLeft`, each with its limit in the run's settings. */
const budgetLimits: Array<[string, keyof RunLimits]> = [
  ['sessionTokens', 'maxSessionTokens'],
  ['runTokens', 'maxRunTokens'],
  ['sessionCostUsd', 'maxSessionCostUsd'],
  ['runCostUsd', 'maxRunCostUsd'],
  ['toolTimeMs', 'toolTimeBudgetMs'],
  ['subagents', 'maxSubagents'],
];

function budgetsLeftAsUsed(run: RunRecord): ScoreResult {
  const problems: string[] = [];
  run.reported.usage.forEach((report, index) => {
    const where = `usage report ${index + 1}`;
    const left = (report.budgetsLeft ?? {}) as Record<string, unknown>;
    const used: Record<string, number | undefined> = {
      sessionTokens: report.session?.totalTokens,
      runTokens: report.run?.totalTokens,
      sessionCostUsd: report.sessionCost?.usd,
      runCostUsd: report.runCost?.usd,
    };
    const known = new Set(budgetLimits.map(([name]) => name));
    for (const name of Object.keys(left)) {
      if (!known.has(name)) problems.push(`${where}: budgetsLeft has "${name}", no budget of claw's`);
    }
    for (const [name, setting] of budgetLimits) {
      const limit = run.limits[setting];
      const value = left[name];
      const limited = limit !== undefined && limit > 0;
      if (!limited) {
        if (name in left) problems.push(`${where}: ${name} is unlimited, yet budgetsLeft has it (${String(value)})`);
        continue;
      }
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > limit) {
        problems.push(`${where}: budgetsLeft.${name} is ${String(value)}, not between 0 and its limit ${limit}`);
        continue;
      }
      const spent = used[name];
      if (spent !== undefined) {
        const expected = Math.max(0, limit - spent);
        if (Math.abs(value - expected) > costTolerance) {
          problems.push(`${where}: budgetsLeft.${name} is ${value}, the limit ${limit} less ${spent} used is ${expected}`);
        }
      }
    }
  });
  return invariant('budgets left as used', problems,
    `${run.reported.usage.length} usage report(s), each with what its limited budgets have left`);
}
