import { defineTool, sleep, type ApprovalGate } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { BudgetExceededError, Engine, canceledObservationText, priceOf, defaultPrices } from '../src/index.js';
import {
  blockingTool,
  expectPaired,
  manualTime,
  newSession,
  recordTool,
  settleMicrotasks,
  waitTool,
  watch,
} from './helpers.js';

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens });
const readCall = { name: 'record', arguments: { text: 'x' } };

describe('token budgets (BUD-1, BUD-2)', () => {
  it('a first call that uses the whole session budget and still needs another: the second call is never sent', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [readCall], usage: usage(800, 200) },
      { text: 'never asked' },
    ]);
    const session = newSession();
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])], maxSessionTokens: 1000 });
    const result = await engine.run('go', { session });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(BudgetExceededError);
    expect(result.error?.code).toBe('session_token_budget_exceeded');
    expect(result.error?.message).toBe('session token budget exceeded: used 1000 tokens of 1000 tokens');
    expect(provider.calls).toHaveLength(1);
    expectPaired(session.history());
  });

  it('a final answer that reaches the limit still succeeds', async () => {
    const provider = new ScriptedProvider([{ text: 'done', usage: usage(900, 300) }]);
    const result = await new Engine({ provider, gate: new AllowAllGate(), maxSessionTokens: 1000 }).run('go', {
      session: newSession(),
    });
    expect(result).toMatchObject({ status: 'completed', finalText: 'done' });
  });

  it('the session budget counts earlier runs; ≤ 0 means unlimited', async () => {
    const full = new MemorySession({ workDir: '/w', usage: { promptTokens: 500, completionTokens: 500, totalTokens: 1000 } });
    const blocked = new ScriptedProvider([{ text: 'x' }]);
    expect((await new Engine({ provider: blocked, gate: new AllowAllGate(), maxSessionTokens: 1000 }).run('go', { session: full })).error?.code).toBe(
      'session_token_budget_exceeded',
    );
    expect(blocked.calls).toHaveLength(0);
    const unlimited = new ScriptedProvider([{ text: 'x' }]);
    expect((await new Engine({ provider: unlimited, gate: new AllowAllGate(), maxSessionTokens: 0 }).run('go', { session: full })).status).toBe(
      'completed',
    );
  });

  it('the run budget counts only this run: 100 tokens already in the session, run limit 10', async () => {
    const session = new MemorySession({ workDir: '/w', usage: { promptTokens: 90, completionTokens: 10, totalTokens: 100 } });
    const provider = new ScriptedProvider([
      { toolCalls: [readCall], usage: usage(6, 2) },
      { toolCalls: [readCall], usage: usage(1, 1) },
      { text: 'never asked' },
    ]);
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])], maxRunTokens: 10 }).run('go', {
      session,
    });
    expect(result.error?.code).toBe('run_token_budget_exceeded');
    expect(result.error?.message).toBe('run token budget exceeded: used 10 tokens of 10 tokens');
    expect(provider.calls).toHaveLength(2);
    expect(result.usage.totalTokens).toBe(10);
    expect(session.usage().totalTokens).toBe(110);
  });
});

describe('tool time budget (BUD-4)', () => {
  it('a stuck tool is aborted when the budget runs out; no further model call; history paired', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'stuck', name: 'block', arguments: { label: 'stuck' } }] },
      { text: 'never asked' },
    ]);
    const session = newSession();
    const time = manualTime();
    const log: string[] = [];
    const run = watch(
      new Engine({
        provider,
        gate: new AllowAllGate(),
        tools: [blockingTool(log)],
        toolTimeBudgetMs: 100,
        now: time.now,
        setTimer: time.setTimer,
      }).run('go', { session }),
    );
    while (!log.includes('start stuck')) await settleMicrotasks();
    expect(time.armed()).toEqual([100]);
    // Not a moment before the budget is used up…
    time.advance(99);
    await settleMicrotasks();
    expect(run.state.settled).toBe(false);
    expect(log).toEqual(['start stuck']);
    // …and at once when it is.
    time.advance(1);
    const result = await run.done;
    expect(log).toEqual(['start stuck', 'aborted stuck']);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('tool_time_budget_exceeded');
    expect(result.error?.message).toBe('tool time budget exceeded: used 100 ms of 100 ms');
    expect(result.toolWallMs).toBe(100);
    expect(provider.calls).toHaveLength(1);
    expect(session.history().at(-1)).toEqual({ role: 'tool', toolCallId: 'stuck', content: canceledObservationText, isError: true });
    expect(time.armed()).toEqual([]);
  });

  describe('on fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('counts a parallel wave once and excludes approval waits', async () => {
      const slowGate: ApprovalGate = {
        check: async (_request, { signal }) => {
          await sleep(150, signal);
          return { allowed: true };
        },
      };
      const provider = new ScriptedProvider([
        {
          toolCalls: [
            { name: 'wait', arguments: { ms: 60, label: 'a' } },
            { name: 'wait', arguments: { ms: 60, label: 'b' } },
            { name: 'wait', arguments: { ms: 60, label: 'c' } },
          ],
        },
        { text: 'done' },
      ]);
      // Three 60 ms tools in parallel after 150 ms approvals: 60 ms of tool time, under 150.
      const running = new Engine({ provider, gate: slowGate, tools: [waitTool()], toolTimeBudgetMs: 150 }).run('go', {
        session: newSession(),
      });
      await vi.runAllTimersAsync();
      const result = await running;
      expect(result.status).toBe('completed');
      expect(result.toolWallMs).toBe(60);
    });
  });
});

