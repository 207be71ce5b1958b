import { spanAttributes } from '@claw/engine';
import { scriptedModelName } from '../harness.js';
import { scriptUsage } from '../script.js';
import {
  actionSpans,
  modelCallSpans,
  numberAttribute,
  spanTokens,
  toolSpans,
} from '../span-tree.js';
import type { RunRecord } from '../run-record.js';
import type { SpanRecord } from '../tracing.js';
import { result, type ScoreResult, type Scorer } from './types.js';

/**
 * Where the budget should have stopped the run, read off the trace: how many model calls were
 * allowed, and when the last allowed work ended — for a run token budget, the model call whose
 * tokens reached the limit (and the tool wave its reply asked for); for the tool time budget, the
 * wave that used the time up. Undefined when no limit was reached.
 */
function stopPoint(
  spans: readonly SpanRecord[],
  budgets: { maxRunTokens?: number; toolTimeBudgetMs?: number },
): { calls: number; afterMs: number; what: string } | undefined {
  // Summary calls count against the budgets like any other model call (CMP-6).
  const thinking = modelCallSpans(spans);
  const actions = actionSpans(spans);
  const limit = budgets.maxRunTokens ?? 0;
  if (limit > 0) {
    let used = 0;
    for (const [index, span] of thinking.entries()) {
      const tokens = spanTokens(span);
      used += tokens.prompt + tokens.completion;
      if (used >= limit) {
        // The reply that reached the limit still counts; its tool wave runs; then the stop.
        const wave = actions.find((action) => action.startMs >= span.startMs);
        return {
          calls: index + 1,
          afterMs: wave?.endMs ?? span.endMs,
          what: `model call ${index + 1} brought the run to ${used} of ${limit} tokens`,
        };
      }
    }
  }
  const toolLimit = budgets.toolTimeBudgetMs ?? 0;
  if (toolLimit > 0) {
    let used = 0;
    for (const [index, action] of actions.entries()) {
      used += numberAttribute(action, spanAttributes.toolWallMs) ?? 0;
      if (used >= toolLimit) {
        return {
          calls: thinking.filter((span) => span.startMs <= action.startMs).length,
          afterMs: action.endMs,
          what: `tool wave ${index + 1} used up ${Math.round(used)} of ${toolLimit} ms`,
        };
      }
    }
  }
  return undefined;
}

/**
 * The budget scorer (EVAL-3): the error the run stopped with, the exact number of model calls
 * (subagents' and summary calls included, from the trace), no model call and no tool after the
 * point where the budget was reached, and the session's tokens against the script.
 */
