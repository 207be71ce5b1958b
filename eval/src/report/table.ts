import type { Baseline } from '../gate.js';
import type { CaseResults, GateResult, Results } from '../results.js';

/** Formats milliseconds for a table cell. */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

/** Lays out rows as a plain-text table with a header rule. */
export function renderTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** What changed against the baseline, in a few words (`=` when nothing did). */
export function baselineDelta(entry: CaseResults, baseline: Baseline | undefined): string {
  if (baseline === undefined) return '';
  const base = baseline.cases[entry.id];
  if (base === undefined) return 'new';
  const parts: string[] = [];
  const { stats } = entry;
  if (stats.modelCalls !== base.modelCalls || stats.toolCalls !== base.toolCalls) {
    parts.push(`calls ${base.modelCalls}/${base.toolCalls}→${stats.modelCalls}/${stats.toolCalls}`);
  }
  const tokens = stats.promptTokens + stats.completionTokens;
  const baseTokens = base.promptTokens + base.completionTokens;
  const tokensChanged =
    stats.promptTokens !== base.promptTokens || stats.completionTokens !== base.completionTokens;
  if (tokensChanged) {
    parts.push(`tokens ${baseTokens}→${tokens}`);
  }
  // Overhead as a multiple of the calibration when the run was calibrated (what the gate
  // compares; milliseconds from another machine say little), else in milliseconds.
  const ratio = stats.overheadRatio?.p50;
  const baseRatio = base.overheadRatio.p50;
  const overhead = stats.overheadMs.p50;
  const baseOverhead = base.overheadMs.p50;
  if (ratio !== undefined && ratio !== null && baseRatio !== null) {
    parts.push(`ovh p50 ${baseRatio.toFixed(2)}→${ratio.toFixed(2)}× cal`);
  } else if (overhead !== null && baseOverhead !== null) {
    const delta = overhead - baseOverhead;
    parts.push(`ovh p50 ${delta >= 0 ? '+' : ''}${delta.toFixed(1)}ms`);
  }
  return parts.length === 0 ? '=' : parts.join(', ');
}

const verdictLabel: Record<CaseResults['verdict'], string> = {
  pass: 'pass',
  fail: 'FAIL',
  error: 'ERROR',
};

/**
 * The terminal summary (EVAL-6): one row per case (verdict, model/tool calls, ttfb and overhead
 * p50/p95, tokens, delta against the baseline), then why each failing case failed, the gate, and
 * where the reports are.
 */
export function renderSummary(
  results: Results,
  options: { baseline?: Baseline; files?: string[] } = {},
): string {
  const real = results.mode === 'real';
  const header = [
    'case', 'verdict', 'calls', 'ttfb p50/p95', 'overhead p50/p95', 'tokens',
    ...(real ? ['pass@1', 'pass^k'] : []),
    ...(options.baseline === undefined ? [] : ['Δ baseline']),
  ];
  const rows = results.cases.map((entry) => [
    entry.canary === undefined ? entry.id : `${entry.id} (canary)`,
    verdictLabel[entry.verdict],
    `${entry.stats.modelCalls}/${entry.stats.toolCalls}`,
    `${formatMs(entry.stats.ttfbMs.p50)}/${formatMs(entry.stats.ttfbMs.p95)}`,
    `${formatMs(entry.stats.overheadMs.p50)}/${formatMs(entry.stats.overheadMs.p95)}`,
    String(entry.stats.promptTokens + entry.stats.completionTokens),
    ...(real ? [entry.real?.passAt1.toFixed(2) ?? '-', entry.real?.passHatK.toFixed(2) ?? '-'] : []),
    ...(options.baseline === undefined ? [] : [baselineDelta(entry, options.baseline)]),
  ]);
  const { summary } = results;
  const lines = [
    renderTable(header, rows),
    '',
    `${summary.cases} case(s), ${results.repeat} run(s) each: ${summary.passed} passed, ${summary.failed} failed, ${summary.errors} infrastructure error(s)` +
    ` in ${(results.durationMs / 1000).toFixed(1)} s` +
    (summary.passAt1 === undefined ? '' : `; pass@1 ${summary.passAt1.toFixed(2)}, pass^${results.repeat} ${summary.passHatK?.toFixed(2)}`),
  ];
  const failing = results.cases.filter((entry) => entry.verdict !== 'pass');
  for (const entry of failing) {
    lines.push('', `${verdictLabel[entry.verdict]} ${entry.id}: ${entry.title}`);
    for (const line of entry.reason.split('\n')) lines.push(`  ${line}`);
  }
  if (results.gate !== undefined) {
    lines.push('');
    if (results.gate.passed) {
      lines.push(`gate: passed against ${results.gate.baseline}`);
    } else {
      lines.push(`gate: FAILED against ${results.gate.baseline} (${results.gate.problems.length} problem(s))`);
      for (const problem of results.gate.problems) lines.push(`  ${problem.case}: ${problem.message}`);
    }
    lines.push(...gateNoiseLines(results.gate).map((line) => `  ${line}`));
  }
  if (options.files !== undefined && options.files.length > 0) {
    lines.push('', ...options.files.map((file) => `wrote ${file}`));
  }
  return lines.join('\n');
}

const noiseMs = (value: number | null): string => (value === null ? '-' : `${value.toFixed(1)} ms`);

/**
 * What the latency verdict was judged against (PERF-6): the machine's noise as the calibration
 * measured it, how much slower than the baseline's it ran, and the cases measured twice.
 */
export function gateNoiseLines(gate: GateResult): string[] {
  const lines: string[] = [];
  const { noise } = gate;
  if (noise !== undefined) {
    lines.push(
      `machine noise (${noise.runs} calibration runs): overhead p50 ${noiseMs(noise.overheadMs.p50)}, ` +
      `p95 ${noiseMs(noise.overheadMs.p95)}, max ${noiseMs(noise.overheadMs.max)}; ttfb p50 ` +
      `${noiseMs(noise.ttfbMs.p50)}, p95 ${noiseMs(noise.ttfbMs.p95)}, max ${noiseMs(noise.ttfbMs.max)}` +
      (noise.slowdown === null ? '' : `; ${noise.slowdown.toFixed(2)}× the baseline's calibration`),
    );
  }
  for (const entry of gate.remeasured) {
    lines.push(
      `re-measured ${entry.case}: ${entry.passed ? 'within the limits the second time' : 'over them again'} ` +
      `(first: ${entry.first.join('; ')})`,
    );
  }
  return lines;
}
