import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Compaction, Message, SessionEventOf } from '@claw/core';
import { spanAttributes, spanNames } from '@claw/engine';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { defineCase, positiveAssertions, type EvalCaseInput } from '../src/case.js';
import { machineInfo } from '../src/environment.js';
import { runSettings, seededCompaction } from '../src/harness.js';
import { metricsFrom } from '../src/metrics.js';
import { createScriptedModel, type ModelCallRecord } from '../src/model.js';
import { relaxedExpectations } from '../src/recorded.js';
import { renderHtmlReport } from '../src/report/html.js';
import { buildResults } from '../src/results.js';
import type { CompactionRecord, RunRecord } from '../src/run-record.js';
import { scoreBudget } from '../src/scorers/budget.js';
import { scoreCompaction } from '../src/scorers/compaction.js';
import { conversations, isSummaryRequest, scoreRequests } from '../src/scorers/requests.js';
import { scoreState } from '../src/scorers/state.js';
import { scoreTrace, spanTreeProblems } from '../src/scorers/trace.js';
import { fillRound, type Round } from '../src/script.js';
import { runSuite } from '../src/suite.js';
import type { SpanRecord } from '../src/tracing.js';
import { evalRoot, fakeRun, runOne, suiteCase } from './helpers.js';

const minimal: EvalCaseInput = {
  id: 'unit',
  title: 'unit',
  prompt: 'go',
  script: [{ text: 'done' }],
  expect: { outcome: { status: 'completed' } },
};

function testCase(changes: Partial<EvalCaseInput> = {}) {
  return defineCase({ ...minimal, ...changes });
}

const summarySystem = 'You write hand-off notes for claw, a coding agent.';
const turnSystem = 'You are claw, a coding agent.';
const marker = '[claw: the earlier part of this conversation was replaced by this summary to fit the model\'s context.]';

const task: Message = { role: 'user', content: 'Write a.ts and b.ts.' };
const callOf = (id: string, name = 'write_file') => ({ id, name, arguments: '{"path":"x"}' });
const assistant = (id: string): Message => ({ role: 'assistant', content: '', toolCalls: [callOf(id)] });
const result = (id: string, content = 'wrote 10 bytes'): Message => ({ role: 'tool', toolCallId: id, content });
const summaryOf = (text: string): Message => ({ role: 'user', content: `${marker}\n\n<summary>\n${text}\n</summary>` });

/** A request as the harness records it: a turn (tools offered) or a summary call (none). */
function request(attempt: number, messages: Message[], options: { summary?: boolean; round?: number; startedAt?: number; kind?: ModelCallRecord['kind'] } = {}): ModelCallRecord {
  const summary = options.summary === true;
  const all: Message[] = [{ role: 'system', content: summary ? summarySystem : turnSystem }, ...messages];
  return {
    attempt,
    round: options.round ?? attempt,
    kind: options.kind ?? 'reply',
    outcome: 'completed',
    startedAt: options.startedAt ?? attempt * 10,
    endedAt: (options.startedAt ?? attempt * 10) + 1,
    scriptedMs: 0,
    messages: all,
    wire: all.map((message) => ({ role: message.role, content: message.content })),
    tools: summary ? [] : ['read_file', 'write_file', 'edit_file'],
  };
}

function span(name: string, id: string, parentId: string | undefined, startMs: number, attributes: SpanRecord['attributes'] = {}): SpanRecord {
  return { id, ...(parentId === undefined ? {} : { parentId }), name, startMs, endMs: startMs + 1, durationMs: 1, attributes, status: 'unset' };
}

const compaction = (changes: Partial<Compaction> = {}): Compaction => ({
  reason: 'threshold',
  upTo: 3,
  kept: [0],
  summary: 'Goal: a.ts and b.ts. Done: a.ts.',
  pruned: [],
  tokensBefore: 13_000,
  tokensAfter: 6_000,
  prunedResults: 0,
  summarisedMessages: 3,
  ...changes,
});

