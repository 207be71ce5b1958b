import type { EvalCase, HarnessFaults, ScorerName } from './case.js';
import { calibrationName, calibrationTitle, runCalibration } from './calibration.js';
import { runCase, type RunCaseOptions } from './harness.js';
import { quantiles, runMetrics, type RunMetrics } from './metrics.js';
import type { RunRecord } from './run-record.js';
import { defaultScorers, type ScoreResult, type Scorer } from './scorers/index.js';
import { scorerNames } from './case.js';

/** `error`: the harness failed (an infrastructure error): never a pass, never a case failure. */
export type Verdict = 'pass' | 'fail' | 'error';

export interface SampleResult {
  sample: number;
  verdict: Verdict;
  reason: string;
  scores: ScoreResult[];
  metrics: RunMetrics;
  run: RunRecord;
}

/** Figures of a case over its samples. */
export interface CaseStats {
  /** The counts of the first sample, and whether every sample had the same ones. */
  modelCalls: number;
  toolCalls: number;
  promptTokens: number;
  completionTokens: number;
  countsStable: boolean;
  /** Over every model call of every sample. */
  ttfbMs: { p50: number | null; p95: number | null };
  /** Over the samples. */
  overheadMs: { p50: number | null; p95: number | null };
  /**
   * With a calibration (PERF-6): its runs made before this case's, the yardstick taken from them
   * and their neighbours, and the case's overhead p50/p95 as multiples of it — the figure the
   * latency gate compares.
   */
  calibration?: CalibrationStats;
  overheadRatio?: { p50: number | null; p95: number | null };
}

/** The calibration runs made before one case's runs (those that passed). */
export interface CalibrationStats {
  /** The overhead of each, and the ttfb of each of their replies (ms). */
  overheadMs: number[];
  ttfbMs: number[];
  /**
   * The yardstick (ms): the mean overhead of these runs and of those of the cases run just before
   * and after (`calibrationNeighbours` on each side). A mean, not a median: a long case spends
   * its time in many small steps, each as likely to be stalled as the calibration's, so it is
   * stretched by the mean; and more runs than one case's make it steadier. Null without runs.
   */
  unitMs: number | null;
}

/** Cases on each side whose calibration runs join a case's own in its yardstick. */
export const calibrationNeighbours = 2;

/** One run of the calibration: its verdict and the figures the gate reads. */
export interface CalibrationRun {
  verdict: Verdict;
  reason: string;
  overheadMs: number;
  ttfbMs: number[];
}

export interface CaseResult {
  id: string;
  title: string;
  tags: string[];
  canary?: ScorerName;
  verdict: Verdict;
  reason: string;
  samples: SampleResult[];
  stats: CaseStats;
  /** With a calibration: its run before each of this case's runs, in order. */
  calibration?: CalibrationRun[];
}

export interface SuiteResult {
  mode: 'scripted' | 'real';
  repeat: number;
  startedAt: string;
  durationMs: number;
  cases: CaseResult[];
  /** The calibration, when the runs were calibrated (PERF-6). */
  calibration?: { name: string; title: string };
}

export interface SuiteOptions {
  /** Runs of each case (repeats, or trials in real mode). Default 1. */
  repeat?: number;
  mode?: 'scripted' | 'real';
  /** Real mode: passed to every run (settings, provider). */
  run?: Pick<RunCaseOptions, 'settings' | 'provider' | 'keepFolders' | 'timeoutMs'>;
  /** Faults seeded into every run of the cases (tests). */
  faults?: HarnessFaults;
  /**
   * The latency gate's calibration (PERF-6): a run of the bare loop (`runCalibration`) right
   * before every run of every case (and one more, unscored, as a warm-up), so that each case's
   * figures can be compared with what the same machine took at the same time. `faults` are
   * seeded into its runs too (tests: `slowMachine`, a machine slowed for everything).
   */
  calibration?: { faults?: HarnessFaults };
  /** Scorers to use instead of the default ones (tests: a broken scorer must be caught). */
  scorers?: Partial<Record<ScorerName, Scorer>>;
  /** Called after each case, e.g. to print progress. */
  onCase?: (result: CaseResult) => void;
  signal?: AbortSignal;
}

