import type { Message } from '@claw/core';
import { spanAttributes } from '@claw/engine';
import type { CaseResults, Results, SampleResults } from '../results.js';
import { formatMs, gateNoiseLines } from './table.js';

type Detail = NonNullable<SampleResults['detail']>;
type Span = Detail['spans'][number];

/** Text escaped for HTML (element content and quoted attributes). */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll('\'', '&#39;');
}

const h = escapeHtml;

/**
 * The page's policy: nothing may be loaded from anywhere (no network, no other file); only the
 * inline style and script of the page itself run.
 */
const contentSecurityPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

export const reportStyle = `
:root { --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; }
header, main { max-width: 1200px; margin: 0 auto; padding: 16px 24px; }
header { border-bottom: 1px solid var(--line); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.meta { color: var(--muted); margin: 0; }
.cards { display: flex; gap: 12px; margin-top: 12px; flex-wrap: wrap; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 20px; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.error { background: var(--error); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow-x: auto; margin: 4px 0; white-space: pre-wrap; word-break: break-word; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; padding: 0 12px; }
details.case > summary { cursor: pointer; padding: 10px 0; font-weight: 600; }
details.case.fail { border-left: 4px solid var(--fail); } details.case.error { border-left: 4px solid var(--error); }
.reason { white-space: pre-wrap; }
.ok { color: var(--pass); } .bad { color: var(--fail); font-weight: 600; }
.msg { border-left: 3px solid var(--line); padding: 2px 8px; margin: 6px 0; }
.msg .role { font-size: 12px; color: var(--muted); font-weight: 600; }
.msg.user { border-color: #0969da; } .msg.assistant { border-color: #8250df; } .msg.tool { border-color: #6e7781; }
.msg.tool.error { border-color: var(--fail); } .msg.seeded { opacity: .7; }
.msg .thinking { color: var(--muted); font-style: italic; white-space: pre-wrap; }
.call { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.waterfall { font-size: 12px; }
.wf-row { display: grid; grid-template-columns: 260px 1fr; align-items: center; min-height: 20px; }
.wf-label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, Menlo, monospace; }
.wf-track { position: relative; height: 14px; background: var(--bg); }
.wf-bar { position: absolute; top: 2px; height: 10px; border-radius: 2px; background: #8c959f; min-width: 1px; }
.wf-bar.Eval { background: #afb8c1; } .wf-bar.Agent\\.Run, .wf-bar.RunSub { background: #0969da; }
.wf-bar.Thinking { background: #8250df; } .wf-bar.Action { background: #bf8700; } .wf-bar.Tool { background: #1a7f37; }
.wf-bar.error { outline: 2px solid var(--fail); }
.wf-ttfb { position: absolute; top: 0; width: 2px; height: 14px; background: var(--fail); }
.legend { color: var(--muted); font-size: 12px; }
.diff .add { color: var(--pass); } .diff .del { color: var(--fail); } .diff .gap { color: var(--muted); }
.hidden { display: none; }
`;

/** A verdict as a coloured label. */
export function badgeFor(verdict: string): string {
  return `<span class="badge ${h(verdict)}">${h(verdict === 'pass' ? 'pass' : verdict.toUpperCase())}</span>`;
}

const verdictOrder: Record<string, number> = { fail: 0, error: 1, pass: 2 };

/** Cases with failures first, then infrastructure errors, then passes (stable otherwise). */
export function failuresFirst<T extends { verdict: string }>(cases: readonly T[]): T[] {
  return [...cases].sort((a, b) => (verdictOrder[a.verdict] ?? 3) - (verdictOrder[b.verdict] ?? 3));
}