function eventOf(entry: Compaction): SessionEventOf<'context_compacted'> {
  return {
    type: 'context_compacted',
    seq: 1,
    session_id: 'eval',
    at: '2026-01-01T00:00:00Z',
    task_id: 'task-1',
    reason: entry.reason,
    tokens_before: entry.tokensBefore,
    tokens_after: entry.tokensAfter,
    pruned_results: entry.prunedResults,
    summarised_messages: entry.summarisedMessages,
    ...(entry.summary === undefined ? {} : { summary: entry.summary }),
    ...(entry.summaryError === undefined ? {} : { error: entry.summaryError }),
  };
}

/**
 * A run that compacted once before its third turn: a.ts written (history 0–2 replaced by the
 * summary), the summary call, then the compacted turn that writes b.ts.
 */
function compactedRun(changes: Partial<RunRecord> = {}): RunRecord {
  const made = compaction();
  const history: Message[] = [task, assistant('call_1_1'), result('call_1_1'), assistant('call_3_1'), result('call_3_1'), { role: 'assistant', content: 'done' }];
  const modelCalls = [
    request(1, [task]),
    request(2, [{ role: 'user', content: '<transcript>…</transcript>' }], { summary: true }),
    request(3, [task, summaryOf(made.summary ?? '')]),
    request(4, [task, summaryOf(made.summary ?? ''), assistant('call_3_1'), result('call_3_1')]),
  ];
  const compactions: CompactionRecord[] = [{ at: 15, compaction: made }];
  return fakeRun({
    history,
    modelCalls,
    compactions,
    compactionEvents: [eventOf(made)],
    result: { compactions: 1, summaryCalls: 1 },
    compactionAfter: structuredClone(made),
    spans: [
      span(spanNames.run, 'run', undefined, 0),
      span(spanNames.thinking, 't1', 'run', 10),
      span(spanNames.compact, 'c1', 'run', 20),
      span(spanNames.thinking, 't2', 'run', 30),
      span(spanNames.thinking, 't3', 'run', 40),
    ],
    script: [{ text: 'a' }, { text: 'notes', expectRequest: { isSummary: true } }, { text: 'b' }, { text: 'done' }],
    ...changes,
  });
}

/** The run with these compactions heard, logged, counted and (the latest) stored. */
function withCompactions(run: RunRecord, compactions: CompactionRecord[], summaryCalls = 1): RunRecord {
  const latest = compactions.at(-1)?.compaction;
  return {
    ...run,
    compactions,
    compactionEvents: compactions.map((entry) => eventOf(entry.compaction)),
    result: { compactions: compactions.length, summaryCalls },
    ...(latest === undefined ? {} : { compactionAfter: latest }),
  };
}

const scoreOf = (run: RunRecord, expect: EvalCaseInput['expect'] = { compaction: { count: 1 } }, relaxed = false) =>
  scoreCompaction({ evalCase: testCase({ script: run.script, expect }), run, relaxed });
const failing = (results: ReturnType<typeof scoreOf>) =>
  results.filter((entry) => !entry.pass).map((entry) => `${entry.assertion}: ${entry.reason}`);

