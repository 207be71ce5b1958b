import type { Results } from '../results.js';
import { formatMs, gateNoiseLines } from './table.js';

// Characters XML 1.0 cannot hold at all (control characters other than tab, newline, return).
// eslint-disable-next-line no-control-regex
const invalidXml = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Text escaped for an XML attribute or element. */
export function xmlEscape(text: string): string {
  return text
    .replace(invalidXml, '\uFFFD')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll('\'', '&apos;');
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/**
 * The run as JUnit XML (one testcase per case, plus one for the regression gate), for CI systems
 * that show test reports: a failing case is a `failure` with every failed assertion, an
 * infrastructure error is an `error`, never a pass.
 */
export function renderJUnit(results: Results): string {
  const testcases = results.cases.map((entry) => {
    const time = entry.samples.reduce((total, sample) => total + sample.wallMs, 0);
    const head = `    <testcase classname="claw-eval.${xmlEscape(results.mode)}" name="${xmlEscape(entry.id)}" time="${seconds(time)}">`;
    const firstLine = entry.reason.split('\n')[0] ?? '';
    const body = entry.verdict === 'fail'
      ? [`      <failure message="${xmlEscape(firstLine)}" type="case_failed">${xmlEscape(entry.reason)}</failure>`]
      : entry.verdict === 'error'
        ? [`      <error message="${xmlEscape(firstLine)}" type="infrastructure_error">${xmlEscape(entry.reason)}</error>`]
        : [];
    const out = `      <system-out>${xmlEscape(
      `${entry.title}\ncalls ${entry.stats.modelCalls}/${entry.stats.toolCalls}, tokens ${entry.stats.promptTokens}+${entry.stats.completionTokens}, ` +
      `overhead p50/p95 ${formatMs(entry.stats.overheadMs.p50)}/${formatMs(entry.stats.overheadMs.p95)} ms, ttfb p50/p95 ${formatMs(entry.stats.ttfbMs.p50)}/${formatMs(entry.stats.ttfbMs.p95)} ms`,
    )}</system-out>`;
    return [head, ...body, out, '    </testcase>'].join('\n');
  });
  const gate = results.gate;
  if (gate !== undefined) {
    const lines = gate.problems.map((problem) => `${problem.case}: ${problem.message}`).join('\n');
    const noise = gateNoiseLines(gate);
    testcases.push([
      '    <testcase classname="claw-eval.gate" name="regression gate" time="0.000">',
      ...(gate.passed
        ? []
        : [`      <failure message="${xmlEscape(`${gate.problems.length} problem(s) against ${gate.baseline}`)}" type="gate_failed">${xmlEscape(lines)}</failure>`]),
      ...(noise.length === 0 ? [] : [`      <system-out>${xmlEscape(noise.join('\n'))}</system-out>`]),
      '    </testcase>',
    ].join('\n'));
  }
  const failures = results.summary.failed + (gate !== undefined && !gate.passed ? 1 : 0);
  const tests = results.cases.length + (gate === undefined ? 0 : 1);
  const suite = `claw-eval (${results.mode})`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="claw-eval" tests="${tests}" failures="${failures}" errors="${results.summary.errors}" time="${seconds(results.durationMs)}">`,
    `  <testsuite name="${xmlEscape(suite)}" tests="${tests}" failures="${failures}" errors="${results.summary.errors}" skipped="0" time="${seconds(results.durationMs)}" timestamp="${xmlEscape(results.createdAt)}">`,
    '    <properties>',
    `      <property name="git.sha" value="${xmlEscape(results.git.sha ?? 'unknown')}"/>`,
    `      <property name="repeat" value="${results.repeat}"/>`,
    `      <property name="node" value="${xmlEscape(results.machine.node)}"/>`,
    '    </properties>',
    ...testcases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
