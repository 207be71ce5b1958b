import { negativeResult, runEvidence, runToolCalls } from './evidence.js';
import { result, type ScoreResult, type Scorer } from './types.js';

function counts(names: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const name of names) map.set(name, (map.get(name) ?? 0) + 1);
  return map;
}

/** True when `expected` appears in `actual` in this order (other calls may come between). */
export function isSubsequence(expected: readonly string[], actual: readonly string[]): boolean {
  let position = 0;
  for (const name of actual) {
    if (name === expected[position]) position += 1;
    if (position === expected.length) return true;
  }
  return position === expected.length;
}

/** True when `actual` holds every name of `expected` at least as often. */
export function containsAll(expected: readonly string[], actual: readonly string[]): boolean {
  const have = counts(actual);
  for (const [name, count] of counts(expected)) {
    if ((have.get(name) ?? 0) < count) return false;
  }
  return true;
}

function sameMultiset(expected: readonly string[], actual: readonly string[]): boolean {
  return expected.length === actual.length && containsAll(expected, actual);
}

const distinct = (names: readonly string[]): string[] => [...new Set(names)];

/**
 * The trajectory scorer (EVAL-3): the tools the model called in this run, in order, against the
 * case's expectation: strict, in order, unordered, subset, counts, forbidden tools. In a
 * real-model run (`relaxed`) the model may take other steps: strict, unordered and counts only
 * require every expected tool to be called, and in-order compares first calls.
 */
export const scoreTrajectory: Scorer = (context) => {
  const expectation = context.evalCase.expect.trajectory;
  if (expectation === undefined) return [];
  const actual = runToolCalls(context).map((call) => call.name);
  const shown = actual.length === 0 ? '(no tool calls)' : actual.join(' → ');
  const results: ScoreResult[] = [];
  const check = (assertion: string, expected: unknown, pass: boolean, what: string): void => {
    results.push(result('trajectory', assertion, 'positive', pass,
      pass ? `${what}: ${shown}` : `not ${what}: the run called ${shown}`,
      { expected, actual }));
  };
  const { relaxed } = context;
  if (expectation.strict !== undefined) {
    const expected = expectation.strict;
    if (relaxed) {
      check('strict (relaxed)', expected, containsAll(distinct(expected), actual), `every one of ${distinct(expected).join(', ')} called`);
    } else {
      const pass = expected.length === actual.length &&
        expected.every((name, index) => actual[index] === name);
      check('strict', expected, pass, `exactly ${expected.join(' → ') || '(none)'}`);
    }
  }
  if (expectation.inOrder !== undefined) {
    const expected = relaxed ? distinct(expectation.inOrder) : expectation.inOrder;
    const seen = relaxed ? distinct(actual) : actual;
    check(relaxed ? 'in order (relaxed)' : 'in order', expected, isSubsequence(expected, seen),
      `${expected.join(' → ')} in this order`);
  }
  if (expectation.unordered !== undefined) {
    const expected = expectation.unordered;
    if (relaxed) {
      check('unordered (relaxed)', expected, containsAll(distinct(expected), actual), `every one of ${distinct(expected).join(', ')} called`);
    } else {
      check('unordered', expected, sameMultiset(expected, actual), `exactly ${expected.join(', ')} in any order`);
    }
  }
  if (expectation.subset !== undefined) {
    const expected = expectation.subset;
    check('subset', expected, containsAll(relaxed ? distinct(expected) : expected, actual),
      `at least ${expected.join(', ')}`);
  }
  if (expectation.counts !== undefined) {
    const have = counts(actual);
    for (const [name, count] of Object.entries(expectation.counts)) {
      const got = have.get(name) ?? 0;
      const pass = relaxed ? got >= Math.min(count, 1) : got === count;
      results.push(result('trajectory', `${name} count${relaxed ? ' (relaxed)' : ''}`, 'positive', pass,
        `${name} was called ${got} time(s)${pass ? '' : `, expected ${relaxed ? 'at least once' : count}`}`,
        { expected: count, actual: got }));
    }
  }
  if (expectation.forbidden !== undefined) {
    const evidence = runEvidence(context);
    for (const name of expectation.forbidden) {
      const got = actual.filter((called) => called === name).length;
      results.push(negativeResult('trajectory', `${name} never called`, got === 0, evidence,
        got === 0 ? `${name} was never called` : `${name} was called ${got} time(s)`,
        { expected: 0, actual: got }));
    }
  }
  return results;
};
