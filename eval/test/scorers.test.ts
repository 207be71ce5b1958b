import type { Message } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { defineCase, type EvalCaseInput } from '../src/case.js';
import type { ModelCallRecord } from '../src/model.js';
import type { RunRecord } from '../src/run-record.js';
import { conversations, pairingProblems, reportedThinking, runEvidence, spanTreeProblems, systemOf } from '../src/scorers/index.js';
import { scoreBoundary } from '../src/scorers/boundary.js';
import { scoreBudget } from '../src/scorers/budget.js';
import { orderIn, scoreRequests } from '../src/scorers/requests.js';
import { scoreReports } from '../src/scorers/reports.js';
import { scoreState } from '../src/scorers/state.js';
import { containsAll, isSubsequence, scoreTrajectory } from '../src/scorers/trajectory.js';
import type { SpanRecord } from '../src/tracing.js';
import { fakeRun } from './helpers.js';

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

/** A recorded request: `system` first (when given), then `messages`; its wire form as sent. */
function request(
  attempt: number,
  system: string | undefined,
  messages: Message[],
  changes: Partial<ModelCallRecord> = {},
): ModelCallRecord {
  const all: Message[] = system === undefined ? messages : [{ role: 'system', content: system }, ...messages];
  return {
    attempt,
    round: attempt,
    kind: 'reply',
    outcome: 'completed',
    startedAt: attempt,
    endedAt: attempt + 0.5,
    scriptedMs: 0,
    messages: all,
    wire: all.map((message) => ({ role: message.role, content: message.content })),
    tools: [],
    ...changes,
  };
}