describe('case fields for compaction', () => {
  it('takes the window, the ratio, a stored compaction, round request checks and compaction expectations', () => {
    const evalCase = testCase({
      contextWindowTokens: 16_000,
      compactAtRatio: 0.7,
      session: { history: [task, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }], compaction: { upTo: 2, summary: 'notes' } },
      script: [{ text: 'x', expectRequest: { isSummary: false, firstUser: 'Write a.ts and b.ts.', contains: ['notes'], absent: ['ok'] } }],
      expect: { compaction: { count: 0, reasons: [], summaryCalls: 0, summaryErrors: 0, storedUpTo: 'positive' } },
    });
    const settings = runSettings(evalCase, {}, 'scripted');
    expect(settings.contextWindowTokens).toBe(16_000);
    expect(settings.compactAtRatio).toBe(0.7);
    // Without them, the runtime's.
    expect(runSettings(testCase(), {}, 'scripted').compactAtRatio).toBe(0.8);
    expect(runSettings(testCase(), {}, 'scripted').contextWindowTokens).toBe(128_000);
  });

  it('refuses a ratio, a window or a stored compaction that cannot be, and an unknown compaction check', () => {
    expect(() => testCase({ compactAtRatio: 0.05 })).toThrow(/is invalid/);
    expect(() => testCase({ compactAtRatio: 1.5 })).toThrow(/is invalid/);
    expect(() => testCase({ contextWindowTokens: 500 })).toThrow(/is invalid/);
    expect(() => testCase({ session: { history: [task], compaction: { upTo: 2 } } })).toThrow(/upTo ≤ history.length/);
    expect(() => testCase({ session: { history: [task, task], compaction: { upTo: 1, kept: [1] } } })).toThrow(/kept < upTo/);
    expect(() => testCase({ expect: { compaction: { count: 1, sumaryCalls: 1 } as never } })).toThrow(/invalid compaction expectation/);
    expect(() => testCase({ script: [{ text: 'x', expectRequest: { contain: ['x'] } as never }] })).toThrow(/is invalid/);
    // A fault with the server's error code (openai-http).
    expect(testCase({ model: { transport: 'openai-http' }, script: [{ fault: { type: 'status', status: 400, code: 'context_length_exceeded' } }] }).script[0]?.fault)
      .toEqual({ type: 'status', status: 400, code: 'context_length_exceeded' });
  });

  it('counts compaction checks and what rounds expect of their requests as positive; absent texts alone are not', () => {
    expect(positiveAssertions({ compaction: { count: 1, storedUpTo: 'positive' } })).toEqual(['compaction.count', 'compaction.storedUpTo']);
    expect(positiveAssertions({}, [{ text: 'x' }, { text: 'y', expectRequest: { isSummary: true, contains: ['a'], firstUser: 'b', absent: ['c'] } }]))
      .toEqual(['round 2 request.contains', 'round 2 request.firstUser', 'round 2 request.isSummary']);
    expect(() => testCase({ expect: {}, script: [{ text: 'x', expectRequest: { absent: ['c'] } }] })).toThrow(/has no positive assertion/);
    expect(testCase({ expect: {}, script: [{ text: 'x', expectRequest: { isSummary: false } }] }).id).toBe('unit');
  });

  it('fills the run\'s folders into what a round expects of its request', () => {
    const filled = fillRound({ text: 'x', expectRequest: { contains: ['{{workspace}}/a'], absent: ['{{outside}}'], firstUser: 'in {{workspace}}' } }, { workspace: '/w', outside: '/o' });
    expect(filled.expectRequest).toEqual({ contains: ['/w/a'], absent: ['/o'], firstUser: 'in /w' });
  });

  it('fills a stored compaction\'s defaults as the engine would have stored it', () => {
    const history: Message[] = [task, assistant('a'), result('a'), { role: 'user', content: 'and c.ts' }, assistant('b'), result('b')];
    expect(seededCompaction(history, { upTo: 5, summary: 'notes' })).toEqual({
      reason: 'threshold', upTo: 5, kept: [0, 3], summary: 'notes', pruned: [], tokensBefore: 0, tokensAfter: 0,
      prunedResults: 0, summarisedMessages: 3,
    });
    expect(seededCompaction(history, { upTo: 3, kept: [], pruned: ['b'], reason: 'overflow', summaryError: 'failed' }))
      .toMatchObject({ kept: [], pruned: ['b'], prunedResults: 1, reason: 'overflow', summaryError: 'failed', summarisedMessages: 3 });
  });

  it('drops the exact compaction counts of a replayed recording, keeping the stored one', () => {
    expect(relaxedExpectations({ compaction: { count: 2, reasons: ['threshold'], summaryCalls: 2, summaryErrors: 0, storedUpTo: 'positive' } }).compaction)
      .toEqual({ storedUpTo: 'positive' });
    expect(relaxedExpectations({ compaction: { count: 2 } }).compaction).toBeUndefined();
  });
});

