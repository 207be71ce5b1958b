import type { EvalCase, HarnessFaults, ScorerName } from './case.js';
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
}

export interface SuiteResult {
  mode: 'scripted' | 'real';
  repeat: number;
  startedAt: string;
  durationMs: number;
  cases: CaseResult[];
}

export interface SuiteOptions {
  /** Runs of each case (repeats, or trials in real mode). Default 1. */
  repeat?: number;
  mode?: 'scripted' | 'real';
  /** Real mode: passed to every run (settings, provider). */
  run?: Pick<RunCaseOptions, 'settings' | 'provider' | 'keepFolders' | 'timeoutMs'>;
  /** Faults seeded into every run (tests). */
  faults?: HarnessFaults;
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
  if (repeat > 1 && mode === 'scripted' && first !== undefined) {
    // One unscored run first: the first run of a process pays for loading and compiling the
    // code, which is not the engine's overhead and would skew the first case's p95.
    await runCase(first, {
      sample: -1,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }
  for (const evalCase of cases) {
    const samples: SampleResult[] = [];
    for (let sample = 0; sample < repeat; sample += 1) {
      options.signal?.throwIfAborted();
      const run = await runCase(evalCase, {
        sample,
        mode,
        ...options.run,
        ...(options.faults === undefined ? {} : { faults: options.faults }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
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
    };
    results.push(result);
    options.onCase?.(result);
  }
  return {
    mode,
    repeat,
    startedAt,
    durationMs: performance.now() - started,
    cases: results,
  };
}
