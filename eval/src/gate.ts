import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { EvalError } from './errors.js';
import type { GateProblem, GateResult, Results } from './results.js';

/** The version of the baseline file format. */
export const baselineSchemaVersion = 1;

/**
 * How far p50/p95 may rise over the baseline before the gate trips: `baseline × ratio + slack`.
 * The slack is absolute, so that figures of a few milliseconds, which timer and scheduler noise on
 * a loaded 2-core machine can double, never trip it; the ratio catches real regressions of the
 * larger figures.
 */
export interface GateThresholds {
  ratio: number;
  overheadSlackMs: number;
  ttfbSlackMs: number;
}

export const defaultThresholds: GateThresholds = {
  ratio: 2,
  overheadSlackMs: 150,
  ttfbSlackMs: 75,
};

/** Runs of each case for the gate and for a baseline, unless `--repeat` says otherwise. */
export const defaultGateRepeat = 5;

const quantile = z.object({ p50: z.number().nullable(), p95: z.number().nullable() });

export const baselineSchema = z.object({
  schemaVersion: z.literal(baselineSchemaVersion),
  createdAt: z.string(),
  git: z.object({ sha: z.string().nullable(), dirty: z.boolean().nullable() }),
  machine: z.object({
    platform: z.string(),
    cpus: z.number(),
    cpuModel: z.string(),
    node: z.string(),
  }),
  repeat: z.number().int(),
  thresholds: z.object({
    ratio: z.number().min(1),
    overheadSlackMs: z.number().min(0),
    ttfbSlackMs: z.number().min(0),
  }),
  cases: z.record(
    z.string(),
    z.object({
      modelCalls: z.number().int(),
      toolCalls: z.number().int(),
      promptTokens: z.number().int(),
      completionTokens: z.number().int(),
      ttfbMs: quantile,
      overheadMs: quantile,
    }),
  ),
});

export type Baseline = z.infer<typeof baselineSchema>;

/**
 * A baseline from a run (`claw-eval baseline update`).
 *
 * @throws EvalError `baseline_invalid` when a case did not pass or its counts were not the same in
 *   every run: a baseline is only taken from a clean, deterministic run.
 */
export function baselineFrom(
  results: Results,
  thresholds: GateThresholds = defaultThresholds,
): Baseline {
  const bad = results.cases.filter((entry) => entry.verdict !== 'pass' || !entry.stats.countsStable);
  if (results.cases.length === 0 || bad.length > 0) {
    throw new EvalError(
      results.cases.length === 0
        ? 'no case ran, so there is nothing to take a baseline from'
        : `the baseline was not written: ${bad.map((entry) => `${entry.id} (${entry.verdict !== 'pass' ? entry.verdict : 'counts differ between runs'})`).join(', ')}. ` +
          'Fix these first; a baseline is only taken from a run where every case passes',
      { code: 'baseline_invalid', userError: true },
    );
  }
  return {
    schemaVersion: baselineSchemaVersion,
    createdAt: results.createdAt,
    git: results.git,
    machine: {
      platform: results.machine.platform,
      cpus: results.machine.cpus,
      cpuModel: results.machine.cpuModel,
      node: results.machine.node,
    },
    repeat: results.repeat,
    thresholds,
    cases: Object.fromEntries(
      results.cases.map((entry) => [
        entry.id,
        {
          modelCalls: entry.stats.modelCalls,
          toolCalls: entry.stats.toolCalls,
          promptTokens: entry.stats.promptTokens,
          completionTokens: entry.stats.completionTokens,
          ttfbMs: roundQuantile(entry.stats.ttfbMs),
          overheadMs: roundQuantile(entry.stats.overheadMs),
        },
      ]),
    ),
  };
}

function roundQuantile(value: { p50: number | null; p95: number | null }) {
  const round = (figure: number | null): number | null =>
    figure === null ? null : Math.round(figure * 100) / 100;
  return { p50: round(value.p50), p95: round(value.p95) };
}

/**
 * Reads a baseline file.
 *
 * @throws EvalError `baseline_missing` (no file) or `baseline_invalid` (not a baseline).
 */
