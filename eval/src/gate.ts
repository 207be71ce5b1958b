import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { spreadOf } from './calibration.js';
import { EvalError } from './errors.js';
import { quantiles } from './metrics.js';
import type {
  CaseResults,
  GateProblem,
  GateResult,
  MachineNoise,
  Results,
} from './results.js';

/** The version of the baseline file format (2: latency against a calibration, PERF-6). */
export const baselineSchemaVersion = 2;

/**
 * How far a case's latency may rise over its baseline before the gate trips (PERF-6).
 *
 * - Overhead, the engine's own time, is what a slower or busier machine stretches: it is compared
 *   as a multiple of the calibration's yardstick (the mean overhead of a bare loop without claw,
 *   run right before each of the case's runs and its neighbours'), and may reach the baseline's
 *   multiple × `ratio`. The calibration runs none of claw's code, so an engine regression moves
 *   the case and not the yardstick.
 * - ttfb of a scripted run is mostly the script's own wait, which no machine stretches (a busy
 *   one makes timers late, and that is noise): it is compared in milliseconds, up to
 *   `baseline × ratio`.
 *
 * Both limits then get the floor (timer granularity, so that figures of a millisecond or two
 * cannot trip them). The p95 limits, and the ttfb p50 limit, also get room for the machine's
 * noise as the calibration measured it in the same run: its max − p50 for p95 (a p95 over five
 * runs is nearly their slowest run, so it gets room for the slowest stall the machine showed),
 * times the case's baseline multiple for overhead (when above 1: a run that lasts that many times
 * the calibration's meets that many times its stalls); its p95 − p50 for the ttfb p50. The
 * overhead p50 gets none: the median of the runs shrugs off stalls and the yardstick follows the
 * machine's speed, and room there would hide a regression exactly when the machine is busy (a
 * 20 ms sleep per turn, on a loaded 2-core machine). What noise still breaches a limit, the one
 * re-measure takes away.
 */
export interface GateThresholds {
  ratio: number;
  overheadFloorMs: number;
  ttfbFloorMs: number;
}

export const defaultThresholds: GateThresholds = {
  ratio: 2,
  overheadFloorMs: 5,
  ttfbFloorMs: 5,
};

/** Runs of each case for the gate and for a baseline, unless `--repeat` says otherwise. */
export const defaultGateRepeat = 5;

/**
 * Runs of each case when its latency is measured once more: twice the first measurement's, so
 * that the second, which decides, is the steadier.
 */
export function remeasureRepeat(repeat: number): number {
  return repeat * 2;
}

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
    overheadFloorMs: z.number().min(0),
    ttfbFloorMs: z.number().min(0),
  }),
  /** The calibration's figures in the baseline's run: what the machine it was taken on took. */
  calibration: z.object({
    name: z.string(),
    runs: z.number().int(),
    overheadMs: quantile,
    ttfbMs: quantile,
  }),
  cases: z.record(
    z.string(),
    z.object({
      modelCalls: z.number().int(),
      toolCalls: z.number().int(),
      promptTokens: z.number().int(),
      completionTokens: z.number().int(),
      /** Gated, in ms. */
      ttfbMs: quantile,
      /** As measured on the baseline's machine; for reading only. */
      overheadMs: quantile,
      /** Overhead as a multiple of the calibration's yardstick next to it: gated. */
      overheadRatio: quantile,
    }),
  ),
});

export type Baseline = z.infer<typeof baselineSchema>;

/**
 * A baseline from a calibrated run (`claw-eval baseline update`).
 *
 * @throws EvalError `baseline_invalid` when a case did not pass or its counts were not the same in
 *   every run, or the run was not calibrated or a calibration run did not pass: a baseline is only
 *   taken from a clean, deterministic, calibrated run.
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
  const calibration = results.calibration;
  const runs = calibrationRuns([results]);
  const uncalibrated = calibration === undefined || runs.overheadMs.length === 0;
  if (uncalibrated || calibration.failures.length > 0) {
    throw new EvalError(
      calibration === undefined || calibration.runs === 0
        ? 'the baseline was not written: the run was not calibrated (a baseline holds overhead as a multiple of the calibration\'s)'
        : `the baseline was not written: ${calibration.failures.length} of ${calibration.runs} calibration runs did not pass (${calibration.failures[0] ?? 'none passed'})`,
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
    calibration: {
      name: calibration.name,
      runs: runs.overheadMs.length,
      overheadMs: roundQuantile(quantiles(runs.overheadMs)),
      ttfbMs: roundQuantile(quantiles(runs.ttfbMs)),
    },
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
          overheadRatio: roundQuantile(
            entry.stats.overheadRatio ?? { p50: null, p95: null },
            10_000,
          ),
        },
      ]),
    ),
  };
}

function roundQuantile(value: { p50: number | null; p95: number | null }, scale = 100) {
  const round = (figure: number | null): number | null =>
    figure === null ? null : Math.round(figure * scale) / scale;
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

const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** The figures of every calibration run that passed in some runs' results. */
function calibrationRuns(
  runs: ReadonlyArray<Results | undefined>,
): { overheadMs: number[]; ttfbMs: number[] } {
  const windows = runs
    .flatMap((entry) => entry?.cases ?? [])
    .map((entry) => entry.stats.calibration);
  return {
    overheadMs: windows.flatMap((window) => window?.overheadMs ?? []),
    ttfbMs: windows.flatMap((window) => window?.ttfbMs ?? []),
  };
}