describe('requests', () => {
  const prompt = 'You are claw.\n\n# Environment\n<environment>\nWorkspace root: /r/workspace\n</environment>';
  const subagent = 'You are a helper.\n\n# Environment\n<environment>\nWorkspace root: /r/workspace\n</environment>';
  const spawn = call('call_1_1', 'spawn_subagent', '{"task":"look"}');
  const task: Message = { role: 'user', content: 'look' };
  // The run's three requests with a subagent's two between them, as they arrive.
  const calls = [
    request(1, prompt, [user]),
    request(2, subagent, [task]),
    request(3, subagent, [task, assistant(call('call_3_1')), tool('call_3_1')]),
    request(4, prompt, [user, assistant(spawn), tool('call_1_1', 'found')]),
  ];
  const requestsCase = (requests: NonNullable<EvalCaseInput['expect']['requests']>) =>
    testCase({ script: calls.map(() => ({ text: 'x' })), expect: { outcome: { status: 'completed' }, requests } });
  const score = (requests: NonNullable<EvalCaseInput['expect']['requests']>, modelCalls = calls, changes: Partial<RunRecord> = {}) =>
    scoreRequests({ evalCase: requestsCase(requests), run: fakeRun({ modelCalls, script: modelCalls.map(() => ({ text: 'x' })), ...changes }), relaxed: false });

  it('groups requests into the run\'s conversation and each subagent\'s', () => {
    expect(conversations(calls).map((group) => group.map((entry) => entry.attempt))).toEqual([[1, 4], [2, 3]]);
    // A retried attempt repeats its request: the same conversation.
    expect(conversations([calls[0]!, request(2, prompt, [user])]).map((group) => group.length)).toEqual([2]);
    expect(systemOf(calls[1]!)).toBe(subagent);
    expect(systemOf(request(1, undefined, [user]))).toBeUndefined();
  });

  it('passes a stable system message per conversation, texts contained, in order, others left out', () => {
    const results = score({
      system: {
        contains: ['You are claw.', 'Workspace root: {{workspace}}\n'],
        order: ['You are claw.', '<environment>', 'Workspace root: ', '</environment>'],
        absent: ['You are a helper'],
        stable: true,
      },
    });
    expect(results.map((entry) => [entry.assertion, entry.kind, entry.pass])).toEqual([
      ['system message contains', 'positive', true],
      ['system message order', 'positive', true],
      ['system message leaves out', 'negative', true],
      ['system message stable', 'positive', true],
    ]);
    expect(results[3]?.reason).toBe(`one byte-identical system message in every request: the run: 2 requests, ${prompt.length} characters; subagent 1: 2 requests, ${subagent.length} characters`);
  });

  it('fails a system message that changes between the requests of a conversation, and says where', () => {
    const drifted = [calls[0]!, calls[1]!, calls[2]!, request(4, `${prompt}\nDate: 2026-01-02`, calls[3]!.messages.slice(1))];
    const [stable] = score({ system: { stable: true } }, drifted);
    expect(stable?.pass).toBe(false);
    expect(stable?.reason).toBe('the run: the system message of request 4 differs from request 1\'s at character 86: "space\\n</environment>" became "space\\n</environment>\\nDate: 2026-01-02"');
    // A subagent's own changing message is caught too; one with none at all as well.
    const subagentDrift = [calls[0]!, calls[1]!, request(3, `${subagent}!`, calls[2]!.messages.slice(1)), calls[3]!];
    expect(score({ system: { stable: true } }, subagentDrift)[0]?.reason).toMatch(/^subagent 1: the system message of request 3 differs from request 2's/);
    expect(score({ system: { stable: true } }, [request(1, undefined, [user]), request(2, undefined, [user, assistant(call('a')), tool('a')])])[0]?.reason)
      .toBe('the run: request 1 has no system message');
    // One request proves nothing about stability.
    expect(score({ system: { stable: true } }, [calls[0]!])[0]?.reason).toBe('the run sent 1 request: nothing to compare it with');
  });

  it('fails missing texts, texts out of order, and a text that must be left out', () => {
    const [contains, order, absent] = score({
      system: { contains: ['You are claw.', 'Bash: '], order: ['</environment>', 'You are claw.'], absent: ['Workspace root'] },
    });
    expect(contains?.reason).toBe('request 1 lacks "Bash: "; request 4 lacks "Bash: "');
    expect(order?.reason).toBe('request 1: "You are claw." does not come after "</environment>"; request 4: "You are claw." does not come after "</environment>"');
    expect(absent?.pass).toBe(false);
    expect(absent?.reason).toBe('request 1 carries "Workspace root"; request 4 carries "Workspace root"');
    expect(orderIn('a b c', ['a', 'x']).problem).toBe('"x" is not in it');
    expect(orderIn('a b c', ['a', 'c']).positions).toEqual([0, 4]);
  });

  it('a text left out proves nothing when no request had a system message, or the run stopped early', () => {
    const bare = [request(1, undefined, [user])];
    const [absent] = score({ system: { absent: ['Bash: '] } }, bare);
    expect(absent?.reason).toBe('no request of the run carries "Bash: " in its system message, but that proves nothing: no request of the run carried a system message');
    const [stopped] = score({ system: { absent: ['Bash: '] } }, calls, { status: 'failed', errorMessage: 'boom' });
    expect(stopped?.pass).toBe(false);
  });

  it('passes reasoning that stays out of later requests; fails a field or its text sent back', () => {
    const script = [{ reasoning: ['Think', 'ing hard.'], text: 'a' }, { text: 'b' }];
    const first = request(1, prompt, [user]);
    const clean = request(2, prompt, [user, { role: 'assistant', content: 'a', reasoning: 'Thinking hard.' }, { role: 'user', content: 'more' }]);
    // The in-process wire form: what the OpenAI provider would send (no reasoning).
    clean.wire = [{ role: 'system', content: prompt }, { role: 'user', content: 'go' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'more' }];
    const run = (second: ModelCallRecord) => fakeRun({ script, modelCalls: [first, second] });
    const evalCase = testCase({ script, expect: { requests: { reasoningNotSent: true } } });
    const [passed] = scoreRequests({ evalCase, run: run(clean), relaxed: false });
    expect(passed?.pass).toBe(true);
    expect(passed?.reason).toBe('1 request after 1 reply with reasoning carried no reasoning field and none of its text');
    const field = { ...clean, wire: clean.wire.map((message, index) => (index === 2 ? { ...(message as object), reasoning_content: 'x' } : message)) };
    expect(scoreRequests({ evalCase, run: run(field), relaxed: false })[0]?.reason).toBe('request 2: message 2 has "reasoning_content"');
    const echoed = { ...clean, wire: clean.wire.map((message, index) => (index === 2 ? { role: 'assistant', content: 'Thinking hard.a' } : message)) };
    expect(scoreRequests({ evalCase, run: run(echoed), relaxed: false })[0]?.reason).toBe('request 2 sends the reasoning of reply 1 back ("Thinking hard.")');
    // Nothing to check: no reasoning, or no request after it.
    expect(scoreRequests({ evalCase, run: fakeRun({ script: [{ text: 'a' }], modelCalls: [first] }), relaxed: false })[0]?.reason)
      .toBe('no reply of the run had reasoning: there was nothing that could be sent back');
    expect(scoreRequests({ evalCase, run: fakeRun({ script, modelCalls: [first] }), relaxed: false })[0]?.reason)
      .toBe('no request followed the reply with reasoning (request 1): nothing was checked');
  });

  it('checks nothing against a real model, whose requests are not recorded', () => {
    expect(score({ system: { stable: true } }, calls, { mode: 'real' })).toEqual([]);
  });
});

describe('thinking (state scorer)', () => {
  const script = [
    { reasoning: ['Read ', 'it first.'], toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }] },
    { reasoning: ['It says hi.'], text: 'It says hi there.' },
  ];
  const history: Message[] = [
    user,
    { role: 'assistant', content: '', toolCalls: [call('call_1_1')], reasoning: 'Read it first.' },
    tool('call_1_1', 'hi'),
    { role: 'assistant', content: 'It says hi there.', reasoning: 'It says hi.' },
  ];
  const timeline = ['Read ', 'it first.', 'It says hi.'].map((detail, at) => ({ at, type: 'thinking_delta' as const, detail }));
  const modelCalls = [request(1, 'sys', [user]), request(2, 'sys', history.slice(0, 3))];
  const run = (changes: Partial<RunRecord> = {}) =>
    fakeRun({ script, history, timeline, modelCalls, finalText: 'It says hi there.', ...changes });
  const thinkingCase = testCase({ script, expect: { thinking: { equals: 'Read it first.It says hi.', fromScript: true, stored: true, notInAnswer: true } } });
  const thinkingOf = (record: RunRecord) =>
    scoreState({ evalCase: thinkingCase, run: record, relaxed: false }).filter((entry) => entry.assertion.startsWith('thinking'));

  it('passes reported, scripted, stored reasoning that stays out of the answer', () => {
    expect(reportedThinking(run())).toBe('Read it first.It says hi.');
    expect(thinkingOf(run()).map((entry) => [entry.assertion, entry.kind, entry.pass])).toEqual([
      ['thinking', 'positive', true],
      ['thinking from the script', 'positive', true],
      ['thinking stored', 'positive', true],
      ['thinking not in the answer', 'negative', true],
    ]);
  });

  it('fails reasoning not reported, not stored, or shown in the answer', () => {
    const silent = thinkingOf(run({ timeline: [] }));
    expect(silent.map((entry) => entry.pass)).toEqual([false, false, true, false]);
    expect(silent[1]?.reason).toBe('the run reported no reasoning');
    // Without any reported reasoning, "not in the answer" has no evidence.
    expect(silent[3]?.reason).toContain('but that proves nothing: the run reported no reasoning that could have leaked');
    const unstored = thinkingOf(run({
      history: history.map((message): Message => (message.role === 'assistant' ? { ...message, reasoning: undefined } : message)),
    }));
    expect(unstored[2]?.reason).toBe('the message of reply 1 keeps no reasoning; the message of reply 2 keeps no reasoning');
    const leaked = thinkingOf(run({ finalText: 'It says hi.It says hi there.' }));
    expect(leaked[3]?.pass).toBe(false);
    expect(leaked[3]?.reason).toBe('the final answer holds "It says hi."');
  });

  it('a script without reasoning gives fromScript nothing to compare', () => {
    const plain = testCase({ expect: { thinking: { fromScript: true } } });
    expect(scoreState({ evalCase: plain, run: fakeRun({ modelCalls: [request(1, 'sys', [user])] }), relaxed: false })
      .find((entry) => entry.assertion === 'thinking from the script')?.reason)
      .toBe('no reply of the run had scripted reasoning: there is nothing to compare');
  });
});