describe('summary calls in the requests', () => {
  it('tells a summary call from a turn by its tools and its system message', () => {
    expect(isSummaryRequest(request(1, [task], { summary: true }))).toBe(true);
    expect(isSummaryRequest(request(1, [task]))).toBe(false);
    // No tools, but another system message: not claw's summary call.
    expect(isSummaryRequest({ ...request(1, [task]), tools: [] })).toBe(false);
  });

  it('keeps summary calls out of conversations and puts a compacted view on the run\'s own', () => {
    const run = compactedRun();
    expect(conversations(run.modelCalls).map((group) => group.map((entry) => entry.attempt))).toEqual([[1, 3, 4]]);
    // A pruned result continues the conversation it was pruned in.
    const first = request(1, [task, assistant('a'), result('a', 'x'.repeat(700))]);
    const pruned = request(2, [task, assistant('a'), result('a', '[output of write_file "x" (700 B) removed to save context; run it again if needed]'), assistant('b'), result('b')]);
    expect(conversations([first, pruned]).map((group) => group.length)).toEqual([2]);
    // Without the stub rule, another result text starts a conversation of its own.
    const changed = request(2, [task, assistant('a'), result('a', 'other'), assistant('b'), result('b')]);
    expect(conversations([first, changed]).map((group) => group.length)).toEqual([1, 1]);
  });

  it('checks what each round expects of its request', () => {
    const run = compactedRun({
      script: [
        { text: 'a', expectRequest: { isSummary: false, firstUser: task.content } },
        { text: 'notes', expectRequest: { isSummary: true, contains: ['<transcript>'] } },
        { text: 'b', expectRequest: { contains: ['<summary>\nGoal: a.ts'], absent: ['wrote 10 bytes'] } },
        { text: 'done', expectRequest: { isSummary: true, firstUser: 'something else', contains: ['nowhere'], absent: ['wrote 10 bytes'] } },
      ],
    });
    const results = scoreRequests({ evalCase: testCase({ script: run.script }), run, relaxed: false });
    expect(results.map((entry) => [entry.assertion, entry.kind, entry.pass])).toEqual([
      ['round 1 request', 'positive', true],
      ['round 2 request', 'positive', true],
      ['round 3 request', 'positive', true],
      ['round 3 request leaves out', 'negative', true],
      ['round 4 request', 'positive', false],
      ['round 4 request leaves out', 'negative', false],
      ['summary calls answered as scripted', 'invariant', true],
    ]);
    expect(results[4]?.reason).toBe('request 4 (round 4): it is not a summary call (3 tool(s) offered; system message "You are claw, a coding agent."); its first message is user: "Write a.ts and b.ts.", not the user\'s "something else"; it lacks "nowhere"');
    expect(results[5]?.reason).toBe('request 4 (round 4) carries "wrote 10 bytes"');
  });

  it('fails a summary call answered by a round not written for one, and a round that answered nothing', () => {
    const run = compactedRun({ script: [{ text: 'a' }, { text: 'notes' }, { text: 'b' }, { text: 'done' }, { text: 'never', expectRequest: { isSummary: false } }] });
    const results = scoreRequests({ evalCase: testCase({ script: run.script }), run, relaxed: false });
    expect(results.filter((entry) => !entry.pass).map((entry) => entry.reason)).toEqual([
      'round 5 answered no request',
      'request 2 is a summary call, but round 2 was not written for one (mark it expectRequest: { isSummary: true })',
    ]);
    // Nothing to say about a run that made no summary call and whose rounds expect nothing.
    const plain = fakeRun({ modelCalls: [request(1, [task])] });
    expect(scoreRequests({ evalCase: testCase(), run: plain, relaxed: false })).toEqual([]);
  });
});

