import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineInfo } from '../src/environment.js';
import { baselineFrom, baselineSchema, checkGate, defaultThresholds, readBaseline, writeBaseline, type Baseline } from '../src/gate.js';
import { metricsFrom, percentile, quantiles, unionLength } from '../src/metrics.js';
import { buildResults, type Results } from '../src/results.js';
import { runSuite } from '../src/suite.js';
import type { SpanRecord } from '../src/tracing.js';
import { evalRoot, removeTempFolders, suiteCase, tempFolder } from './helpers.js';

const context = { version: '0.0.0-test', git: { sha: null, dirty: null }, machine: machineInfo(), filters: [], tags: [] };
let results: Results;

beforeAll(async () => {
  const suite = await runSuite([await suiteCase('task-completed'), await suiteCase('token-budget')], { repeat: 3 });
  results = buildResults(suite, context);
});

afterAll(removeTempFolders);

function edit(baseline: Baseline, id: string, change: (entry: Baseline['cases'][string]) => void): Baseline {
  const copy = structuredClone(baseline);
  const entry = copy.cases[id];
  if (entry === undefined) throw new Error(`no ${id}`);
  change(entry);
  return copy;
}

describe('the regression gate', () => {
  it('passes a run against a baseline taken from it', () => {
    const baseline = baselineFrom(results);
    expect(Object.keys(baseline.cases)).toEqual(['task-completed', 'token-budget']);
    expect(baseline.cases['task-completed']).toMatchObject({ modelCalls: 2, toolCalls: 1, promptTokens: 470, completionTokens: 30 });
    expect(checkGate(results, baseline, { baselineFile: 'b.json', selected: false })).toEqual({
      passed: true,
      baseline: 'b.json',
      thresholds: defaultThresholds,
      problems: [],
    });
  });

  it('trips on call or token counts that differ from the baseline, however small', () => {
    const baseline = edit(baselineFrom(results), 'task-completed', (entry) => {
      entry.modelCalls = 3;
      entry.completionTokens += 1;
    });
    const gate = checkGate(results, baseline, { baselineFile: 'b.json', selected: false });
    expect(gate.passed).toBe(false);
    expect(gate.problems).toEqual([{
      case: 'task-completed',
      check: 'counts',
      message: 'modelCalls 3 → 2, completionTokens 31 → 30 (the baseline\'s counts are exact)',
    }]);
  });

  it('trips on p50/p95 overhead or ttfb above baseline × ratio + slack, and not at or below it', () => {
    const base = baselineFrom(results);
    const { ratio, overheadSlackMs, ttfbSlackMs } = base.thresholds;
    const overhead = results.cases[0]!.stats.overheadMs;
    const ttfb = results.cases[0]!.stats.ttfbMs;
    // A baseline whose limit (base × ratio + slack) lies `offset` ms from the run's figure.
    const limitAt = (offset: number) => edit(base, 'task-completed', (entry) => {
      const at = (figure: number | null, slack: number) => (figure! - slack + offset) / ratio;
      entry.overheadMs = { p50: at(overhead.p50, overheadSlackMs), p95: at(overhead.p95, overheadSlackMs) };
      entry.ttfbMs = { p50: at(ttfb.p50, ttfbSlackMs), p95: at(ttfb.p95, ttfbSlackMs) };
    });
    expect(checkGate(results, limitAt(0.01), { baselineFile: 'b', selected: false }).passed).toBe(true);
    const gate = checkGate(results, limitAt(-0.01), { baselineFile: 'b', selected: false });
    expect(gate.passed).toBe(false);
    expect(gate.problems.map((problem) => `${problem.check} ${problem.message.split(' ')[1]}`).sort()).toEqual([
      'overhead p50', 'overhead p95', 'ttfb p50', 'ttfb p95',
    ]);
    expect(gate.problems.find((problem) => problem.check === 'overhead')?.message)
      .toMatch(new RegExp(`^overhead p50 [\\d.]+ ms > [\\d.]+ ms \\(baseline -?[\\d.]+ ms × ${ratio} \\+ ${overheadSlackMs} ms\\)$`));
  });

  it('trips on a failing case, a case the baseline does not know, a baseline case that did not run, and an empty run', () => {
    const baseline = baselineFrom(results);
    const failing: Results = structuredClone(results);
    failing.cases[1]!.verdict = 'error';
    failing.cases[1]!.reason = 'infrastructure error (not a result of the engine): disk full';
    const withError = checkGate(failing, baseline, { baselineFile: 'b', selected: false });
    expect(withError.problems).toEqual([{ case: 'token-budget', check: 'verdict', message: 'infrastructure error (not a pass): infrastructure error (not a result of the engine): disk full' }]);

    const unknown = { ...baseline, cases: { 'task-completed': baseline.cases['task-completed']!, gone: baseline.cases['task-completed']! } };
    const checks = checkGate(results, unknown, { baselineFile: 'b', selected: false }).problems.map((problem) => [problem.case, problem.check]);
    expect(checks).toEqual([['token-budget', 'unknown'], ['gone', 'missing']]);
    // With a selection (--filter/--tag), baseline cases outside it are not expected to run.
    expect(checkGate(results, unknown, { baselineFile: 'b', selected: true }).problems.map((problem) => problem.check)).toEqual(['unknown']);

    const empty = { ...results, cases: [] };
    expect(checkGate(empty, baseline, { baselineFile: 'b', selected: true }).problems).toEqual([
      { case: '*', check: 'empty', message: 'no case ran: a suite that never ran is not a pass' },
    ]);
  });

  it('will not take a baseline from a run where a case did not pass', () => {
    const failing: Results = structuredClone(results);
    failing.cases[0]!.verdict = 'fail';
    expect(() => baselineFrom(failing)).toThrow(/task-completed \(fail\)/);
  });

  it('writes and reads a baseline file, and says what to do when there is none or it is broken', async () => {
    const folder = await tempFolder();
    const file = path.join(folder, 'baselines', 'scripted.json');
    await expect(readBaseline(file)).rejects.toThrow(/no baseline at .*: run `claw-eval baseline update`/);
    await writeBaseline(file, baselineFrom(results));
    expect((await readBaseline(file)).cases['token-budget']?.modelCalls).toBe(1);
    await writeBaseline(file, { ...baselineFrom(results), schemaVersion: 2 } as unknown as Baseline);
    await expect(readBaseline(file)).rejects.toThrow(/is not a claw-eval baseline/);
  });

  it('the committed baseline is a valid baseline of every case in eval/cases/', async () => {
    const committed = baselineSchema.parse(JSON.parse(await readFile(path.join(evalRoot, 'baselines', 'scripted.json'), 'utf8')));
    const { suiteCases } = await import('./helpers.js');
    expect(Object.keys(committed.cases).sort()).toEqual((await suiteCases()).map((evalCase) => evalCase.id).sort());
    expect(committed.repeat).toBeGreaterThanOrEqual(5);
  });
});