/**
 * The machine's noise over the calibration runs of some runs' results, and how much slower than
 * the baseline's calibration they ran (p50 against p50).
 */
export function noiseOf(
  runs: ReadonlyArray<Results | undefined>,
  baseline: Baseline,
): MachineNoise {
  const figures = calibrationRuns(runs);
  const overheadMs = spreadOf(figures.overheadMs);
  const base = baseline.calibration.overheadMs.p50;
  return {
    runs: figures.overheadMs.length,
    overheadMs,
    ttfbMs: spreadOf(figures.ttfbMs),
    slowdown: overheadMs.p50 === null || base === null || base <= 0 ? null : overheadMs.p50 / base,
  };
}

/** Room for the machine's noise: p95 − p50 of the calibration for p50, max − p50 for p95. */
export function noiseAllowance(spread: MachineNoise['overheadMs'], key: 'p50' | 'p95'): number {
  const top = key === 'p50' ? spread.p95 : spread.max;
  return top === null || spread.p50 === null ? 0 : Math.max(0, top - spread.p50);
}

/** A latency figure over its limit. */
interface Breach {
  check: 'overhead' | 'ttfb';
  key: 'p50' | 'p95';
  current: number;
  limit: number;
  /** How the limit was made. */
  why: string;
}

/** The latency checks of one case's figures (PERF-6). */
function latencyBreaches(
  stats: CaseResults['stats'],
  base: Baseline['cases'][string],
  noise: MachineNoise,
  thresholds: GateThresholds,
): Breach[] {
  const breaches: Breach[] = [];
  const { ratio, overheadFloorMs, ttfbFloorMs } = thresholds;
  const unit = stats.calibration?.unitMs ?? null;
  for (const key of ['p50', 'p95'] as const) {
    const overhead = stats.overheadMs[key];
    const multiple = base.overheadRatio[key];
    if (overhead !== null && multiple !== null && unit !== null) {
      // No room for noise on p50 (a median of runs shrugs off stalls, and the yardstick moves with
      // the machine): noise there would hide a real regression on a busy machine. On p95 a case
      // that runs `multiple` times as long as the calibration meets that many times its stalls
      // (the baseline's multiple, so that a regression cannot widen its own limit).
      const room = key === 'p50'
        ? 0
        : Math.max(1, multiple) * noiseAllowance(noise.overheadMs, key);
      const limit = multiple * ratio * unit + overheadFloorMs + room;
      if (overhead > limit) {
        breaches.push({
          check: 'overhead',
          key,
          current: overhead,
          limit,
          why: `${(overhead / unit).toFixed(2)}× the calibration's ${ms(unit)}; limit: the baseline's ${multiple.toFixed(2)}× × ${ratio}, + ${overheadFloorMs} ms, + noise ${ms(room)}`,
        });
      }
    }
    const ttfb = stats.ttfbMs[key];
    const baseTtfb = base.ttfbMs[key];
    if (ttfb !== null && baseTtfb !== null) {
      const room = noiseAllowance(noise.ttfbMs, key);
      const limit = baseTtfb * ratio + ttfbFloorMs + room;
      if (ttfb > limit) {
        breaches.push({
          check: 'ttfb',
          key,
          current: ttfb,
          limit,
          why: `limit: the baseline's ${ms(baseTtfb)} × ${ratio}, + ${ttfbFloorMs} ms, + noise ${ms(room)}`,
        });
      }
    }
  }
  return breaches;
}

const describeBreach = (breach: Breach): string =>
  `${breach.check} ${breach.key} ${ms(breach.current)} > ${ms(breach.limit)} (${breach.why})`;

export interface GateOptions {
  baselineFile: string;
  /** Cases were selected (--filter/--tag): baseline cases outside the selection need not run. */
  selected: boolean;
  /** The cases whose latency breached, measured once more: their latency is judged on these. */
  remeasured?: Results;
}