function anchor(id: string): string {
  return `case-${id.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
}

function renderMessage(message: Message, seeded: boolean): string {
  const classes = ['msg', message.role, ...(seeded ? ['seeded'] : [])];
  if (message.role === 'tool' && message.isError === true) classes.push('error');
  const role = message.role === 'tool'
    ? `Observation ${message.toolCallId}${message.isError === true ? ' (error)' : ''}`
    : message.role;
  const calls = message.role === 'assistant'
    ? (message.toolCalls ?? []).map((call) => `<div class="call">→ ${h(call.name)} <span title="call id">[${h(call.id)}]</span> ${h(call.arguments)}</div>`).join('')
    : '';
  const text = message.content === '' ? '' : `<div class="reason">${h(message.content)}</div>`;
  const thinking = message.role === 'assistant' && message.reasoning !== undefined && message.reasoning !== ''
    ? `<div class="thinking" title="reasoning: kept in the session, not sent back">${h(message.reasoning)}</div>`
    : '';
  return `<div class="${classes.join(' ')}"><div class="role">${h(role)}${seeded ? ' — stored before the run' : ''}</div>${thinking}${text}${calls}</div>`;
}

/** Each model request (attempt) and the system message it began with, each one shown once. */
function renderRequests(detail: Detail): string {
  if (detail.modelCalls.length === 0) return '<p class="legend">No model request was recorded.</p>';
  const rows = detail.modelCalls.map((call) =>
    `<tr><td class="num">${call.attempt}</td><td class="num">${call.round ?? '-'}</td><td>${h(call.kind)}</td><td>${h(call.outcome)}</td>` +
    `<td class="num">${call.messages}</td><td>${call.system === undefined ? 'none' : `#${call.system + 1}`}</td></tr>`);
  const prompts = (detail.systemPrompts ?? []).map((text, index) => {
    const sentIn = detail.modelCalls
      .filter((call) => call.system === index)
      .map((call) => call.attempt);
    return `<details><summary class="legend">system message #${index + 1}: ${text.length} characters, sent in request${sentIn.length === 1 ? '' : 's'} ${sentIn.join(', ')}</summary><pre>${h(text)}</pre></details>`;
  });
  return `<table><tr><th>request</th><th>round</th><th>kind</th><th>outcome</th><th>messages</th><th>system message</th></tr>${rows.join('')}</table>${prompts.join('')}`;
}

/** The run's compactions (CMP-5): when, why, how far, and the summary or why there is none. */
function renderCompactions(detail: Detail): string {
  const compactions = detail.compactions ?? [];
  if (compactions.length === 0) return '';
  const rows = compactions.map((entry) =>
    `<tr><td class="num">${entry.at.toFixed(1)}</td><td>${h(entry.reason)}</td>` +
    `<td class="num">${entry.tokensBefore} → ${entry.tokensAfter}</td><td class="num">${entry.prunedResults}</td>` +
    `<td class="num">${entry.summarisedMessages}</td>` +
    `<td class="reason">${entry.summaryError === undefined ? h(entry.summary ?? '') : 'no summary: ' + h(entry.summaryError)}</td></tr>`);
  return '<h3>Compactions</h3><table><tr><th>at ms</th><th>reason</th><th>tokens</th><th>pruned</th>' +
    `<th>replaced</th><th>summary</th></tr>${rows.join('')}</table>`;
}

function depthOf(span: Span, byId: ReadonlyMap<string, Span>): number {
  let depth = 0;
  let current = span.parentId === undefined ? undefined : byId.get(span.parentId);
  while (current !== undefined && depth < 20) {
    depth += 1;
    current = current.parentId === undefined ? undefined : byId.get(current.parentId);
  }
  return depth;
}

/** Spans in tree order: each parent followed by its children, siblings by start time. */
export function treeOrder<T extends { id: string; parentId?: string; startMs: number }>(
  spans: readonly T[],
): T[] {
  const ids = new Set(spans.map((span) => span.id));
  const children = new Map<string | undefined, T[]>();
  for (const span of spans) {
    const known = span.parentId !== undefined && ids.has(span.parentId);
    const parent = known ? span.parentId : undefined;
    const list = children.get(parent) ?? [];
    list.push(span);
    children.set(parent, list);
  }
  const out: T[] = [];
  const visit = (parent: string | undefined): void => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => a.startMs - b.startMs);
    for (const span of list) {
      out.push(span);
      visit(span.id);
    }
  };
  visit(undefined);
  return out;
}

