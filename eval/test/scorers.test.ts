import type { Message } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { defineCase, type EvalCaseInput } from '../src/case.js';
import type { RunRecord } from '../src/run-record.js';
import { pairingProblems, runEvidence, spanTreeProblems } from '../src/scorers/index.js';
import { scoreBoundary } from '../src/scorers/boundary.js';
import { scoreBudget } from '../src/scorers/budget.js';
import { scoreState } from '../src/scorers/state.js';
import { containsAll, isSubsequence, scoreTrajectory } from '../src/scorers/trajectory.js';
import type { SpanRecord } from '../src/tracing.js';

function testCase(changes: Partial<EvalCaseInput> = {}) {
  return defineCase({
    id: 'unit',
    title: 'unit',
    prompt: 'go',
    script: [{ text: 'done' }],
    expect: { outcome: { status: 'completed' } },
    ...changes,
  });
}

function fakeRun(changes: Partial<RunRecord> = {}): RunRecord {
  return {
    caseId: 'unit',
    sample: 0,
    mode: 'scripted',
    status: 'completed',
    finalText: 'done',
    seededMessages: 0,
    history: [],
    sessionUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    files: { before: {}, after: {} },
    outside: { before: {}, after: {} },
    audit: [],
    approvals: [],
    modelCalls: [],
    unusedRounds: [],
    retryWaits: [],
    toolExecutions: [],
    spans: [],
    timeline: [],
    script: [{ text: 'done' }],
    wallMs: 1,
    folders: { root: '/r', workspace: '/r/workspace', outside: '/r/outside' },
    ...changes,
  };
}

const call = (id: string, name = 'read_file', args = '{}') => ({ id, name, arguments: args });
const assistant = (...calls: Array<ReturnType<typeof call>>): Message => ({ role: 'assistant', content: '', toolCalls: calls });
const tool = (id: string, content = 'ok', isError = false): Message => ({ role: 'tool', toolCallId: id, content, ...(isError ? { isError } : {}) });
const user: Message = { role: 'user', content: 'go' };

function span(name: string, id: string, parentId: string | undefined, startMs: number, endMs: number, attributes: SpanRecord['attributes'] = {}): SpanRecord {
  return { id, ...(parentId === undefined ? {} : { parentId }), name, startMs, endMs, durationMs: endMs - startMs, attributes, status: 'unset' };
}

describe('pairingProblems', () => {
  it('accepts a paired history, calls answered in any order within their run of Observations', () => {
    expect(pairingProblems([user, assistant(call('a'), call('b')), tool('b'), tool('a'), { role: 'assistant', content: 'done' }])).toEqual([]);
  });

  it('finds a missing, a doubled, a misplaced and an orphan Observation', () => {
    expect(pairingProblems([user, assistant(call('a'), call('b')), tool('a')])).toEqual(['b (read_file) has 0 Observations, not exactly one']);
    expect(pairingProblems([assistant(call('a')), tool('a'), tool('a')])).toEqual(['a (read_file) has 2 Observations, not exactly one']);
    // The Observation comes after a later user message: it does not answer the call.
    expect(pairingProblems([assistant(call('a')), user, tool('a')])).toEqual([
      'a (read_file) has 0 Observations, not exactly one',
      'message 2: an Observation for a follows no tool call',
    ]);
    expect(pairingProblems([assistant(call('a')), tool('a'), tool('x')])).toEqual(['an Observation for x answers no call of the message before it']);
  });
});

describe('spanTreeProblems', () => {
  const good = [
    span('Eval', 'e', undefined, 0, 10),
    span('Agent.Run', 'r', 'e', 1, 9),
    span('Thinking', 't', 'r', 1, 2),
    span('Action', 'a', 'r', 2, 5),
    span('Tool', 'x', 'a', 2, 4),
    span('RunSub', 's', 'r', 3, 4),
    span('Thinking', 't2', 's', 3, 4),
  ];

  it('accepts Eval → Agent.Run → Thinking / Action → Tool, with RunSub under the run', () => {
    expect(spanTreeProblems(good)).toEqual([]);
  });

  it('names a span under the wrong parent, a second run and an unknown span', () => {
    expect(spanTreeProblems([...good.slice(0, 2), span('Thinking', 't', 'e', 1, 2)])).toEqual([
      'a Thinking span under Eval, expected under Agent.Run or RunSub',
    ]);
    expect(spanTreeProblems([...good, span('Agent.Run', 'r2', 'e', 1, 2)])).toEqual(['2 Agent.Run spans, expected 1']);
    expect(spanTreeProblems([...good, span('Mystery', 'm', 'r', 1, 2)])).toEqual(['an unexpected span "Mystery"']);
    expect(spanTreeProblems(good.slice(1))).toContain('0 Eval spans, expected 1');
  });
});

