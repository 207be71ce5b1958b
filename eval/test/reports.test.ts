import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { machineInfo } from '../src/environment.js';
import { checkGate, baselineFrom } from '../src/gate.js';
import { compareResults, renderComparison, renderComparisonHtml } from '../src/report/compare.js';
import { escapeHtml, failuresFirst, renderHtmlReport, treeOrder } from '../src/report/html.js';
import { renderJUnit, xmlEscape } from '../src/report/junit.js';
import { renderSummary } from '../src/report/table.js';
import { buildResults, passRates, resultsJsonSchema, resultsSchema, type Results } from '../src/results.js';
import { runSuite } from '../src/suite.js';
import { evalRoot, externalReferences, suiteCase, variant } from './helpers.js';

const context = { version: '0.0.0-test', git: { sha: 'abc123def4567890', dirty: true }, machine: machineInfo(), filters: [], tags: [] };
let results: Results;

beforeAll(async () => {
  // A passing case, a failing one (wrong content) and a case with a subagent, so every part shows;
  // calibrated, as a gated run is.
  const failing = await variant('task-completed', {
    id: 'task-completed-wrong',
    title: 'Fails: expects other content <b>&</b> "quotes"',
    expect: { files: { 'hello.txt': { equals: 'bye\n' } } },
  });
  const suite = await runSuite([await suiteCase('task-completed'), failing, await suiteCase('subagent-tokens')], { repeat: 2, calibration: {} });
  results = buildResults(suite, context);
});

describe('results.json', () => {
  it('the committed JSON Schema is the one the code writes against', async () => {
    const committed = JSON.parse(await readFile(path.join(evalRoot, 'schema', 'results.schema.json'), 'utf8')) as unknown;
    expect(committed).toEqual(resultsJsonSchema());
  });

  it('validates against the committed JSON Schema, and a broken file does not', async () => {
    const schema = JSON.parse(await readFile(path.join(evalRoot, 'schema', 'results.schema.json'), 'utf8')) as object;
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
    const document = JSON.parse(JSON.stringify(results)) as Results;
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(document.schemaVersion).toBe(2);
    expect(document.calibration).toMatchObject({ name: 'bare-loop', runs: 6, failures: [] });
    expect(document.git).toEqual({ sha: 'abc123def4567890', dirty: true });
    expect(document.summary).toMatchObject({ cases: 3, passed: 2, failed: 1, errors: 0, runs: 6 });
    const first = document.cases[0]!;
    expect(first.stats.calibration?.overheadMs).toHaveLength(2);
    expect(first.samples).toHaveLength(2);
    expect(first.samples[0]?.trajectory).toEqual(['write_file']);
    // Details are kept for the first run and for runs that did not pass.
    expect(first.samples[0]?.detail?.spans.map((span) => span.name)).toContain('Agent.Run');
    expect(first.samples[1]?.detail).toBeUndefined();
    expect(document.cases[1]?.samples.every((sample) => sample.detail !== undefined)).toBe(true);
    expect(first.samples[0]?.detail?.workspaceDiff).toEqual([{ path: 'hello.txt', change: 'added', lines: ['+hello, claw'] }]);

    const broken = structuredClone(document) as unknown as { cases: Array<{ verdict: string }> };
    broken.cases[0]!.verdict = 'maybe';
    expect(validate(broken)).toBe(false);
    expect(resultsSchema.safeParse({ ...document, schemaVersion: 1 }).success).toBe(false);
  });

  it('keeps each distinct system message once, and which request began with which', () => {
    const subagent = results.cases.find((entry) => entry.id === 'subagent-tokens')!;
    const detail = subagent.samples[0]!.detail!;
    expect(detail.systemPrompts).toHaveLength(2);
    expect(detail.systemPrompts?.[0]).toMatch(/^You are claw, a coding agent\./);
    expect(detail.systemPrompts?.[1]).toMatch(/^You are a helper of claw/);
    // The run's first request, the subagent's two, the run's second.
    expect(detail.modelCalls.map((call) => call.system)).toEqual([0, 1, 1, 0]);
    const html = renderHtmlReport(results);
    const section = html.slice(html.indexOf('id="case-subagent-tokens"'));
    expect(section).toContain('<h3>Requests</h3>');
    expect(section).toMatch(/system message #2: \d+ characters, sent in requests 2, 3/);
  });

  it('computes pass@1 and pass^k as tau-bench does', () => {
    expect(passRates(4, 4)).toEqual({ passAt1: 1, passHatK: 1 });
    expect(passRates(3, 4)).toEqual({ passAt1: 0.75, passHatK: 0 });
    expect(passRates(3, 4, 2)).toEqual({ passAt1: 0.75, passHatK: 0.5 });
    expect(passRates(0, 0)).toEqual({ passAt1: 0, passHatK: 0 });
  });
});

describe('report.html', () => {
  it('is self-contained: no URL to load, and a policy that forbids loading anything', () => {
    const html = renderHtmlReport(results);
    expect(externalReferences(html)).toEqual([]);
    expect(html).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'none\';');
    expect(externalReferences('<img src="https://x/y.png"><link href="//cdn"> @import url(http://x)')).toHaveLength(7);
  });

  it('lists failures first, with their reasons, transcript, waterfall with ttfb marks and workspace diff', () => {
    const html = renderHtmlReport(results);
    const summary = html.slice(html.indexOf('<h2>Summary</h2>'), html.indexOf('<h2>Cases</h2>'));
    expect(summary.indexOf('task-completed-wrong')).toBeLessThan(summary.indexOf('>task-completed<'));
    expect(summary).toContain('hello.txt equals: hello.txt has other content');
    // Text from cases is escaped, never markup.
    expect(html).toContain('Fails: expects other content &lt;b&gt;&amp;&lt;/b&gt; &quot;quotes&quot;');
    expect(html).not.toContain('<b>&</b>');
    const failing = html.slice(html.indexOf('id="case-task-completed-wrong"'));
    expect(failing).toMatch(/^id="case-task-completed-wrong" data-verdict="fail" open>/);
    expect(failing).toContain('<h3>Transcript</h3>');
    expect(failing).toContain('Create hello.txt that says');
    expect(failing).toContain('class="wf-ttfb"');
    expect(failing).toContain('<span class="add">+hello, claw</span>');
    expect(html).toContain('RunSub');
  });

  it('orders spans as a tree and escapes text', () => {
    expect(treeOrder([
      { id: 'b', parentId: 'r', startMs: 5 },
      { id: 'r', startMs: 0 },
      { id: 'a', parentId: 'r', startMs: 1 },
      { id: 'c', parentId: 'a', startMs: 6 },
    ]).map((span) => span.id)).toEqual(['r', 'a', 'c', 'b']);
    expect(escapeHtml('<a href="x">\'&')).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    expect(failuresFirst([{ verdict: 'pass' }, { verdict: 'error' }, { verdict: 'fail' }]).map((entry) => entry.verdict)).toEqual(['fail', 'error', 'pass']);
  });
});