/** The span waterfall: one bar per span on a shared time axis, red marks at each ttfb. */
export function renderWaterfall(spans: readonly Span[]): string {
  if (spans.length === 0) return '<p class="legend">No spans were recorded.</p>';
  const start = Math.min(...spans.map((span) => span.startMs));
  const end = Math.max(...spans.map((span) => span.endMs));
  const total = Math.max(end - start, 0.001);
  const percent = (value: number): string => `${(((value - start) / total) * 100).toFixed(3)}%`;
  const byId = new Map(spans.map((span) => [span.id, span]));
  const rows = treeOrder(spans).map((span) => {
    const depth = depthOf(span, byId);
    const ttfb = span.attributes[spanAttributes.ttfbMs];
    const tool = span.attributes[spanAttributes.genAiToolName];
    const prompt = span.attributes[spanAttributes.promptTokens];
    const completion = span.attributes[spanAttributes.completionTokens];
    const wall = span.attributes[spanAttributes.toolWallMs];
    const facts = [
      `${formatMs(span.durationMs)} ms`,
      ...(typeof ttfb === 'number' ? [`ttfb ${formatMs(ttfb)} ms`] : []),
      ...(typeof prompt === 'number' ? [`${prompt}+${String(completion)} tokens`] : []),
      ...(typeof wall === 'number' ? [`tool wall ${formatMs(wall)} ms`] : []),
      ...(span.status === 'error' ? [`error${span.statusMessage === undefined ? '' : `: ${span.statusMessage}`}`] : []),
    ];
    const label = `${'\u00a0\u00a0'.repeat(depth)}${span.name}${typeof tool === 'string' ? ` ${tool}` : ''}`;
    const width = `${Math.max((span.durationMs / total) * 100, 0.2).toFixed(3)}%`;
    const mark = typeof ttfb === 'number'
      ? `<div class="wf-ttfb" style="left:${percent(span.startMs + ttfb)}" title="ttfb ${h(formatMs(ttfb))} ms"></div>`
      : '';
    return `<div class="wf-row"><div class="wf-label" title="${h(facts.join(', '))}">${h(label)} <span class="legend">${h(facts.join(', '))}</span></div>` +
      `<div class="wf-track"><div class="wf-bar ${h(span.name)}${span.status === 'error' ? ' error' : ''}" style="left:${percent(span.startMs)};width:${width}" title="${h(`${span.name}: ${facts.join(', ')}`)}"></div>${mark}</div></div>`;
  });
  return `<div class="waterfall">${rows.join('')}<p class="legend">${h(formatMs(total))} ms in all; red marks: time to first token (ttfb_ms) of each model call.</p></div>`;
}

function renderDiff(changes: Detail['workspaceDiff'], empty: string): string {
  if (changes.length === 0) return `<p class="legend">${h(empty)}</p>`;
  return changes.map((change) => {
    const lines = change.lines.map((line) => {
      const kind = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'gap' : '';
      return `<span class="${kind}">${h(line)}</span>`;
    }).join('\n');
    return `<div><b>${h(change.path)}</b> <span class="legend">${h(change.change)}</span><pre class="diff">${lines}</pre></div>`;
  }).join('');
}

function renderScores(sample: SampleResults): string {
  if (sample.scores.length === 0) return '<p class="legend">No scorer ran (the harness failed before the run ended).</p>';
  const rows = sample.scores.map((score) => {
    const values = score.expected === undefined && score.actual === undefined
      ? ''
      : `<details><summary class="legend">expected / actual</summary><pre>${h(`expected: ${JSON.stringify(score.expected, null, 2)}\nactual:   ${JSON.stringify(score.actual, null, 2)}`)}</pre></details>`;
    return `<tr><td>${h(score.scorer)}</td><td>${h(score.assertion)}</td><td>${h(score.kind)}</td>` +
      `<td class="${score.pass ? 'ok' : 'bad'}">${score.pass ? 'pass' : 'FAIL'}</td><td><div class="reason">${h(score.reason)}</div>${values}</td></tr>`;
  });
  return `<table><tr><th>scorer</th><th>assertion</th><th>kind</th><th>result</th><th>reason</th></tr>${rows.join('')}</table>`;
}

function renderSamples(entry: CaseResults): string {
  const rows = entry.samples.map((sample) => `<tr><td class="num">${sample.sample + 1}</td><td>${badgeFor(sample.verdict)}</td>` +
    `<td>${h(sample.status)}${sample.errorCode === undefined ? '' : ` (${h(sample.errorCode)})`}</td>` +
    `<td class="num">${formatMs(sample.metrics.runMs)}</td><td class="num">${formatMs(sample.metrics.overheadMs)}</td>` +
    `<td class="num">${sample.metrics.ttfbMs.map((value) => formatMs(value)).join(', ') || '-'}</td>` +
    `<td class="num">${sample.metrics.waveWallMs.map((value) => formatMs(value)).join(', ') || '-'}</td>` +
    `<td class="num">${sample.metrics.modelCalls}/${sample.metrics.toolCalls}</td>` +
    `<td class="num">${sample.metrics.promptTokens}+${sample.metrics.completionTokens}</td></tr>`);
  return `<table><tr><th>run</th><th>verdict</th><th>status</th><th>run ms</th><th>overhead ms</th><th>ttfb ms</th><th>wave wall ms</th><th>calls</th><th>tokens</th></tr>${rows.join('')}</table>`;
}

