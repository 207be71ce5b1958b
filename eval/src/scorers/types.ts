import type { EvalCase, ScorerName } from '../case.js';
import type { RunRecord } from '../run-record.js';

/**
 * One scored assertion (EVAL-3). `positive`: something the run must have done; `negative`:
 * something it must not have done, which passes only with evidence that the run got that far;
 * `invariant`: holds for every run (paired history, span tree), checked whatever the case says.
 */
export interface ScoreResult {
  scorer: ScorerName;
  assertion: string;
  kind: 'positive' | 'negative' | 'invariant';
  pass: boolean;
  /** Why it passed or failed, in words. */
  reason: string;
  expected?: unknown;
  actual?: unknown;
}

export interface ScoreContext {
  evalCase: EvalCase;
  run: RunRecord;
  /** Real-model runs: trajectory checks are relaxed and nothing is compared with the script. */
  relaxed: boolean;
}

/** A scorer reads one run and returns its results (none when it has nothing to check). */
export type Scorer = (context: ScoreContext) => ScoreResult[];

/** Builds a result. */
export function result(
  scorer: ScorerName,
  assertion: string,
  kind: ScoreResult['kind'],
  pass: boolean,
  reason: string,
  values: { expected?: unknown; actual?: unknown } = {},
): ScoreResult {
  return { scorer, assertion, kind, pass, reason, ...values };
}