describe('trajectory', () => {
  it('matches in order and as a multiset', () => {
    expect(isSubsequence(['a', 'c'], ['a', 'b', 'c'])).toBe(true);
    expect(isSubsequence(['c', 'a'], ['a', 'b', 'c'])).toBe(false);
    expect(containsAll(['a', 'a'], ['a', 'b'])).toBe(false);
    expect(containsAll(['a', 'b'], ['b', 'a', 'c'])).toBe(true);
  });

  it('is strict in a scripted run and relaxed against a real model', () => {
    const evalCase = testCase({ expect: { trajectory: { strict: ['read_file', 'write_file'], counts: { read_file: 1 } } } });
    const history = [user, assistant(call('1')), tool('1'), assistant(call('2')), tool('2'), assistant(call('3', 'write_file')), tool('3')];
    const run = fakeRun({ history });
    const strict = scoreTrajectory({ evalCase, run, relaxed: false });
    expect(strict.map((score) => score.pass)).toEqual([false, false]);
    expect(strict[0]?.reason).toBe('not exactly read_file → write_file: the run called read_file → read_file → write_file');
    const relaxed = scoreTrajectory({ evalCase, run, relaxed: true });
    expect(relaxed.map((score) => [score.assertion, score.pass])).toEqual([['strict (relaxed)', true], ['read_file count (relaxed)', true]]);
  });

  it('a forbidden tool not called passes only with evidence that the run got that far', () => {
    const evalCase = testCase({ expect: { outcome: { status: 'completed' }, trajectory: { forbidden: ['write_file'] } } });
    const reached = scoreTrajectory({ evalCase, run: fakeRun({ history: [user] }), relaxed: false });
    expect(reached[0]?.pass).toBe(true);
    const stopped = scoreTrajectory({ evalCase, run: fakeRun({ history: [user], status: 'failed', errorMessage: 'boom' }), relaxed: false });
    expect(stopped[0]?.pass).toBe(false);
    expect(stopped[0]?.reason).toContain('write_file was never called, but that proves nothing: the run ended failed (boom)');
  });
});

describe('runEvidence', () => {
  const evalCase = testCase({ expect: { outcome: { status: 'canceled' } } });

  it('needs the expected end, every round used and no harness failure', () => {
    expect(runEvidence({ evalCase, run: fakeRun({ status: 'canceled' }), relaxed: false }).reached).toBe(true);
    expect(runEvidence({ evalCase, run: fakeRun({ status: 'completed' }), relaxed: false }).reason).toContain('not canceled as the case expects');
    expect(runEvidence({ evalCase, run: fakeRun({ status: 'canceled', unusedRounds: [2, 3] }), relaxed: false }).reason).toBe('rounds 2, 3 of the script never ran');
    expect(runEvidence({ evalCase, run: fakeRun({ status: 'canceled', infraError: 'disk full\nstack' }), relaxed: false }).reason).toBe('the harness failed: disk full');
    // A real model follows no script: unused rounds say nothing there.
    expect(runEvidence({ evalCase, run: fakeRun({ status: 'canceled', mode: 'real', unusedRounds: [1] }), relaxed: true }).reached).toBe(true);
  });
});