function renderDetail(detail: Detail): string {
  const transcript = detail.transcript
    .map((message, index) => renderMessage(message, index < detail.seededMessages))
    .join('');
  const approvals = detail.approvals.length === 0
    ? '<p class="legend">The approval handler was not asked.</p>'
    : `<table><tr><th>tool</th><th>arguments</th><th>answer</th></tr>${detail.approvals.map((approval) =>
      `<tr><td>${h(approval.toolName)}</td><td class="call">${h(approval.arguments)}</td><td>${h(approval.decision)}</td></tr>`).join('')}</table>`;
  const audit = detail.audit.length === 0
    ? '<p class="legend">The audit log is empty.</p>'
    : `<table><tr><th>tool</th><th>decision</th><th>reason</th></tr>${detail.audit.map((entry) =>
      `<tr><td>${h(entry.toolName)}</td><td>${h(entry.decision)}</td><td class="reason">${h(entry.reason ?? '')}</td></tr>`).join('')}</table>`;
  return [
    detail.infraError === undefined ? '' : `<h3>Infrastructure error</h3><pre>${h(detail.infraError)}</pre>`,
    `<h3>Transcript</h3>${transcript || '<p class="legend">No messages.</p>'}`,
    `<h3>Requests</h3>${renderRequests(detail)}`,
    renderCompactions(detail),
    `<h3>Span waterfall</h3>${renderWaterfall(detail.spans)}`,
    `<h3>Workspace diff</h3>${renderDiff(detail.workspaceDiff, 'The workspace did not change.')}`,
    detail.outsideDiff.length === 0 ? '' : `<h3>Outside the workspace</h3>${renderDiff(detail.outsideDiff, '')}`,
    `<h3>Approvals</h3>${approvals}`,
    `<h3>Audit log</h3>${audit}`,
  ].join('');
}

function renderCase(entry: CaseResults): string {
  const shown = entry.samples.find((sample) => sample.verdict !== 'pass' && sample.detail !== undefined) ??
    entry.samples.find((sample) => sample.detail !== undefined);
  const open = entry.verdict !== 'pass' ? ' open' : '';
  return `<details class="case ${h(entry.verdict)}" id="${anchor(entry.id)}" data-verdict="${h(entry.verdict)}"${open}>` +
    `<summary>${badgeFor(entry.verdict)} ${h(entry.id)}${entry.canary === undefined ? '' : ` <span class="legend">(canary of the ${h(entry.canary)} scorer)</span>`} — ${h(entry.title)}</summary>` +
    `<p class="reason">${h(entry.reason)}</p>` +
    `<p class="legend">tags: ${h(entry.tags.join(', ') || 'none')}</p>` +
    `<h3>Runs</h3>${renderSamples(entry)}` +
    (shown === undefined
      ? ''
      : `<h3>Scorers (run ${shown.sample + 1})</h3>${renderScores(shown)}${shown.detail === undefined ? '' : renderDetail(shown.detail)}`) +
      '</details>';
}

const filterScript = `
document.getElementById('only-failing').addEventListener('change', function (event) {
  var only = event.target.checked;
  document.querySelectorAll('[data-verdict]').forEach(function (element) {
    element.classList.toggle('hidden', only && element.getAttribute('data-verdict') === 'pass');
  });
});
`;

/**
 * The self-contained report (EVAL-6): one HTML file with inline style and script that loads
 * nothing (its content security policy forbids it). A summary with failures first, the gate, and
 * per case the runs, each scorer's reason, the transcript, a span waterfall with ttfb marks, the
 * workspace diff, approvals and the audit log.
 */