/** Scores one run: its verdict, why, and every scorer's results. */
export function scoreRun(
  evalCase: EvalCase,
  run: RunRecord,
  options: { scorers?: Partial<Record<ScorerName, Scorer>>; relaxed?: boolean } = {},
): { verdict: Verdict; reason: string; scores: ScoreResult[] } {
  if (run.infraError !== undefined) {
    return {
      verdict: 'error',
      reason: `infrastructure error (not a result of the engine): ${run.infraError.split('\n')[0]}`,
      scores: [],
    };
  }
  const scorers = { ...defaultScorers, ...options.scorers };
  const context = { evalCase, run, relaxed: options.relaxed ?? false };
  const scores = scorerNames.flatMap((name) => scorers[name](context));
  if (evalCase.canary !== undefined) {
    const target = scores.filter((score) => score.scorer === evalCase.canary);
    const failed = target.find((score) => !score.pass);
    return failed === undefined
      ? {
          verdict: 'fail',
          reason:
            `canary: the ${evalCase.canary} scorer passed a run built to fail it ` +
            `(${target.length} result(s), all passing): that scorer cannot fail`,
          scores,
        }
      : {
          verdict: 'pass',
          reason: `canary: the ${evalCase.canary} scorer failed as it must: ${failed.assertion}: ${failed.reason}`,
          scores,
        };
  }
  const failures = scores.filter((score) => !score.pass);
  if (failures.length > 0) {
    return {
      verdict: 'fail',
      reason: failures.map((score) => `${score.scorer}/${score.assertion}: ${score.reason}`).join('\n'),
      scores,
    };
  }
  if (!scores.some((score) => score.kind === 'positive')) {
    return {
      verdict: 'fail',
      reason: 'no positive assertion was checked: the case proves nothing the run did',
      scores,
    };
  }
  return { verdict: 'pass', reason: `${scores.length} assertions passed`, scores };
}

/** Figures of a case over its samples. */
export function caseStats(samples: readonly SampleResult[]): CaseStats {
  const counts = samples.map((sample) => [
    sample.metrics.modelCalls,
    sample.metrics.toolCalls,
    sample.metrics.promptTokens,
    sample.metrics.completionTokens,
  ]);
  const first = counts[0] ?? [0, 0, 0, 0];
  return {
    modelCalls: first[0] ?? 0,
    toolCalls: first[1] ?? 0,
    promptTokens: first[2] ?? 0,
    completionTokens: first[3] ?? 0,
    countsStable: counts.every((entry) => entry.every((value, index) => value === first[index])),
    ttfbMs: quantiles(samples.flatMap((sample) => sample.metrics.ttfbMs)),
    overheadMs: quantiles(samples.map((sample) => sample.metrics.overheadMs)),
  };
}

/**
 * Adds the calibration to the stats of cases run in this order, each with the calibration runs
 * made before its own (PERF-6): the yardstick of each (`CalibrationStats.unitMs`) and its
 * overhead as multiples of it.
 */
export function calibrateStats(
  cases: ReadonlyArray<{ stats: CaseStats; calibration?: readonly CalibrationRun[] }>,
): void {
  const passed = cases.map((entry) =>
    (entry.calibration ?? []).filter((run) => run.verdict === 'pass'));
  for (const [index, entry] of cases.entries()) {
    if (entry.calibration === undefined) continue;
    const around = passed
      .slice(Math.max(0, index - calibrationNeighbours), index + calibrationNeighbours + 1)
      .flat()
      .map((run) => run.overheadMs);
    const unitMs = around.length === 0
      ? null
      : around.reduce((total, value) => total + value, 0) / around.length;
    const own = passed[index] ?? [];
    entry.stats.calibration = {
      overheadMs: own.map((run) => run.overheadMs),
      ttfbMs: own.flatMap((run) => run.ttfbMs),
      unitMs,
    };
    // A yardstick below a microsecond measured nothing.
    const ratio = (value: number | null): number | null =>
      value === null || unitMs === null || unitMs < 0.001 ? null : value / unitMs;
    entry.stats.overheadRatio = {
      p50: ratio(entry.stats.overheadMs.p50),
      p95: ratio(entry.stats.overheadMs.p95),
    };
  }
}