describe('the compaction scorer', () => {
  it('passes a run whose compaction is told alike, stored, counted, and shown in the next request', () => {
    const results = scoreOf(compactedRun(), {
      compaction: { count: 1, reasons: ['threshold'], summaryCalls: 1, summaryErrors: 0, storedUpTo: 'positive' },
    });
    expect(failing(results)).toEqual([]);
    expect(results.map((entry) => [entry.assertion, entry.kind])).toEqual([
      ['compactions told alike', 'invariant'],
      ['summary calls counted alike', 'invariant'],
      ['one compaction per model call', 'invariant'],
      ['latest compaction stored', 'invariant'],
      ['next request is the compacted view', 'invariant'],
      ['compactions', 'positive'],
      ['reasons', 'positive'],
      ['summary calls', 'positive'],
      ['failed summaries', 'positive'],
      ['stored compaction', 'positive'],
    ]);
    expect(results[4]?.reason).toBe('request 3 after compaction 1: the user\'s messages kept first, then the summary, without the replaced calls, pruned results as stubs');
  });

  it('says nothing of a run that neither compacted nor expects to', () => {
    expect(scoreOf(fakeRun(), { outcome: { status: 'completed' } })).toEqual([]);
    // Expecting a compaction that never came fails.
    expect(failing(scoreOf(fakeRun(), { compaction: { count: 1, storedUpTo: 'positive' } }))).toEqual([
      'compactions: the run compacted 0 times, expected 1',
      'stored compaction: the session stores no compaction after the run',
    ]);
  });

  it('fails when the reporter, the result and the events do not tell the same compactions', () => {
    const run = compactedRun();
    expect(failing(scoreOf({ ...run, compactionEvents: [] }))).toEqual([
      'compactions told alike: the reporter was told of 1, the session logged 0 context_compacted events',
    ]);
    expect(failing(scoreOf({ ...run, result: { compactions: 2, summaryCalls: 1 } }))).toEqual([
      'compactions told alike: the run\'s result counts 2, the reporter was told of 1',
    ]);
    const event = { ...eventOf(compaction()), tokens_after: 7_000 };
    delete (event as { summary?: string }).summary;
    expect(failing(scoreOf({ ...run, compactionEvents: [event] }))).toEqual([
      'compactions told alike: event 1: tokens_after 7000, expected 6000, summary null, expected "Goal: a.ts and b.ts. Done: a.ts."',
    ]);
    expect(failing(scoreOf({ ...run, eventsError: 'cursor expired' }))).toEqual([
      'compactions told alike: the session\'s events could not be read: cursor expired',
    ]);
  });

  it('fails when the summary calls in the result, the trace and the requests differ; a retried attempt is one call', () => {
    const run = compactedRun();
    expect(failing(scoreOf({ ...run, result: { compactions: 1, summaryCalls: 2 } }))).toEqual([
      'summary calls counted alike: the run\'s result counts 2, the trace has 1 Compact span under Agent.Run',
    ]);
    const untraced = run.spans.filter((entry) => entry.name !== spanNames.compact);
    expect(failing(scoreOf({ ...run, spans: untraced, result: { compactions: 1, summaryCalls: 0 } })))
      .toEqual(['summary calls counted alike: the model was sent 1 summary call, the trace has 0 Compact spans']);
    // A subagent's summary call is under its RunSub span: the run's result does not count it.
    const subagent = [span(spanNames.subagent, 'sub', 'run', 45), span(spanNames.compact, 'c2', 'sub', 46)];
    const subRequest = request(5, [{ role: 'user', content: '<transcript>sub</transcript>' }], { summary: true, startedAt: 46 });
    const withSubagent = { ...run, spans: [...run.spans, ...subagent], modelCalls: [...run.modelCalls, subRequest] };
    expect(failing(scoreOf(withSubagent))).toEqual([]);
    // A failed attempt the retrying provider sent again (the same request) is one summary call.
    const retried = request(2, [{ role: 'user', content: '<transcript>…</transcript>' }], { summary: true, kind: 'fault' });
    const calls = [run.modelCalls[0]!, retried, { ...run.modelCalls[1]!, attempt: 3 }, ...run.modelCalls.slice(2)];
    expect(failing(scoreOf({ ...run, modelCalls: calls }))).toEqual([]);
  });

  it('fails two compactions before one model call (CMP-3)', () => {
    const run = compactedRun();
    const twice = [...run.compactions, { at: 16, compaction: compaction() }];
    const results = scoreOf(withCompactions(run, twice));
    expect(failing(results)).toContain('one compaction per model call: 2 compactions before request 3');
    // After the last request too.
    const late = [...run.compactions, { at: 50, compaction: compaction() }, { at: 51, compaction: compaction() }];
    expect(failing(scoreOf(withCompactions(run, late))))
      .toContain('one compaction per model call: 2 compactions after the last request');
  });

  it('fails when the session does not store the latest compaction', () => {
    const { compactionAfter: _stored, ...run } = compactedRun();
    expect(failing(scoreOf(run as RunRecord))).toEqual(['latest compaction stored: the session stores no compaction after the run']);
    expect(failing(scoreOf({ ...run, compactionAfter: compaction({ upTo: 1 }) }))[0]).toMatch(/^latest compaction stored: the session stores threshold/);
    // The same compaction with its keys in another order is the same.
    const reordered = Object.fromEntries(Object.entries(compaction()).reverse()) as unknown as Compaction;
    expect(failing(scoreOf({ ...run, compactionAfter: reordered }))).toEqual([]);
  });

  it('fails a next request that is not the compacted view: no notes, the task not first, replaced calls sent, a pruned result whole', () => {
    const run = compactedRun();
    const withRequest = (messages: Message[]) => {
      const calls = [...run.modelCalls];
      calls[2] = request(3, messages);
      return scoreOf({ ...run, modelCalls: calls });
    };
    const notes = summaryOf(compaction().summary ?? '');
    expect(failing(withRequest([task]))).toEqual(['next request is the compacted view: request 3, after compaction 1: no message stands for the 3 replaced messages after the kept ones']);
    expect(failing(withRequest([task, summaryOf('other notes')]))).toEqual(['next request is the compacted view: request 3, after compaction 1: the message that stands for the replaced part does not hold the summary']);
    expect(failing(withRequest([notes]))).toEqual(['next request is the compacted view: request 3, after compaction 1: message 1 is not the user\'s message 0 verbatim; no message stands for the 3 replaced messages after the kept ones']);
    expect(failing(withRequest([task, notes, assistant('call_1_1'), result('call_1_1')]))).toEqual(['next request is the compacted view: request 3, after compaction 1: replaced calls were sent again: call_1_1']);
    // A summary that failed: the note says the part was left out.
    const left = compaction({ summary: undefined, summaryError: 'HTTP 503' });
    const leftRun = withCompactions(compactedRun(), [{ at: 15, compaction: left }]);
    const calls = [...leftRun.modelCalls];
    calls[2] = request(3, [task, { role: 'user', content: '[claw: the earlier part of this conversation was left out to fit the model\'s context (it could not be summarised).]' }]);
    expect(failing(scoreOf({ ...leftRun, modelCalls: calls }))).toEqual([]);
    calls[2] = request(3, [task, summaryOf('invented notes')]);
    expect(failing(scoreOf({ ...leftRun, modelCalls: calls }))).toEqual(['next request is the compacted view: request 3, after compaction 1: the message that stands for the replaced part does not say it was left out']);
    // Pruned results go as stubs.
    const prunedOnly = compaction({ upTo: 0, kept: [], summary: undefined, pruned: ['call_3_1'], summarisedMessages: 0, prunedResults: 1 });
    const prunedRun = withCompactions(compactedRun(), [{ at: 35, compaction: prunedOnly }]);
    expect(failing(scoreOf(prunedRun))).toEqual(['next request is the compacted view: request 4, after compaction 1: the pruned result of call_3_1 was sent whole']);
  });

  it('checks the first request of a run that starts from a stored compaction', () => {
    const stored = compaction();
    const run = fakeRun({
      history: [task, assistant('call_1_1'), result('call_1_1'), { role: 'user', content: 'go on' }],
      seededMessages: 3,
      compactionBefore: stored,
      compactionAfter: stored,
      modelCalls: [request(1, [task, { role: 'user', content: 'go on' }])],
      result: { compactions: 0, summaryCalls: 0 },
    });
    expect(failing(scoreOf(run, { compaction: { storedUpTo: 'positive' } }))).toEqual([
      'next request is the compacted view: request 1, after the stored compaction: no message stands for the 3 replaced messages after the kept ones',
    ]);
  });

  it('checks the expected counts and reasons, and leaves exact counts out against a real model', () => {
    const run = compactedRun();
    expect(failing(scoreOf(run, { compaction: { count: 2, reasons: ['overflow'], summaryCalls: 0, summaryErrors: 1 } }))).toEqual([
      'compactions: the run compacted once, expected 2: threshold (13000 → 6000 tokens, 0 pruned, 3 messages summarised)',
      'reasons: the compactions\' reasons: threshold, expected overflow',
      'summary calls: 1 summary call, expected 0',
      'failed summaries: 0 compactions without a summary, expected 1',
    ]);
    const relaxed = scoreOf({ ...run, mode: 'real', modelCalls: [] }, { compaction: { count: 2, reasons: ['overflow'], storedUpTo: 'positive' } }, true);
    expect(relaxed.map((entry) => entry.assertion)).toEqual(['compactions told alike', 'summary calls counted alike', 'latest compaction stored', 'stored compaction']);
  });
});