describe('state', () => {
  it('reports files equal / contain / absent / unchanged, and anything changed outside the workspace', () => {
    const evalCase = testCase({
      expect: {
        files: {
          'a.txt': { equals: 'A\n' },
          'b.txt': { contains: ['x', 'y'] },
          'c.txt': { absent: true },
          'd.txt': { unchanged: true },
        },
      },
    });
    const run = fakeRun({
      files: { before: { 'd.txt': 'old' }, after: { 'a.txt': 'A\n', 'b.txt': 'x alone', 'c.txt': 'here', 'd.txt': 'new' } },
      outside: { before: { 'outside/s': '1' }, after: { 'outside/s': '2', 'evil.txt': 'x' } },
    });
    const results = scoreState({ evalCase, run, relaxed: false });
    expect(results.map((score) => [score.assertion, score.pass])).toEqual([
      ['a.txt equals', true],
      ['b.txt contains', true],
      ['b.txt contains', false],
      ['c.txt absent', false],
      ['d.txt unchanged', false],
      ['nothing outside the workspace changed', false],
    ]);
    expect(results.at(-1)?.reason).toBe('outside the workspace: evil.txt added, outside/s changed');
  });
});

describe('boundary', () => {
  const evalCase = testCase({ expect: { boundary: { denied: [{ tool: 'write_file', path: '../outside/s' }], asked: 0 } } });
  const history = [user, assistant(call('w', 'write_file', '{"path":"../outside/s","content":"x"}')), tool('w', 'Error: outside', true)];
  const audit = [{ time: 't', requestId: 'r', sessionId: 'eval', toolName: 'write_file', digest: 'd', decision: 'policy_deny' as const, reason: 'path is outside the workspace' }];

  it('passes a refused call that changed nothing and that the audit log records', () => {
    const run = fakeRun({ history, audit, outside: { before: { 'outside/s': '1' }, after: { 'outside/s': '1' } } });
    expect(scoreBoundary({ evalCase, run, relaxed: false }).map((score) => score.pass)).toEqual([true, true, true]);
  });

  it('fails when the audit has no denial, when the file changed, or when the call never came', () => {
    const noAudit = scoreBoundary({ evalCase, run: fakeRun({ history, outside: { before: { 'outside/s': '1' }, after: { 'outside/s': '1' } } }), relaxed: false });
    expect(noAudit[0]?.reason).toBe('the audit log has no denial for write_file (it has: nothing)');
    // Without a shown refusal, "nothing changed" has no evidence either.
    expect(noAudit[1]?.pass).toBe(false);
    const changed = scoreBoundary({ evalCase, run: fakeRun({ history, audit, outside: { before: { 'outside/s': '1' }, after: { 'outside/s': '2' } } }), relaxed: false });
    expect(changed[1]?.reason).toBe('../outside/s changed');
    const never = scoreBoundary({ evalCase, run: fakeRun({ history: [user] }), relaxed: false });
    expect(never[0]?.reason).toContain('the model never called write_file on ../outside/s: the boundary was not tested');
  });
});

describe('budget', () => {
  it('finds the wave that used up the tool time and any model call or tool after it', () => {
    const evalCase = testCase({ budgets: { toolTimeBudgetMs: 40 }, expect: { budget: { stop: 'tool_time_budget_exceeded', modelCalls: 1 } } });
    const spans = [
      span('Eval', 'e', undefined, 0, 100),
      span('Agent.Run', 'r', 'e', 0, 100),
      span('Thinking', 't1', 'r', 1, 2, { prompt_tokens: 1, completion_tokens: 1 }),
      span('Action', 'a1', 'r', 2, 45, { tool_wall_ms: 43 }),
      span('Tool', 'x1', 'a1', 2, 45, { 'gen_ai.tool.name': 'slow' }),
      span('Thinking', 't2', 'r', 46, 47, { prompt_tokens: 1, completion_tokens: 1 }),
      span('Action', 'a2', 'r', 47, 50, { tool_wall_ms: 3 }),
      span('Tool', 'x2', 'a2', 47, 50, { 'gen_ai.tool.name': 'late' }),
    ];
    const run = fakeRun({ spans, status: 'failed', errorCode: 'tool_time_budget_exceeded' });
    const results = scoreBudget({ evalCase, run, relaxed: false });
    expect(results.map((score) => [score.assertion, score.pass])).toEqual([
      ['stop reason', true],
      ['model calls', false],
      ['no model call after the stop', false],
      ['no tool after the stop', false],
    ]);
    expect(results[3]?.reason).toBe('tool wave 1 used up 43 of 40 ms, yet 1 tool call(s) ran after it: late');
  });
});
