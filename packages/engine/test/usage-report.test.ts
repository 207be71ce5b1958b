import { defineTool, type Reporter, type UsageReport } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, ReporterError } from '../src/index.js';
import { expectPaired, manualTime, newSession, recordTool } from './helpers.js';

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens });
const tokens = (promptTokens: number, completionTokens: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
});
// $10,000 / $50,000 per million: 100 prompt + 20 completion tokens cost exactly $2.
const prices = { scripted: { inputPerMillion: 10_000, outputPerMillion: 50_000 } };

function usageRecorder(events: string[] = []): Reporter & { reports: UsageReport[] } {
  const reports: UsageReport[] = [];
  return {
    reports,
    onThinking: () => void events.push('thinking'),
    onTextCompleted: () => void events.push('text_completed'),
    onMessage: (message) => void events.push(`message:${message.role}`),
    onUsage: (report) => {
      events.push('usage');
      reports.push(report);
    },
  };
}

describe('Reporter.onUsage (BUD-*, OBS)', () => {
  it('reports each call, the run and the session so far, and what every limited budget has left', async () => {
    const time = manualTime();
    const slow = defineTool({
      name: 'slow',
      description: 'Takes 30 ms of clock time.',
      risk: 'safe',
      schema: z.object({}),
      execute: async () => {
        time.advance(30);
        return 'ok';
      },
    });
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'slow', arguments: {} }], usage: usage(100, 20) },
      { text: 'done', usage: usage(50, 10) },
    ]);
    const session = new MemorySession({ workDir: '/w', usage: tokens(90, 10), cost: { usd: 0.5, unpricedCalls: 1 } });
    const events: string[] = [];
    const reporter = usageRecorder(events);
    const result = await new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [slow],
      prices,
      now: time.now,
      setTimer: time.setTimer,
      maxSessionTokens: 10_000,
      maxRunTokens: 1_000,
      maxRunCostUsd: 5,
      toolTimeBudgetMs: 60_000,
      maxSubagents: 2,
    }).run('go', { session, reporter });
    expect(result.status).toBe('completed');

    expect(reporter.reports).toEqual([
      {
        call: tokens(100, 20),
        callCostUsd: 2,
        run: tokens(100, 20),
        runCost: { usd: 2, unpricedCalls: 0 },
        session: tokens(190, 30),
        sessionCost: { usd: 2.5, unpricedCalls: 1 },
        // No session cost limit: no entry for it.
        budgetsLeft: { sessionTokens: 9_780, runTokens: 880, runCostUsd: 3, toolTimeMs: 60_000, subagents: 2 },
      },
      {
        call: tokens(50, 10),
        callCostUsd: 1,
        run: tokens(150, 30),
        runCost: { usd: 3, unpricedCalls: 0 },
        session: tokens(240, 40),
        sessionCost: { usd: 3.5, unpricedCalls: 1 },
        budgetsLeft: { sessionTokens: 9_720, runTokens: 820, runCostUsd: 2, toolTimeMs: 59_970, subagents: 2 },
      },
    ]);
    // After the call, before its reply is reported and appended.
    expect(events.slice(0, 4)).toEqual(['message:user', 'thinking', 'usage', 'message:assistant']);
    expect(events.slice(-3)).toEqual(['usage', 'text_completed', 'message:assistant']);
  });

  it('an unpriced call has no cost; unlimited budgets have no entry', async () => {
    const provider = new ScriptedProvider([{ text: 'hi', usage: usage(10, 5) }]);
    const reporter = usageRecorder();
    await new Engine({ provider, gate: new AllowAllGate() }).run('go', { session: newSession(), reporter });
    expect(reporter.reports).toEqual([
      {
        call: tokens(10, 5),
        callCostUsd: undefined,
        run: tokens(10, 5),
        runCost: { usd: 0, unpricedCalls: 1 },
        session: tokens(10, 5),
        sessionCost: { usd: 0, unpricedCalls: 1 },
        budgetsLeft: {},
      },
    ]);
  });

  it('what is left never goes below zero', async () => {
    const provider = new ScriptedProvider([{ text: 'a long final answer', usage: usage(900, 300) }]);
    const reporter = usageRecorder();
    const result = await new Engine({ provider, gate: new AllowAllGate(), prices, maxSessionTokens: 1_000, maxRunCostUsd: 1 }).run('go', {
      session: newSession(),
      reporter,
    });
    expect(result.status).toBe('completed');
    expect(reporter.reports[0]?.budgetsLeft).toEqual({ sessionTokens: 0, runCostUsd: 0 });
  });

  it('a subagent\'s model calls report through the parent\'s reporter, with the shared run figures', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'sub' } }], usage: usage(10, 0) },
      { toolCalls: [{ name: 'record', arguments: { text: 'x' } }], usage: usage(20, 0) },
      { text: 'child done', usage: usage(30, 0) },
      { text: 'parent done', usage: usage(40, 0) },
    ]);
    const reporter = usageRecorder();
    const session = newSession();
    const result = await new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [recordTool([])],
      subagents: true,
      maxSubagents: 3,
      maxRunTokens: 1_000,
    }).run('go', { session, reporter });
    expect(result.status).toBe('completed');
    expect(
      reporter.reports.map((report) => [
        report.call.totalTokens,
        report.run.totalTokens,
        report.session.totalTokens,
        report.budgetsLeft.runTokens,
        report.budgetsLeft.subagents,
      ]),
    ).toEqual([
      [10, 10, 10, 990, 3],
      // The child's calls: the parent's run and session figures, the spawn counted.
      [20, 30, 30, 970, 2],
      [30, 60, 60, 940, 2],
      [40, 100, 100, 900, 2],
    ]);
  });

  it('a failing onUsage stops the run (ENG-7): no tool runs, no further model call', async () => {
    const failure = new Error('socket closed');
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'record', arguments: { text: 'x' } }], usage: usage(10, 0) },
      { text: 'never asked' },
    ]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter: {
        onUsage: () => {
          throw failure;
        },
      },
    });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ReporterError);
    expect(result.error?.cause).toBe(failure);
    expect(effects).toEqual([]);
    expect(provider.calls).toHaveLength(1);
    // The tokens were spent: they are on record even though the report failed.
    expect(session.usage().totalTokens).toBe(10);
    expectPaired(session.history());
  });

  it('a failing onUsage in a subagent stops the parent run too', async () => {
    const failure = new Error('socket closed');
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'spawn', name: 'spawn_subagent', arguments: { task: 'sub' } }], usage: usage(10, 0) },
      { toolCalls: [{ name: 'record', arguments: { text: 'x' } }], usage: usage(20, 0) },
      { text: 'never asked' },
      { text: 'never asked either' },
    ]);
    let reports = 0;
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)], subagents: true }).run('go', {
      session,
      reporter: {
        onUsage: () => {
          reports += 1;
          if (reports === 2) throw failure;
        },
      },
    });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ReporterError);
    expect(result.error?.cause).toBe(failure);
    expect(effects).toEqual([]);
    expect(provider.calls).toHaveLength(2);
    expect(session.history().at(-1)).toMatchObject({ role: 'tool', toolCallId: 'spawn' });
    expectPaired(session.history());
  });
});
