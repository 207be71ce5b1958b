import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { EvalError } from '../errors.js';
import { resultsSchema, resultsSchemaVersion, type CaseResults, type Results } from '../results.js';
import { badgeFor, escapeHtml, reportStyle } from './html.js';
import { formatMs, renderTable } from './table.js';

/**
 * Reads and checks a results.json.
 *
 * @throws EvalError `results_invalid` when it cannot be read, is not JSON, has another schema
 *   version, or does not match the schema.
 */
export async function readResults(file: string): Promise<Results> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new EvalError(`cannot read ${file}: ${(error as Error).message}; pass the results.json of a claw-eval run`, {
      code: 'results_invalid',
      cause: error,
      userError: true,
    });
  }
  const version = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== resultsSchemaVersion) {
    throw new EvalError(
      `${file} has schema version ${JSON.stringify(version)}; this claw-eval reads version ${resultsSchemaVersion}. Run both sides with the same claw-eval`,
      { code: 'results_invalid', userError: true },
    );
  }
  const parsed = resultsSchema.safeParse(value);
  if (!parsed.success) {
    throw new EvalError(`${file} is not a valid claw-eval results file: ${z.prettifyError(parsed.error)}`, {
      code: 'results_invalid',
      userError: true,
    });
  }
  return parsed.data;
}

/** How one figure moved from A to B. */
export interface Delta {
  a: number | null;
  b: number | null;
  /** b − a (null when either is missing). */
  change: number | null;
}

export interface CaseComparison {
  id: string;
  verdictA: CaseResults['verdict'] | 'absent';
  verdictB: CaseResults['verdict'] | 'absent';
  /** The verdict changed. */
  flipped: boolean;
  trajectoryA: string[];
  trajectoryB: string[];
  trajectoryChanged: boolean;
  modelCalls: Delta;
  toolCalls: Delta;
  tokens: Delta;
  ttfbP50: Delta;
  ttfbP95: Delta;
  overheadP50: Delta;
  overheadP95: Delta;
}

export interface Comparison {
  a: { file: string; createdAt: string; sha: string | null };
  b: { file: string; createdAt: string; sha: string | null };
  cases: CaseComparison[];
  flips: number;
  trajectoryChanges: number;
}

function delta(a: number | null | undefined, b: number | null | undefined): Delta {
  const left = a ?? null;
  const right = b ?? null;
  return { a: left, b: right, change: left === null || right === null ? null : right - left };
}

/** The tools of a case's first run, in order. */
function trajectoryOf(entry: CaseResults | undefined): string[] {
  return entry?.samples[0]?.trajectory ?? [];
}

/** Compares two runs case by case (EVAL-6): verdict flips, trajectory changes, metric deltas. */
export function compareResults(
  a: Results,
  b: Results,
  files: { a: string; b: string } = { a: 'A', b: 'B' },
): Comparison {
  const byId = (results: Results) => new Map(results.cases.map((entry) => [entry.id, entry]));
  const left = byId(a);
  const right = byId(b);
  const ids = [...new Set([...left.keys(), ...right.keys()])];
  const cases = ids.map((id): CaseComparison => {
    const one = left.get(id);
    const two = right.get(id);
    const trajectoryA = trajectoryOf(one);
    const trajectoryB = trajectoryOf(two);
    const verdictA = one?.verdict ?? 'absent';
    const verdictB = two?.verdict ?? 'absent';
    return {
      id,
      verdictA,
      verdictB,
      flipped: verdictA !== verdictB,
      trajectoryA,
      trajectoryB,
      trajectoryChanged: one !== undefined && two !== undefined && trajectoryA.join('\u0000') !== trajectoryB.join('\u0000'),
      modelCalls: delta(one?.stats.modelCalls, two?.stats.modelCalls),
      toolCalls: delta(one?.stats.toolCalls, two?.stats.toolCalls),
      tokens: delta(
        one === undefined ? null : one.stats.promptTokens + one.stats.completionTokens,
        two === undefined ? null : two.stats.promptTokens + two.stats.completionTokens,
      ),
      ttfbP50: delta(one?.stats.ttfbMs.p50, two?.stats.ttfbMs.p50),
      ttfbP95: delta(one?.stats.ttfbMs.p95, two?.stats.ttfbMs.p95),
      overheadP50: delta(one?.stats.overheadMs.p50, two?.stats.overheadMs.p50),
      overheadP95: delta(one?.stats.overheadMs.p95, two?.stats.overheadMs.p95),
    };
  });
  return {
    a: { file: files.a, createdAt: a.createdAt, sha: a.git.sha },
    b: { file: files.b, createdAt: b.createdAt, sha: b.git.sha },
    cases,
    flips: cases.filter((entry) => entry.flipped).length,
    trajectoryChanges: cases.filter((entry) => entry.trajectoryChanged).length,
  };
}

function countDelta(value: Delta): string {
  if (value.a === null || value.b === null) return `${value.a ?? '-'}→${value.b ?? '-'}`;
  return value.change === 0 ? String(value.b) : `${value.a}→${value.b}`;
}