describe('summary calls are model calls', () => {
  const spans = [
    span('Eval', 'eval', undefined, 0),
    span(spanNames.run, 'run', 'eval', 0),
    span(spanNames.thinking, 't1', 'run', 10, { [spanAttributes.ttfbMs]: 0.1 }),
    span(spanNames.compact, 'c1', 'run', 20, { [spanAttributes.ttfbMs]: 0.2 }),
    span(spanNames.thinking, 't2', 'run', 30, { [spanAttributes.ttfbMs]: 0.3 }),
  ];

  it('counts Compact spans with Thinking spans in the metrics, the span tree and the budget scorer', () => {
    const metrics = metricsFrom(spans);
    expect(metrics.modelCalls).toBe(3);
    expect(metrics.ttfbMs).toEqual([0.1, 0.2, 0.3]);
    expect(spanTreeProblems(spans)).toEqual([]);
    // A Compact span anywhere else is still wrong.
    expect(spanTreeProblems([...spans, span(spanNames.compact, 'c2', 't1', 25)])).toEqual(['a Compact span under Thinking, expected under Agent.Run or RunSub']);
    const evalCase = testCase({ expect: { budget: { modelCalls: 3 } } });
    const budget = scoreBudget({ evalCase, run: fakeRun({ spans }), relaxed: false });
    expect(budget.map((entry) => [entry.assertion, entry.pass, entry.reason])).toEqual([['model calls', true, 'the model was called 3 time(s)']]);
  });

  it('sums the summary call\'s tokens into the run\'s and the script\'s', () => {
    const tokens = (prompt: number, completion: number) => ({
      [spanAttributes.promptTokens]: prompt,
      [spanAttributes.completionTokens]: completion,
      [spanAttributes.ttfbMs]: 0.5,
    });
    const withTokens = [
      span('Eval', 'eval', undefined, 0),
      span(spanNames.run, 'run', 'eval', 0, tokens(350, 35)),
      span(spanNames.thinking, 't1', 'run', 10, tokens(100, 10)),
      span(spanNames.compact, 'c1', 'run', 20, tokens(200, 20)),
      span(spanNames.thinking, 't2', 'run', 30, tokens(50, 5)),
    ];
    const script: Round[] = [
      { text: 'a', usage: { promptTokens: 100, completionTokens: 10 } },
      { text: 'notes', usage: { promptTokens: 200, completionTokens: 20 } },
      { text: 'b', usage: { promptTokens: 50, completionTokens: 5 } },
    ];
    const modelCalls = [request(1, [task]), request(2, [task], { summary: true }), request(3, [task])];
    const run = fakeRun({ spans: withTokens, script, modelCalls });
    const results = scoreTrace({ evalCase: testCase({ script }), run, relaxed: false });
    expect(results.filter((entry) => !entry.pass).map((entry) => entry.reason)).toEqual([]);
    expect(results.find((entry) => entry.assertion === 'tokens equal the script')?.reason)
      .toBe('the model calls\' spans carry 350 prompt and 35 completion tokens, as scripted');
  });
});