export function renderHtmlReport(results: Results): string {
  const { summary } = results;
  const ordered = failuresFirst(results.cases);
  const rows = ordered.map((entry) => `<tr data-verdict="${h(entry.verdict)}"><td>${badgeFor(entry.verdict)}</td>` +
    `<td><a href="#${anchor(entry.id)}">${h(entry.id)}</a></td><td>${h(entry.title)}</td>` +
    `<td class="num">${entry.stats.modelCalls}/${entry.stats.toolCalls}</td>` +
    `<td class="num">${formatMs(entry.stats.ttfbMs.p50)}/${formatMs(entry.stats.ttfbMs.p95)}</td>` +
    `<td class="num">${formatMs(entry.stats.overheadMs.p50)}/${formatMs(entry.stats.overheadMs.p95)}</td>` +
    `<td class="num">${entry.stats.promptTokens + entry.stats.completionTokens}</td>` +
    (results.mode === 'real' ? `<td class="num">${entry.real?.passAt1.toFixed(2) ?? '-'} / ${entry.real?.passHatK.toFixed(2) ?? '-'}</td>` : '') +
    `<td class="reason">${entry.verdict === 'pass' ? '' : h(entry.reason.split('\n')[0] ?? '')}</td></tr>`);
  const gate = results.gate === undefined
    ? ''
    : `<h2>Regression gate</h2><p>${results.gate.passed ? '<span class="ok">passed</span>' : '<span class="bad">FAILED</span>'} against ${h(results.gate.baseline)} ` +
      `(thresholds: overhead within baseline × ${results.gate.thresholds.ratio} of the calibration measured in the same run + ${results.gate.thresholds.overheadFloorMs} ms, ` +
      `ttfb within baseline × ${results.gate.thresholds.ratio} + ${results.gate.thresholds.ttfbFloorMs} ms; both + the machine's noise).</p>` +
      gateNoiseLines(results.gate).map((line) => `<p class="meta">${h(line)}</p>`).join('') +
      (results.gate.problems.length === 0 ? '' : `<table><tr><th>case</th><th>check</th><th>problem</th></tr>${results.gate.problems.map((problem) =>
        `<tr><td>${h(problem.case)}</td><td>${h(problem.check)}</td><td class="reason">${h(problem.message)}</td></tr>`).join('')}</table>`);
  const git = results.git.sha === null ? 'unknown commit' : `commit ${results.git.sha.slice(0, 12)}${results.git.dirty === true ? ' (with uncommitted changes)' : ''}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>claw-eval ${h(results.mode)} report — ${summary.failed + summary.errors === 0 ? 'all passed' : `${summary.failed} failed, ${summary.errors} errors`}</title>
<style>${reportStyle}</style>
</head>
<body>
<header>
<h1>claw-eval ${h(results.mode)} report</h1>
<p class="meta">${h(results.createdAt)} · ${h(git)} · ${h(`${results.machine.platform}/${results.machine.arch}, ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}, load ${results.machine.loadAverage.join(' ')}`)} · ${results.repeat} run(s) per case · ${h((results.durationMs / 1000).toFixed(1))} s${results.options.model === undefined ? '' : ` · model ${h(results.options.model)}`}</p>
<div class="cards">
<div class="card"><b class="ok">${summary.passed}</b>passed</div>
<div class="card"><b class="${summary.failed > 0 ? 'bad' : ''}">${summary.failed}</b>failed</div>
<div class="card"><b>${summary.errors}</b>infrastructure errors</div>
${results.gate === undefined ? '' : `<div class="card"><b class="${results.gate.passed ? 'ok' : 'bad'}">${results.gate.passed ? 'passed' : 'FAILED'}</b>regression gate</div>`}
${summary.passAt1 === undefined ? '' : `<div class="card"><b>${summary.passAt1.toFixed(2)} / ${summary.passHatK?.toFixed(2)}</b>pass@1 / pass^${results.repeat}</div>`}
</div>
</header>
<main>
<h2>Summary</h2>
<p><label><input type="checkbox" id="only-failing"> show failing cases only</label></p>
<table>
<tr><th>verdict</th><th>case</th><th>what it proves</th><th>calls</th><th>ttfb p50/p95 ms</th><th>overhead p50/p95 ms</th><th>tokens</th>${results.mode === 'real' ? '<th>pass@1 / pass^k</th>' : ''}<th>why it failed</th></tr>
${rows.join('\n')}
</table>
${gate}
<h2>Cases</h2>
${ordered.map(renderCase).join('\n')}
</main>
<script>${filterScript}</script>
</body>
</html>
`;
}