export async function readBaseline(file: string): Promise<Baseline> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new EvalError(
      `no baseline at ${file}: run \`claw-eval baseline update\` to take one (and review it ` +
      'before committing it)',
      { code: 'baseline_missing', cause: error, userError: true },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new EvalError(`${file} is not JSON: ${(error as Error).message}; take it again with \`claw-eval baseline update\``, {
      code: 'baseline_invalid',
      cause: error,
      userError: true,
    });
  }
  const parsed = baselineSchema.safeParse(value);
  if (!parsed.success) {
    throw new EvalError(
      `${file} is not a claw-eval baseline (version ${baselineSchemaVersion}): ${z.prettifyError(parsed.error)}; take it again with \`claw-eval baseline update\``,
      { code: 'baseline_invalid', userError: true },
    );
  }
  return parsed.data;
}

/** Writes a baseline file (to a temporary file first, then renamed over the old one). */
export async function writeBaseline(file: string, baseline: Baseline): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(baseline, null, 2)}\n`);
  await rename(temporary, file);
}

function over(current: number | null, base: number | null, ratio: number, slack: number) {
  if (current === null || base === null) return undefined;
  const limit = base * ratio + slack;
  return current > limit ? { current, base, limit } : undefined;
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;

/**
 * The regression gate (EVAL-6): every case must pass (an infrastructure error is not a pass), and
 * against the baseline: the same model-call, tool-call and token counts, exactly; p50 and p95 of
 * the engine's overhead and of ttfb within `baseline × ratio + slack`. A case the baseline does
 * not know, a baseline case that did not run (unless cases were selected), or a run with no case
 * at all trips it.
 */
export function checkGate(
  results: Results,
  baseline: Baseline,
  options: { baselineFile: string; selected: boolean },
): GateResult {
  const thresholds = baseline.thresholds;
  const problems: GateProblem[] = [];
  if (results.cases.length === 0) {
    problems.push({ case: '*', check: 'empty', message: 'no case ran: a suite that never ran is not a pass' });
  }
  for (const entry of results.cases) {
    if (entry.verdict !== 'pass') {
      problems.push({
        case: entry.id,
        check: 'verdict',
        message: entry.verdict === 'error'
          ? `infrastructure error (not a pass): ${entry.reason.split('\n')[0]}`
          : `failed: ${entry.reason.split('\n')[0]}`,
      });
    }
    const base = baseline.cases[entry.id];
    if (base === undefined) {
      problems.push({
        case: entry.id,
        check: 'unknown',
        message: 'not in the baseline: review the case, then run `claw-eval baseline update`',
      });
      continue;
    }
    const { stats } = entry;
    if (!stats.countsStable) {
      problems.push({ case: entry.id, check: 'unstable', message: 'call or token counts differ between runs of the same script' });
    }
    const counts = (['modelCalls', 'toolCalls', 'promptTokens', 'completionTokens'] as const)
      .filter((key) => stats[key] !== base[key])
      .map((key) => `${key} ${base[key]} → ${stats[key]}`);
    if (counts.length > 0) {
      problems.push({ case: entry.id, check: 'counts', message: `${counts.join(', ')} (the baseline's counts are exact)` });
    }
    for (const key of ['p50', 'p95'] as const) {
      const { ratio } = thresholds;
      const { overheadSlackMs, ttfbSlackMs } = thresholds;
      const overhead = over(stats.overheadMs[key], base.overheadMs[key], ratio, overheadSlackMs);
      if (overhead !== undefined) {
        problems.push({
          case: entry.id,
          check: 'overhead',
          message: `overhead ${key} ${ms(overhead.current)} > ${ms(overhead.limit)} (baseline ${ms(overhead.base)} × ${thresholds.ratio} + ${thresholds.overheadSlackMs} ms)`,
        });
      }
      const ttfb = over(stats.ttfbMs[key], base.ttfbMs[key], ratio, ttfbSlackMs);
      if (ttfb !== undefined) {
        problems.push({
          case: entry.id,
          check: 'ttfb',
          message: `ttfb ${key} ${ms(ttfb.current)} > ${ms(ttfb.limit)} (baseline ${ms(ttfb.base)} × ${thresholds.ratio} + ${thresholds.ttfbSlackMs} ms)`,
        });
      }
    }
  }
  if (!options.selected) {
    const ran = new Set(results.cases.map((entry) => entry.id));
    for (const id of Object.keys(baseline.cases)) {
      if (!ran.has(id)) {
        problems.push({
          case: id,
          check: 'missing',
          message: 'in the baseline but did not run (a case that never ran is not a pass); if it was removed on purpose, run `claw-eval baseline update`',
        });
      }
    }
  }
  return { passed: problems.length === 0, baseline: options.baselineFile, thresholds, problems };
}