describe('the error message of a run', () => {
  it('checks what the error message says', () => {
    const evalCase = testCase({ expect: { outcome: { errorMessageContains: 'of the model\'s 16,000' } } });
    const said = scoreState({ evalCase, run: fakeRun({ status: 'failed', errorMessage: 'at most 14,400 of the model\'s 16,000 can be sent' }), relaxed: false });
    expect(said.find((entry) => entry.assertion === 'error message contains')?.pass).toBe(true);
    const other = scoreState({ evalCase, run: fakeRun({ status: 'failed', errorMessage: 'something else' }), relaxed: false });
    expect(other.find((entry) => entry.assertion === 'error message contains')?.reason).toBe('the error message does not contain "of the model\'s 16,000"');
  });
});

describe('a fault with the server\'s error code', () => {
  it('is sent as OpenAI sends it, so that the provider classifies it by its code', async () => {
    const model = await createScriptedModel({
      rounds: [{ fault: { type: 'status', status: 400, code: 'context_length_exceeded', message: 'request rejected' } }],
      model: { transport: 'openai-http' },
      limits: { retries: 0, callTimeoutMs: 0, firstTokenTimeoutMs: 5_000, streamIdleTimeoutMs: 5_000 },
      now: () => performance.now(),
      modelName: 'claw-eval-script',
    });
    try {
      const failure = await model.provider.generate({ messages: [task] }).catch((error: unknown) => error);
      // "request rejected" says nothing of the context: only the code can.
      expect((failure as { code?: string }).code).toBe('context_length_exceeded');
      expect(model.calls.map((entry) => entry.kind)).toEqual(['fault']);
    } finally {
      await model.close();
    }
  });
});