export const scoreBudget: Scorer = (context) => {
  const { run, evalCase, relaxed } = context;
  const expectation = evalCase.expect.budget;
  const results: ScoreResult[] = [];
  if (run.infraError !== undefined) return results;
  const thinking = modelCallSpans(run.spans);
  if (expectation?.stop !== undefined) {
    const pass = run.errorCode === expectation.stop;
    results.push(result('budget', 'stop reason', 'positive', pass,
      pass
        ? `the run stopped with ${run.errorCode}: ${run.errorMessage ?? ''}`
        : `the run ended ${run.status} with ${run.errorCode ?? 'no error'}${run.errorMessage === undefined ? '' : ` (${run.errorMessage})`}, expected ${expectation.stop}`,
      { expected: expectation.stop, actual: run.errorCode ?? null }));
  }
  if (expectation?.modelCalls !== undefined && !relaxed) {
    const pass = thinking.length === expectation.modelCalls;
    results.push(result('budget', 'model calls', 'positive', pass,
      `the model was called ${thinking.length} time(s)${pass ? '' : `, expected exactly ${expectation.modelCalls}`}`,
      { expected: expectation.modelCalls, actual: thinking.length }));
  }
  if (run.errorCode?.endsWith('_budget_exceeded') === true || expectation?.stop !== undefined) {
    const budgets = evalCase.budgets ?? {};
    const stop = stopPoint(run.spans, budgets);
    if (stop !== undefined) {
      const laterCalls = thinking.slice(stop.calls);
      const laterTools = toolSpans(run.spans).filter((span) => span.startMs >= stop.afterMs);
      results.push(result('budget', 'no model call after the stop', 'invariant', laterCalls.length === 0,
        laterCalls.length === 0
          ? `${stop.what}; no model call followed`
          : `${stop.what}, yet ${laterCalls.length} more model call(s) followed`,
        { expected: 0, actual: laterCalls.length }));
      results.push(result('budget', 'no tool after the stop', 'invariant', laterTools.length === 0,
        laterTools.length === 0
          ? `${stop.what}; no tool ran after it`
          : `${stop.what}, yet ${laterTools.length} tool call(s) ran after it: ${laterTools.map((span) => String(span.attributes[spanAttributes.genAiToolName])).join(', ')}`,
        { expected: 0, actual: laterTools.length }));
    }
  }
  if (expectation?.sessionTokensFromScript === true && !relaxed) {
    const expected = scriptUsage(run.script);
    const { promptTokens, completionTokens } = run.sessionUsage;
    const actual = { promptTokens, completionTokens };
    const pass =
      promptTokens === expected.promptTokens && completionTokens === expected.completionTokens;
    results.push(result('budget', 'session tokens', 'positive', pass,
      pass
        ? `the session holds ${actual.promptTokens} prompt and ${actual.completionTokens} completion tokens, the script's sum`
        : `the session holds ${actual.promptTokens}/${actual.completionTokens} prompt/completion tokens; the script's replies sum to ${expected.promptTokens}/${expected.completionTokens}`,
      { expected, actual }));
  }
  if (expectation?.costUsd !== undefined && !relaxed) {
    results.push(costResult(run, expectation.costUsd, evalCase.model?.name ?? scriptedModelName));
  }
  return results;
};

/** How close a cost must be to the expected figure (US dollars): floating-point sums only. */
export const costToleranceUsd = 1e-9;

const dollars = (value: number): string => `$${value.toFixed(9)}`;

/**
 * The run's cost (REAL-5) against the figure the case computed by hand: every model call priced
 * (answered by the case's model, which has a price), the sum within {@link costToleranceUsd}.
 */
function costResult(run: RunRecord, expectedUsd: number, model: string): ScoreResult {
  const cost = run.runCost;
  const answeredBy = modelCallSpans(run.spans).map((span) => {
    const name = span.attributes[spanAttributes.genAiResponseModel] ??
      span.attributes[spanAttributes.genAiRequestModel];
    return typeof name === 'string' ? name : '(unknown)';
  });
  const others = [...new Set(answeredBy.filter((name) => name !== model))];
  const expected = { usd: expectedUsd, model };
  const actual = {
    usd: cost?.usd ?? null,
    unpricedCalls: cost?.unpricedCalls ?? null,
    answeredBy: [...new Set(answeredBy)],
  };
  if (cost === undefined) {
    return result('budget', 'cost', 'positive', false, 'the run did not end: it has no cost', { expected, actual });
  }
  const priced = `${answeredBy.length} model call(s) answered by ${actual.answeredBy.join(', ') || 'nobody'}`;
  if (cost.unpricedCalls > 0 || others.length > 0) {
    return result('budget', 'cost', 'positive', false,
      cost.unpricedCalls > 0
        ? `${cost.unpricedCalls} of ${priced} had no price, so the run's cost (${dollars(cost.usd)}) is not known`
        : `${priced}, expected all by ${model}`,
      { expected, actual });
  }
  const pass = Math.abs(cost.usd - expectedUsd) <= costToleranceUsd;
  return result('budget', 'cost', 'positive', pass,
    pass
      ? `the run cost ${dollars(cost.usd)} (${priced}, priced as ${model})`
      : `the run cost ${dollars(cost.usd)}, expected ${dollars(expectedUsd)} (${priced})`,
    { expected, actual });
}