describe('subagents (ENG-9, BUD-3)', () => {
  function spawning(count: number) {
    return { toolCalls: Array.from({ length: count }, (_, index) => ({ id: `spawn${index}`, name: 'spawn_subagent', arguments: { task: `task ${index}` } })) };
  }

  it('runs a child loop with the same tools and returns its final answer', async () => {
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      spawning(1),
      // The child: one tool call, then its answer.
      (request) => {
        // Its own system prompt, then its task alone: it does not see the parent's conversation.
        expect(request.messages[0]?.content).toMatch(/^You are a helper of claw/);
        expect(request.messages.slice(1)).toEqual([{ role: 'user', content: 'task 0' }]);
        expect(request.tools?.map((tool) => tool.name)).toEqual(['record']);
        return { toolCalls: [{ name: 'record', arguments: { text: 'from child' } }], usage: usage(30, 5) };
      },
      { text: 'child done', usage: usage(40, 5) },
      // The parent again.
      (request) => {
        expect(request.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'spawn0', content: 'child done' });
        return { text: 'parent done', usage: usage(50, 5) };
      },
    ]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)], subagents: true }).run('delegate', {
      session,
    });
    expect(result).toMatchObject({ status: 'completed', finalText: 'parent done', subagents: 1 });
    expect(effects).toEqual(['from child']);
    // The parent's first call offered spawn_subagent; the child's tokens went into the parent session and run.
    expect(provider.calls[0]?.request.tools?.map((tool) => tool.name)).toEqual(['record', 'spawn_subagent']);
    expect(session.usage().totalTokens).toBe(135);
    expect(result.usage.totalTokens).toBe(135);
    // The child's conversation is not in the parent's history.
    expect(session.history().map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('a second spawn over maxSubagents = 1 fails without calling the model, and a new run resets the count', async () => {
    const provider = new ScriptedProvider([
      spawning(1),
      { text: 'first child' },
      spawning(1),
      { text: 'parent gives up' },
      // Second run: a spawn is allowed again.
      spawning(1),
      { text: 'child of run two' },
      { text: 'run two done' },
    ]);
    const engine = new Engine({ provider, gate: new AllowAllGate(), subagents: true, maxSubagents: 1 });
    const session = newSession();
    const first = await engine.run('one', { session });
    expect(first.status).toBe('completed');
    const refused = session.history().filter((message) => message.role === 'tool')[1];
    expect(refused?.content).toMatch(/^Error: spawn_subagent failed: subagent budget exceeded: used 1 spawns of 1 spawns/);
    expect(provider.calls).toHaveLength(4);
    const second = await engine.run('two', { session });
    expect(second).toMatchObject({ status: 'completed', finalText: 'run two done', subagents: 1 });
  });

  it('a subagent started by a parent fills the parent\'s run budget', async () => {
    const provider = new ScriptedProvider([
      { ...spawning(1), usage: usage(5, 5) },
      { toolCalls: [readCall], usage: usage(10, 10) },
      { text: 'never asked: the shared run budget is spent' },
      { text: 'never asked either' },
    ]);
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])], subagents: true, maxRunTokens: 25 }).run('go', {
      session: newSession(),
    });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('run_token_budget_exceeded');
    expect(provider.calls).toHaveLength(2);
  });

  it('runs on its own in a temporary session, at most 10 model calls', async () => {
    const provider = new ScriptedProvider(Array.from({ length: 12 }, () => ({ toolCalls: [readCall] })));
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])] });
    const result = await engine.runSubagent('loop', { workDir: '/w' });
    expect(result.status).toBe('max_turns');
    expect(provider.calls).toHaveLength(10);
  });

  it('is offered only when enabled, and its name is reserved', () => {
    const spawnLike = defineTool({ name: 'spawn_subagent', description: '', risk: 'safe', schema: z.object({}), execute: async () => '' });
    expect(() => new Engine({ provider: new ScriptedProvider([]), gate: new AllowAllGate(), tools: [spawnLike], subagents: true })).toThrow(/reserved/);
  });
});

describe('cost (BUD-5)', () => {
  it('prices calls per model, keeps session and run cost, and budgets it', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [readCall], usage: usage(1_000_000, 100_000) },
      { text: 'never asked' },
    ]);
    const session = newSession();
    const result = await new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [recordTool([])],
      model: 'gpt-4o-mini-2024-07-18',
      prices: { scripted: { inputPerMillion: 1, outputPerMillion: 10 } },
      maxRunCostUsd: 1.5,
    }).run('go', { session });
    // The scripted provider answers as model "scripted": 1 × $1 + 0.1 × $10 = $2.
    expect(result.cost).toEqual({ usd: 2, unpricedCalls: 0 });
    expect(session.cost()).toEqual({ usd: 2, unpricedCalls: 0 });
    expect(result.error?.code).toBe('run_cost_budget_exceeded');
    expect(provider.calls).toHaveLength(1);
  });

  it('an unknown model has unknown cost, never a made-up zero', async () => {
    const provider = new ScriptedProvider([{ text: 'hi', usage: usage(10, 10) }]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('go', { session });
    expect(result.cost).toEqual({ usd: 0, unpricedCalls: 1 });
    expect(session.cost().unpricedCalls).toBe(1);
  });

  it('matches dated model names to their base price, never a shorter model to a longer one', () => {
    expect(priceOf(defaultPrices, 'gpt-4o-2024-08-06')).toBe(defaultPrices['gpt-4o']);
    expect(priceOf(defaultPrices, 'gpt-4o-mini-2024-07-18')).toBe(defaultPrices['gpt-4o-mini']);
    expect(priceOf(defaultPrices, 'gpt-4')).toBeUndefined();
    expect(priceOf(defaultPrices, 'llama-3')).toBeUndefined();
  });
});
