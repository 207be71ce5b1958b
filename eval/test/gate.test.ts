import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineInfo } from '../src/environment.js';
import {
  baselineFrom,
  baselineSchema,
  checkGate,
  defaultThresholds,
  gateWithRemeasure,
  noiseAllowance,
  noiseOf,
  readBaseline,
  writeBaseline,
  type Baseline,
} from '../src/gate.js';
import { cpuWaitMs } from '../src/cpu-wait.js';
import { cpuWaitInUnion, metricsFrom, percentile, quantiles, unionLength } from '../src/metrics.js';
import { renderSummary } from '../src/report/table.js';
import { buildResults, type Results } from '../src/results.js';
import { calibrateStats, runSuite, type CalibrationRun } from '../src/suite.js';
import type { SpanRecord } from '../src/tracing.js';
import { evalRoot, removeTempFolders, suiteCase, tempFolder } from './helpers.js';

const context = { version: '0.0.0-test', git: { sha: null, dirty: null }, machine: machineInfo(), filters: [], tags: [] };
let results: Results;

beforeAll(async () => {
  const suite = await runSuite([await suiteCase('task-completed'), await suiteCase('token-budget')], { repeat: 3, calibration: {} });
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
  it('passes a run against a baseline taken from it, and says the machine\'s noise', () => {
    const baseline = baselineFrom(results);
    expect(Object.keys(baseline.cases)).toEqual(['task-completed', 'token-budget']);
    expect(baseline.cases['task-completed']).toMatchObject({ modelCalls: 2, toolCalls: 1, promptTokens: 470, completionTokens: 30 });
    expect(baseline.calibration).toMatchObject({ name: 'bare-loop', runs: 6 });
    const gate = checkGate(results, baseline, { baselineFile: 'b.json', selected: false });
    expect(gate).toMatchObject({ passed: true, baseline: 'b.json', thresholds: defaultThresholds, remeasured: [], problems: [] });
    expect(gate.noise?.runs).toBe(6);
    expect(gate.noise?.slowdown).toBeCloseTo(1, 2);
    const text = renderSummary({ ...results, gate });
    expect(text).toMatch(/gate: passed against b\.json\n {2}machine noise \(6 calibration runs\): overhead p50 [\d.]+ ms, p95 [\d.]+ ms, max [\d.]+ ms; ttfb p50 [\d.]+ ms, p95 [\d.]+ ms, max [\d.]+ ms; 1\.00× the baseline's calibration/);
  });

  it('takes each case\'s overhead as a multiple of the calibration runs made around it', () => {
    // Three cases whose own calibration runs took 1, 2 and 3 ms: with two neighbours on each
    // side, every yardstick is the mean of all six runs.
    const run = (overheadMs: number): CalibrationRun => ({ verdict: 'pass', reason: 'done', overheadMs, ttfbMs: [3] });
    const entries = [1, 2, 3].map((ms) => ({
      stats: { ...results.cases[0]!.stats, overheadMs: { p50: 8, p95: 12 } },
      calibration: [run(ms), run(ms), { verdict: 'error' as const, reason: 'failed', overheadMs: 0, ttfbMs: [] }],
    }));
    calibrateStats(entries);
    expect(entries.map((entry) => entry.stats.calibration?.unitMs)).toEqual([2, 2, 2]);
    expect(entries[0]!.stats.calibration).toEqual({ overheadMs: [1, 1], ttfbMs: [3, 3], unitMs: 2 });
    expect(entries[2]!.stats.overheadRatio).toEqual({ p50: 4, p95: 6 });
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

  it('trips on p50/p95 overhead (against the calibration) or ttfb above its limit, and not at or below it', () => {
    const base = baselineFrom(results);
    const { ratio, overheadFloorMs, ttfbFloorMs } = base.thresholds;
    const noise = noiseOf([results], base);
    const { stats } = results.cases[0]!;
    const unit = stats.calibration!.unitMs!;
    // A baseline whose limit lies `offset` ms from the run's figure.
    // The overhead limit is m × ratio × unit + floor, + max(1, m) × noise for p95: solved for m.
    const limitAt = (offset: number) => edit(base, 'task-completed', (entry) => {
      const multiple = (key: 'p50' | 'p95') => {
        const target = stats.overheadMs[key]! + offset - overheadFloorMs;
        const room = key === 'p50' ? 0 : noiseAllowance(noise.overheadMs, key);
        const long = target / (ratio * unit + room);
        return long >= 1 ? long : (target - room) / (ratio * unit);
      };
      const ttfb = (key: 'p50' | 'p95') =>
        (stats.ttfbMs[key]! + offset - ttfbFloorMs - noiseAllowance(noise.ttfbMs, key)) / ratio;
      entry.overheadRatio = { p50: multiple('p50'), p95: multiple('p95') };
      entry.ttfbMs = { p50: ttfb('p50'), p95: ttfb('p95') };
    });
    expect(checkGate(results, limitAt(0.01), { baselineFile: 'b', selected: false }).passed).toBe(true);
    const gate = checkGate(results, limitAt(-0.01), { baselineFile: 'b', selected: false });
    expect(gate.passed).toBe(false);
    expect(gate.problems.map((problem) => `${problem.check} ${problem.message.split(' ')[1]}`).sort()).toEqual([
      'overhead p50', 'overhead p95', 'ttfb p50', 'ttfb p95',
    ]);
    expect(gate.problems.find((problem) => problem.check === 'overhead')?.message).toMatch(new RegExp(
      `^overhead p50 [\\d.]+ ms > [\\d.]+ ms \\([\\d.]+× the calibration's [\\d.]+ ms; limit: the baseline's -?[\\d.]+× × ${ratio}, \\+ ${overheadFloorMs} ms, \\+ noise [\\d.]+ ms\\)$`,
    ));
    // Latency needs the calibration: an uncalibrated run cannot be judged, so it trips.
    const { calibration: _calibration, ...bare } = results;
    const uncalibrated = checkGate(bare, base, { baselineFile: 'b', selected: false }).problems;
    expect(uncalibrated.map((problem) => [problem.case, problem.check])).toEqual([['*', 'calibration']]);
    expect(uncalibrated[0]?.message).toContain('the run had no calibration runs');
  });

  it('measures a latency breach once more, and fails only one that holds twice', async () => {
    const baseline = baselineFrom(results);
    // The run as if one run of token-budget had stalled far beyond anything the calibration saw.
    const stalled = (by: number): Results => {
      const copy = structuredClone(results);
      const entry = copy.cases.find((other) => other.id === 'token-budget')!;
      entry.stats.overheadMs.p95 = (entry.stats.overheadMs.p95 ?? 0) + by;
      return copy;
    };
    const asked: string[][] = [];
    const once = await gateWithRemeasure(stalled(10_000), baseline, {
      baselineFile: 'b',
      selected: false,
      remeasure: async (ids) => {
        asked.push(ids);
        return results;
      },
    });
    expect(asked).toEqual([['token-budget']]);
    expect(once.passed).toBe(true);
    expect(once.remeasured).toEqual([expect.objectContaining({
      case: 'token-budget',
      passed: true,
      first: [expect.stringMatching(/^overhead p95 [\d.]+ ms > [\d.]+ ms/)],
    })]);
    expect(renderSummary({ ...results, gate: once })).toMatch(/\n {2}re-measured token-budget: within the limits the second time \(first: overhead p95/);

    const twice = await gateWithRemeasure(stalled(10_000), baseline, {
      baselineFile: 'b',
      selected: false,
      remeasure: async () => stalled(9_000),
    });
    expect(twice.passed).toBe(false);
    expect(twice.remeasured.map((entry) => [entry.case, entry.passed])).toEqual([['token-budget', false]]);
    expect(twice.problems.map((problem) => [problem.case, problem.check])).toEqual([['token-budget', 'overhead']]);
    expect(twice.problems[0]?.message)
      .toMatch(/^overhead p95 [\d.]+ ms > [\d.]+ ms \(.*\), re-measured; the first time [\d.]+ ms > [\d.]+ ms$/);

    // A figure over its limit only the second time has breached once: that is no failure either.
    const other = structuredClone(results);
    const ttfb = other.cases.find((entry) => entry.id === 'token-budget')!.stats.ttfbMs;
    ttfb.p95 = (ttfb.p95 ?? 0) + 10_000;
    const moved = await gateWithRemeasure(stalled(10_000), baseline, {
      baselineFile: 'b',
      selected: false,
      remeasure: async () => other,
    });
    expect(moved.passed).toBe(true);
    expect(moved.remeasured.map((entry) => [entry.case, entry.passed])).toEqual([['token-budget', true]]);

    // Counts are exact and never measured twice.
    let remeasured = false;
    const counts = await gateWithRemeasure(results, edit(baseline, 'task-completed', (entry) => {
      entry.toolCalls = 9;
    }), { baselineFile: 'b', selected: false, remeasure: async () => {
      remeasured = true;
      return results;
    } });
    expect(counts.passed).toBe(false);
    expect(remeasured).toBe(false);
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

  it('will not take a baseline from a run where a case did not pass, or one not calibrated', () => {
    const failing: Results = structuredClone(results);
    failing.cases[0]!.verdict = 'fail';
    expect(() => baselineFrom(failing)).toThrow(/task-completed \(fail\)/);
    const { calibration: _calibration, ...bare } = results;
    expect(() => baselineFrom(bare)).toThrow(/the run was not calibrated/);
    const broken: Results = structuredClone(results);
    broken.calibration!.failures = ['the calibration failed: disk full'];
    expect(() => baselineFrom(broken)).toThrow(/1 of 6 calibration runs did not pass \(the calibration failed: disk full\)/);
  });

  it('writes and reads a baseline file, and says what to do when there is none or it is broken', async () => {
    const folder = await tempFolder();
    const file = path.join(folder, 'baselines', 'scripted.json');
    await expect(readBaseline(file)).rejects.toThrow(/no baseline at .*: run `claw-eval baseline update`/);
    await writeBaseline(file, baselineFrom(results));
    expect((await readBaseline(file)).cases['token-budget']?.modelCalls).toBe(1);
    // A baseline of the format before PERF-6 (absolute latency) is refused, with what to do.
    await writeBaseline(file, { ...baselineFrom(results), schemaVersion: 1 } as unknown as Baseline);
    await expect(readBaseline(file)).rejects.toThrow(/is not a claw-eval baseline \(version 2\).*take it again with `claw-eval baseline update`/s);
  });

  it('the committed baseline is a valid baseline of every case in eval/cases/', async () => {
    const committed = baselineSchema.parse(JSON.parse(await readFile(path.join(evalRoot, 'baselines', 'scripted.json'), 'utf8')));
    const { suiteCases } = await import('./helpers.js');
    expect(Object.keys(committed.cases).sort()).toEqual((await suiteCases()).map((evalCase) => evalCase.id).sort());
    expect(committed.repeat).toBeGreaterThanOrEqual(5);
    expect(committed.calibration.name).toBe('bare-loop');
    expect(Object.values(committed.cases).every((entry) => entry.overheadRatio.p50 !== null)).toBe(true);
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

  it('takes the time the process waited for a CPU outside the scripted waits (the machine\'s load) off the overhead', () => {
    const spans: SpanRecord[] = [
      { id: 'r', name: 'Agent.Run', startMs: 0, endMs: 90, durationMs: 90, attributes: {}, status: 'unset' },
    ];
    expect(metricsFrom(spans, { modelMs: 12, toolMs: 30, cpuWaitMs: 25 }).overheadMs).toBe(23);
    expect(metricsFrom(spans, { modelMs: 12, toolMs: 30, cpuWaitMs: 80 }).overheadMs).toBe(0);
    // Within overlapping tool waits the counter's rise counts once: [0,10] and [5,20] are one
    // stretch (2 → 9), [30,40] another (9 → 10).
    expect(cpuWaitInUnion([
      { startedAt: 5, endedAt: 20, cpuWaitAt: { start: 4, end: 9 } },
      { startedAt: 0, endedAt: 10, cpuWaitAt: { start: 2, end: 6 } },
      { startedAt: 30, endedAt: 40, cpuWaitAt: { start: 9, end: 10 } },
    ])).toBe(8);
    expect(cpuWaitInUnion([])).toBe(0);
    // /proc/self/schedstat: ns on the CPU, ns waiting on the run queue, time slices.
    expect(cpuWaitMs(() => '812345678 2500000 42\n')).toBe(2.5);
    expect(cpuWaitMs(() => {
      throw new Error('ENOENT');
    })).toBe(0);
    expect(cpuWaitMs(() => 'garbage')).toBe(0);
    const before = cpuWaitMs();
    expect(before).toBeGreaterThanOrEqual(0);
    expect(cpuWaitMs()).toBeGreaterThanOrEqual(before);
  });

  it('counts overlapping waits once and interpolates percentiles', () => {
    expect(unionLength([[0, 10], [5, 20], [30, 40], [35, 36]])).toBe(30);
    expect(unionLength([])).toBe(0);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5], 95)).toBeCloseTo(4.8);
    expect(quantiles([])).toEqual({ p50: null, p95: null });
  });
});