describe('cost (budget scorer)', () => {
  const thinking = (id: string, model: string, cost?: number) =>
    span('Thinking', id, 'r', 1, 2, { prompt_tokens: 1, completion_tokens: 1, 'gen_ai.response.model': model, ...(cost === undefined ? {} : { 'claw.cost.usd': cost }) });
  const costCase = testCase({ model: { name: 'gpt-4.1-mini' }, expect: { budget: { costUsd: 0.000452 } } });
  const costOf = (runCost: RunRecord['runCost'], models = ['gpt-4.1-mini', 'gpt-4.1-mini']) =>
    scoreBudget({
      evalCase: costCase,
      run: fakeRun({ spans: models.map((model, index) => thinking(`t${index}`, model)), ...(runCost === undefined ? {} : { runCost }) }),
      relaxed: false,
    }).find((entry) => entry.assertion === 'cost');

  it('passes the hand-computed cost to within 1e-9, every call priced as the case\'s model', () => {
    // 0.000240 + 0.000212 in floating point is not exactly 0.000452.
    expect(costOf({ usd: 0.00024 + 0.000212, unpricedCalls: 0 })?.reason).toBe('the run cost $0.000452000 (2 model call(s) answered by gpt-4.1-mini, priced as gpt-4.1-mini)');
    expect(costOf({ usd: 0.000452 + 0.9e-9, unpricedCalls: 0 })?.pass).toBe(true);
  });

  it('fails another figure, an unpriced call, another model, or a run without a cost', () => {
    // Cached tokens charged at the full input price.
    expect(costOf({ usd: 0.000888, unpricedCalls: 0 })?.reason).toBe('the run cost $0.000888000, expected $0.000452000 (2 model call(s) answered by gpt-4.1-mini)');
    expect(costOf({ usd: 0.000452 + 2e-9, unpricedCalls: 0 })?.pass).toBe(false);
    expect(costOf({ usd: 0.000452, unpricedCalls: 1 })?.reason).toBe('1 of 2 model call(s) answered by gpt-4.1-mini had no price, so the run\'s cost ($0.000452000) is not known');
    expect(costOf({ usd: 0.000452, unpricedCalls: 0 }, ['gpt-4.1-mini', 'gpt-4o'])?.reason).toBe('2 model call(s) answered by gpt-4.1-mini, gpt-4o, expected all by gpt-4.1-mini');
    expect(costOf(undefined)?.reason).toBe('the run did not end: it has no cost');
  });
});