function msDelta(value: Delta): string {
  if (value.change === null) return `${formatMs(value.a)}→${formatMs(value.b)}`;
  const sign = value.change >= 0 ? '+' : '';
  return `${formatMs(value.b)} (${sign}${value.change.toFixed(1)})`;
}

/** The comparison as a terminal table, then flips and trajectory changes spelled out. */
export function renderComparison(comparison: Comparison): string {
  const header = ['case', 'verdict A→B', 'calls', 'tools', 'tokens', 'ttfb p50', 'ttfb p95', 'overhead p50', 'overhead p95'];
  const rows = comparison.cases.map((entry) => [
    entry.id,
    entry.flipped ? `${entry.verdictA}→${entry.verdictB} !` : entry.verdictB,
    countDelta(entry.modelCalls),
    countDelta(entry.toolCalls),
    countDelta(entry.tokens),
    msDelta(entry.ttfbP50),
    msDelta(entry.ttfbP95),
    msDelta(entry.overheadP50),
    msDelta(entry.overheadP95),
  ]);
  const lines = [
    `A: ${comparison.a.file} (${comparison.a.createdAt}, ${comparison.a.sha?.slice(0, 12) ?? 'unknown commit'})`,
    `B: ${comparison.b.file} (${comparison.b.createdAt}, ${comparison.b.sha?.slice(0, 12) ?? 'unknown commit'})`,
    '',
    renderTable(header, rows),
    '',
    `${comparison.flips} verdict flip(s), ${comparison.trajectoryChanges} trajectory change(s); times in ms, B (B − A)`,
  ];
  for (const entry of comparison.cases.filter((item) => item.flipped)) {
    lines.push(`flip ${entry.id}: ${entry.verdictA} → ${entry.verdictB}`);
  }
  for (const entry of comparison.cases.filter((item) => item.trajectoryChanged)) {
    lines.push(`trajectory ${entry.id}:`, `  A: ${entry.trajectoryA.join(' → ') || '(none)'}`, `  B: ${entry.trajectoryB.join(' → ') || '(none)'}`);
  }
  return lines.join('\n');
}

/** The comparison as a self-contained HTML page (no network, like the report). */
export function renderComparisonHtml(comparison: Comparison): string {
  const h = escapeHtml;
  const rows = comparison.cases.map((entry) => `<tr data-verdict="${entry.flipped ? 'fail' : 'pass'}">` +
    `<td>${h(entry.id)}</td><td>${badgeFor(entry.verdictA)} → ${badgeFor(entry.verdictB)}${entry.flipped ? ' <b class="bad">flip</b>' : ''}</td>` +
    `<td class="num">${h(countDelta(entry.modelCalls))}</td><td class="num">${h(countDelta(entry.toolCalls))}</td><td class="num">${h(countDelta(entry.tokens))}</td>` +
    `<td class="num">${h(msDelta(entry.ttfbP50))}</td><td class="num">${h(msDelta(entry.ttfbP95))}</td>` +
    `<td class="num">${h(msDelta(entry.overheadP50))}</td><td class="num">${h(msDelta(entry.overheadP95))}</td></tr>`);
  const trajectories = comparison.cases.filter((entry) => entry.trajectoryChanged).map((entry) =>
    `<h3>${h(entry.id)}</h3><pre class="diff"><span class="del">- A: ${h(entry.trajectoryA.join(' → ') || '(none)')}</span>\n<span class="add">+ B: ${h(entry.trajectoryB.join(' → ') || '(none)')}</span></pre>`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<title>claw-eval compare — ${comparison.flips} flip(s)</title>
<style>${reportStyle}</style>
</head>
<body>
<header>
<h1>claw-eval compare</h1>
<p class="meta">A: ${h(comparison.a.file)} (${h(comparison.a.createdAt)}, ${h(comparison.a.sha?.slice(0, 12) ?? 'unknown commit')})<br>B: ${h(comparison.b.file)} (${h(comparison.b.createdAt)}, ${h(comparison.b.sha?.slice(0, 12) ?? 'unknown commit')})</p>
<div class="cards"><div class="card"><b class="${comparison.flips > 0 ? 'bad' : 'ok'}">${comparison.flips}</b>verdict flips</div><div class="card"><b>${comparison.trajectoryChanges}</b>trajectory changes</div></div>
</header>
<main>
<h2>Cases</h2>
<p class="legend">Counts: A→B when they differ. Times in ms: B (B − A).</p>
<table><tr><th>case</th><th>verdict A → B</th><th>calls</th><th>tools</th><th>tokens</th><th>ttfb p50</th><th>ttfb p95</th><th>overhead p50</th><th>overhead p95</th></tr>
${rows.join('\n')}
</table>
<h2>Trajectory changes</h2>
${trajectories.length === 0 ? '<p class="legend">No case called other tools in B than in A.</p>' : trajectories.join('\n')}
</main>
</body>
</html>
`;
}