/**
 * The regression gate (EVAL-6, PERF-6): every case must pass (an infrastructure error is not a
 * pass), and against the baseline: the same model-call, tool-call and token counts, exactly; p50
 * and p95 of the engine's overhead, as a multiple of the calibration measured next to it, and of
 * ttfb, within the thresholds (`GateThresholds`), the machine's noise allowed for. A case the
 * baseline does not know, a baseline case that did not run (unless cases were selected), a run
 * with no case at all, or one without a passing calibration trips it.
 *
 * With `remeasured`, the latency of the cases in it is judged again on their second measurement
 * (the first one's breaches are kept in `remeasured` and quoted): a figure fails only when it is
 * over its limit in both.
 */
export function checkGate(results: Results, baseline: Baseline, options: GateOptions): GateResult {
  const thresholds = baseline.thresholds;
  const problems: GateProblem[] = [];
  const remeasured: GateResult['remeasured'] = [];
  if (results.cases.length === 0) {
    problems.push({ case: '*', check: 'empty', message: 'no case ran: a suite that never ran is not a pass' });
  }
  const calibration = results.calibration;
  if (calibration === undefined) {
    problems.push({
      case: '*',
      check: 'calibration',
      message: 'the run had no calibration runs, so its latency cannot be judged on this machine: gate a run made with --gate',
    });
  } else if (calibration.failures.length > 0) {
    problems.push({
      case: calibration.name,
      check: 'calibration',
      message: `${calibration.failures.length} of ${calibration.runs} calibration runs failed (${calibration.failures[0]}): the machine could not be measured`,
    });
  }
  const noise = noiseOf([results], baseline);
  const noiseAfter = noiseOf([results, options.remeasured], baseline);
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
    if (calibration === undefined) continue;
    const first = latencyBreaches(stats, base, noise, thresholds);
    const again = first.length === 0
      ? undefined
      : options.remeasured?.cases.find((other) => other.id === entry.id);
    if (again === undefined) {
      problems.push(...first.map((breach) => ({
        case: entry.id,
        check: breach.check,
        message: describeBreach(breach),
      })));
      continue;
    }
    // Only a breach the second measurement confirms fails: the same figure over its limit again.
    // One that shows only then has breached once, like the ones it did not confirm.
    const second = latencyBreaches(again.stats, base, noiseAfter, thresholds).filter((breach) =>
      first.some((other) => other.check === breach.check && other.key === breach.key));
    if (again.verdict !== 'pass') {
      problems.push({ case: entry.id, check: 'verdict', message: `did not pass when re-measured: ${again.reason.split('\n')[0]}` });
    }
    remeasured.push({
      case: entry.id,
      passed: second.length === 0 && again.verdict === 'pass',
      first: first.map(describeBreach),
      overheadMs: again.stats.overheadMs,
      ...(again.stats.overheadRatio === undefined
        ? {}
        : { overheadRatio: again.stats.overheadRatio }),
      ttfbMs: again.stats.ttfbMs,
    });
    for (const breach of second) {
      const before = first.find(
        (other) => other.check === breach.check && other.key === breach.key,
      );
      problems.push({
        case: entry.id,
        check: breach.check,
        message: `${describeBreach(breach)}, re-measured` +
          (before === undefined ? '' : `; the first time ${ms(before.current)} > ${ms(before.limit)}`),
      });
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
  return {
    passed: problems.length === 0,
    baseline: options.baselineFile,
    thresholds,
    ...(calibration === undefined ? {} : { noise: remeasured.length > 0 ? noiseAfter : noise }),
    remeasured,
    problems,
  };
}

/** The cases whose latency (overhead or ttfb) breached the gate. */
export function latencyBreached(gate: GateResult): string[] {
  const ids = gate.problems
    .filter((problem) => problem.check === 'overhead' || problem.check === 'ttfb')
    .map((problem) => problem.case);
  return [...new Set(ids)];
}

/**
 * The gate with its one re-measure (PERF-6): when the latency of some cases breaches it,
 * `remeasure` runs those cases again (calibrated, as before, `remeasureRepeat` times each) and
 * their latency is judged on that second measurement. A breach that holds twice fails the gate;
 * a stall of a busy machine, which seldom strikes the same case twice, does not.
 */
export async function gateWithRemeasure(
  results: Results,
  baseline: Baseline,
  options: GateOptions & { remeasure: (ids: string[]) => Promise<Results> },
): Promise<GateResult> {
  const { remeasure, ...gateOptions } = options;
  const first = checkGate(results, baseline, gateOptions);
  const ids = latencyBreached(first);
  if (ids.length === 0) return first;
  return checkGate(results, baseline, { ...gateOptions, remeasured: await remeasure(ids) });
}