describe('JUnit XML and the terminal table', () => {
  it('has one testcase per case and one for the gate, failures as failures', () => {
    const baseline = baselineFrom({ ...results, cases: results.cases.filter((entry) => entry.verdict === 'pass') });
    const gated = { ...results, gate: checkGate(results, baseline, { baselineFile: 'eval/baselines/x.json', selected: true }) };
    const xml = renderJUnit(gated);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="claw-eval" tests="4" failures="2" errors="0"')).toBe(true);
    expect(xml.match(/<testcase /g)).toHaveLength(4);
    expect(xml).toContain('<testcase classname="claw-eval.scripted" name="task-completed-wrong"');
    expect(xml).toContain('<failure message="2 of 2 runs failed; run 1: state/hello.txt equals: hello.txt has other content" type="case_failed">');
    expect(xml.match(/<\/testcase>/g)).toHaveLength(4);
    expect(xml).toContain('<testcase classname="claw-eval.gate" name="regression gate" time="0.000">');
    expect(xml).toContain('task-completed-wrong: not in the baseline');
    expect(xml).toContain('Fails: expects other content &lt;b&gt;&amp;&lt;/b&gt; &quot;quotes&quot;');
    expect(xmlEscape('a\u0001b<')).toBe('a\uFFFDb&lt;');
  });

  it('prints every case with calls, ttfb and overhead p50/p95, tokens and the change against the baseline', () => {
    const baseline = baselineFrom({ ...results, cases: results.cases.filter((entry) => entry.verdict === 'pass') });
    const edited = structuredClone(baseline);
    edited.cases['task-completed']!.modelCalls = 5;
    const text = renderSummary(results, { baseline: edited, files: ['out/results.json'] });
    const [header] = text.split('\n');
    expect(header).toMatch(/^case\s+verdict\s+calls\s+ttfb p50\/p95\s+overhead p50\/p95\s+tokens\s+Δ baseline$/);
    expect(text).toMatch(/\ntask-completed\s+pass\s+2\/1\s+[\d.]+\/[\d.]+\s+[\d.]+\/[\d.]+\s+500\s+calls 5\/1→2\/1, ovh p50 [\d.]+→[\d.]+× cal/);
    expect(text).toMatch(/\ntask-completed-wrong\s+FAIL\s+.*\s+new\n/);
    expect(text).toContain('3 case(s), 2 run(s) each: 2 passed, 1 failed, 0 infrastructure error(s)');
    expect(text).toContain('FAIL task-completed-wrong: Fails: expects other content');
    expect(text).toContain('wrote out/results.json');
  });
});

describe('compare', () => {
  it('shows verdict flips, trajectory changes and metric deltas, in the terminal and as HTML', async () => {
    const changed = await variant('correct-tools', {
      script: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'config.json', content: 'x' } }], usage: { promptTokens: 100, completionTokens: 5 } },
        { text: 'done', usage: { promptTokens: 120, completionTokens: 2 } },
      ],
    });
    const a = buildResults(await runSuite([await suiteCase('correct-tools'), await suiteCase('task-completed')]), context);
    const b = buildResults(await runSuite([changed, await suiteCase('token-budget')]), context);
    const comparison = compareResults(a, b, { a: 'a.json', b: 'b.json' });
    expect(comparison.flips).toBe(3);
    const correct = comparison.cases.find((entry) => entry.id === 'correct-tools')!;
    expect(correct).toMatchObject({
      verdictA: 'pass',
      verdictB: 'fail',
      flipped: true,
      trajectoryA: ['read_file', 'edit_file'],
      trajectoryB: ['write_file'],
      trajectoryChanged: true,
      modelCalls: { a: 3, b: 2, change: -1 },
      tokens: { a: 747, b: 227, change: -520 },
    });
    expect(comparison.cases.find((entry) => entry.id === 'task-completed')).toMatchObject({ verdictA: 'pass', verdictB: 'absent', flipped: true });
    const text = renderComparison(comparison);
    expect(text).toMatch(/\ncorrect-tools\s+pass→fail !\s+3→2\s+2→1\s+747→227/);
    expect(text).toContain('flip correct-tools: pass → fail');
    expect(text).toContain('trajectory correct-tools:\n  A: read_file → edit_file\n  B: write_file');
    const html = renderComparisonHtml(comparison);
    expect(externalReferences(html)).toEqual([]);
    expect(html).toContain('<span class="del">- A: read_file → edit_file</span>');
  });
});