describe('metrics', () => {
  it('reads ttfb, tokens and tool wall time off the spans and takes the scripted waits off the run time', () => {
    const spans: SpanRecord[] = [
      { id: 'e', name: 'Eval', startMs: 0, endMs: 100, durationMs: 100, attributes: {}, status: 'unset' },
      { id: 'r', parentId: 'e', name: 'Agent.Run', startMs: 1, endMs: 91, durationMs: 90, attributes: { ttfb_ms: 5, prompt_tokens: 10, completion_tokens: 4, tool_wall_ms: 30 }, status: 'unset' },
      { id: 't1', parentId: 'r', name: 'Thinking', startMs: 1, endMs: 7, durationMs: 6, attributes: { ttfb_ms: 5 }, status: 'unset' },
      { id: 'a', parentId: 'r', name: 'Action', startMs: 8, endMs: 40, durationMs: 32, attributes: { tool_wall_ms: 30 }, status: 'unset' },
      { id: 'x', parentId: 'a', name: 'Tool', startMs: 8, endMs: 40, durationMs: 32, attributes: {}, status: 'unset' },
      { id: 's', parentId: 'r', name: 'RunSub', startMs: 41, endMs: 80, durationMs: 39, attributes: { prompt_tokens: 3, completion_tokens: 2 }, status: 'unset' },
      { id: 't2', parentId: 's', name: 'Thinking', startMs: 42, endMs: 50, durationMs: 8, attributes: { ttfb_ms: 7 }, status: 'unset' },
    ];
    expect(metricsFrom(spans, { modelMs: 12, toolMs: 30 })).toEqual({
      runMs: 90,
      ttfbMs: [5, 7],
      firstTtfbMs: 5,
      waveWallMs: [30],
      toolWallMs: 30,
      promptTokens: 13,
      completionTokens: 6,
      modelCalls: 2,
      toolCalls: 1,
      scriptedModelMs: 12,
      scriptedToolMs: 30,
      overheadMs: 48,
    });
  });

  it('counts overlapping waits once and interpolates percentiles', () => {
    expect(unionLength([[0, 10], [5, 20], [30, 40], [35, 36]])).toBe(30);
    expect(unionLength([])).toBe(0);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5], 95)).toBeCloseTo(4.8);
    expect(quantiles([])).toEqual({ p50: null, p95: null });
  });
});