/** A case's verdict over its samples: any failure fails it; else any error makes it an error. */
export function caseVerdict(
  samples: readonly SampleResult[],
): { verdict: Verdict; reason: string } {
  const failed = samples.find((sample) => sample.verdict === 'fail');
  if (failed !== undefined) {
    const count = samples.filter((sample) => sample.verdict === 'fail').length;
    return {
      verdict: 'fail',
      reason: samples.length > 1 ? `${count} of ${samples.length} runs failed; run ${failed.sample + 1}: ${failed.reason}` : failed.reason,
    };
  }
  const error = samples.find((sample) => sample.verdict === 'error');
  if (error !== undefined) return { verdict: 'error', reason: error.reason };
  if (samples.length === 0) return { verdict: 'error', reason: 'the case never ran' };
  return { verdict: 'pass', reason: samples[0]?.reason ?? '' };
}

/**
 * Runs cases one after another (timing figures need a quiet machine, not parallel runs), each
 * `repeat` times, and scores every run.
 */
export async function runSuite(
  cases: readonly EvalCase[],
  options: SuiteOptions = {},
): Promise<SuiteResult> {
  const repeat = options.repeat ?? 1;
  const mode = options.mode ?? 'scripted';
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const results: CaseResult[] = [];
  const first = cases[0];
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const calibration = mode === 'scripted' ? options.calibration : undefined;
  // One unscored run first: the first run of a process pays for loading and compiling the code,
  // which is not the engine's overhead and would skew the first case's p95 (and the same for the
  // calibration's first run).
  if (calibration !== undefined) await calibrate(calibration, options.signal);
  if (repeat > 1 && mode === 'scripted' && first !== undefined) {
    await runCase(first, { sample: -1, ...signal });
  }
  for (const evalCase of cases) {
    const samples: SampleResult[] = [];
    const calibrationRuns: CalibrationRun[] = [];
    for (let sample = 0; sample < repeat; sample += 1) {
      options.signal?.throwIfAborted();
      if (calibration !== undefined) {
        // Right before each run: the two see the same machine, however busy it is just then.
        calibrationRuns.push(await calibrate(calibration, options.signal));
      }
      const run = await runCase(evalCase, {
        sample,
        mode,
        ...options.run,
        ...(options.faults === undefined ? {} : { faults: options.faults }),
        ...signal,
      });
      const scored = scoreRun(evalCase, run, {
        ...(options.scorers === undefined ? {} : { scorers: options.scorers }),
        relaxed: mode === 'real',
      });
      samples.push({ sample, ...scored, metrics: runMetrics(run), run });
    }
    const result: CaseResult = {
      id: evalCase.id,
      title: evalCase.title,
      tags: evalCase.tags,
      ...(evalCase.canary === undefined ? {} : { canary: evalCase.canary }),
      ...caseVerdict(samples),
      samples,
      stats: caseStats(samples),
      ...(calibration === undefined ? {} : { calibration: calibrationRuns }),
    };
    results.push(result);
    options.onCase?.(result);
  }
  if (calibration !== undefined) calibrateStats(results);
  return {
    mode,
    repeat,
    startedAt,
    durationMs: performance.now() - started,
    cases: results,
    ...(calibration === undefined
      ? {}
      : { calibration: { name: calibrationName, title: calibrationTitle } }),
  };
}

/** One run of the calibration (an interrupted one stops the suite, as a case's would). */
async function calibrate(
  calibration: NonNullable<SuiteOptions['calibration']>,
  signal: AbortSignal | undefined,
): Promise<CalibrationRun> {
  const run = await runCalibration({
    ...(calibration.faults === undefined ? {} : { faults: calibration.faults }),
    ...(signal === undefined ? {} : { signal }),
  });
  signal?.throwIfAborted();
  return run;
}