describe('compaction cases on the real engine', () => {
  it('a requests scorer that always passes is caught by canary-round-request', async () => {
    const canary = await suiteCase('canary-round-request');
    const healthy = await runOne(canary);
    expect(healthy.verdict, healthy.reason).toBe('pass');
    expect(healthy.reason).toContain('round 2 request: request 2 (round 2): it is not a summary call');
    const broken = await runOne(canary, {
      scorers: { requests: () => [{ scorer: 'requests', assertion: 'anything', kind: 'positive', pass: true, reason: 'always passes' }] },
    });
    expect(broken.verdict).toBe('fail');
  });

  it('records what the compaction scorer reads: the compactions, the events, the result, the stored compaction', async () => {
    const overflow = (await runOne(await suiteCase('overflow-compacted'))).samples[0]!.run;
    expect(overflow.compactions.map((entry) => entry.compaction.reason)).toEqual(['overflow']);
    expect(overflow.compactionEvents.map((event) => event.reason)).toEqual(['overflow']);
    expect(overflow.result).toEqual({ compactions: 1, summaryCalls: 1 });
    expect(overflow.compactionAfter?.upTo).toBeGreaterThan(0);
    expect(overflow.timeline.filter((event) => event.type === 'compacted').map((event) => event.detail))
      .toEqual([expect.stringMatching(/^overflow: \d+ → \d+ tokens, 9 result\(s\) pruned, \d+ message\(s\) summarised$/)]);
    const resumed = (await runOne(await suiteCase('resume-after-compaction'))).samples[0]!.run;
    expect(resumed.compactionBefore).toMatchObject({ upTo: 5, kept: [0] });
    expect(resumed.compactions).toEqual([]);
  }, 30_000);
});

describe('compactions in the reports', () => {
  it('results.json keeps the compactions (valid against the committed schema) and the page shows them', async () => {
    const suite = await runSuite([await suiteCase('summary-fails')]);
    const results = buildResults(suite, {
      version: '0.0.0-test', git: { sha: null, dirty: null }, machine: machineInfo(), filters: [], tags: [],
    });
    const schema = JSON.parse(await readFile(path.join(evalRoot, 'schema', 'results.schema.json'), 'utf8')) as object;
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
    expect(validate(JSON.parse(JSON.stringify(results))), JSON.stringify(validate.errors)).toBe(true);
    const detail = results.cases[0]?.samples[0]?.detail;
    expect(detail?.compactions?.map((entry) => entry.reason)).toEqual(['threshold']);
    expect(detail?.compactions?.[0]?.summaryError).toContain('HTTP 503');
    expect(detail?.timeline.some((event) => event.type === 'compacted')).toBe(true);
    expect(results.cases[0]?.samples[0]?.scores.some((score) => score.scorer === 'compaction')).toBe(true);
    const page = renderHtmlReport(results);
    expect(page).toContain('<h3>Compactions</h3>');
    expect(page).toContain('no summary: model API returned HTTP 503');
  }, 30_000);
});