describe('scoreReports', () => {
  const usage = (prompt: number, completion: number) => ({
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
  });
  /** A run with two calls (a read that worked, one that failed), reported as the engine would. */
  function reportedRun(): RunRecord {
    return fakeRun({
      status: 'completed',
      history: [user, assistant(call('a'), call('b')), tool('a', 'text'), tool('b', 'no such file', true), { role: 'assistant', content: 'done' }],
      timeline: [
        { at: 1, type: 'tool_call', detail: 'read_file {}', toolCallId: 'a' },
        { at: 2, type: 'tool_call', detail: 'read_file {}', toolCallId: 'b' },
      ],
      reported: {
        started: [{ at: 3, toolCallId: 'a', name: 'read_file' }, { at: 3, toolCallId: 'b', name: 'read_file' }],
        results: [
          { at: 4, toolCallId: 'a', toolName: 'read_file', content: 'text', isError: false },
          { at: 5, toolCallId: 'b', toolName: 'read_file', content: 'no such file', isError: true },
        ],
        usage: [
          {
            at: 2, call: usage(100, 20), callCostUsd: 0.5, run: usage(100, 20), runCost: { usd: 0.5, unpricedCalls: 0 },
            session: usage(150, 20), sessionCost: { usd: 0.5, unpricedCalls: 0 },
            budgetsLeft: { runTokens: 880, sessionTokens: 830 },
          },
          {
            at: 6, call: usage(200, 5), callCostUsd: undefined,
            run: usage(300, 25), runCost: { usd: 0.5, unpricedCalls: 1 },
            session: usage(350, 25), sessionCost: { usd: 0.5, unpricedCalls: 1 },
            budgetsLeft: { runTokens: 675, sessionTokens: 625 },
          },
        ],
      },
      limits: { maxRunTokens: 1000, maxSessionTokens: 1000 },
    });
  }
  const failures = (run: RunRecord, changes: Partial<EvalCaseInput> = {}) =>
    scoreReports({ evalCase: testCase(changes), run, relaxed: false })
      .filter((score) => !score.pass)
      .map((score) => `${score.assertion}: ${score.reason}`);

  it('passes a run whose reports agree with its session, and counts what the case expects', () => {
    expect(failures(reportedRun())).toEqual([]);
    expect(failures(reportedRun(), { expect: { reports: { results: 2, started: 1 } } })).toEqual([
      'starts reported: 2 starts reported, 1 expected',
    ]);
  });

  it('finds a result reported unlike the stored Observation, or missing, or twice', () => {
    const flipped = reportedRun();
    (flipped.reported.results[1] as { isError: boolean }).isError = false;
    expect(failures(flipped)).toEqual([
      'reported results as stored: b: reported as a success, stored as an error',
    ]);
    const renamed = reportedRun();
    (renamed.reported.results[0] as { toolName: string }).toolName = '';
    expect(failures(renamed)[0]).toMatch(/reported as a result of "", the call is to "read_file"/);
    const missing = reportedRun();
    missing.reported.results.pop();
    expect(failures(missing)).toEqual([
      'every reported call answered: b (read_file) got 0 result reports, not exactly one',
    ]);
    // A wave stopped by a failed reporter answers its calls without reporting them.
    expect(failures({ ...missing, status: 'failed', errorCode: 'reporter_failed' })).toEqual([]);
    const twice = reportedRun();
    twice.reported.started.push({ at: 4, toolCallId: 'a', name: 'read_file' });
    expect(failures(twice)).toEqual(['tool starts reported: a was reported started 2 times']);
  });

  it('holds the usage reports to their sums and budgetsLeft to the limits', () => {
    const offSum = reportedRun();
    (offSum.reported.usage[1] as { run: object }).run = usage(200, 5);
    expect(failures(offSum)[0]).toMatch(/^usage reports add up: usage report 2: the run's total is 205, its calls' sum 325/);
    const unlimited = reportedRun();
    unlimited.limits = { maxRunTokens: 1000 };
    expect(failures(unlimited)).toEqual([
      'budgets left as used: usage report 1: sessionTokens is unlimited, yet budgetsLeft has it (830); usage report 2: sessionTokens is unlimited, yet budgetsLeft has it (625)',
    ]);
    const wrong = reportedRun();
    (wrong.reported.usage[0] as { budgetsLeft: object }).budgetsLeft = { runTokens: 1000, sessionTokens: 830 };
    expect(failures(wrong)).toEqual([
      'budgets left as used: usage report 1: budgetsLeft.runTokens is 1000, the limit 1000 less 120 used is 880',
    ]);
    const missing = reportedRun();
    (missing.reported.usage[1] as { budgetsLeft: object }).budgetsLeft = { runTokens: 675 };
    expect(failures(missing)).toEqual([
      'budgets left as used: usage report 2: budgetsLeft.sessionTokens is undefined, not between 0 and its limit 1000',
    ]);
  });
});
