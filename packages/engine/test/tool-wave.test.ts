import { ClawError, type Reporter, type Tool, type ToolCall } from '@claw/core';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { watchUnhandledRejections } from '@claw/testing/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine, canceledObservationText } from '../src/index.js';
import {
  blockingTool,
  expectPaired,
  newSession,
  recordTool,
  waitTool,
} from './helpers.js';

/** Resolves once `condition` holds (polled on timers, so tools and the wave get to run). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** The Observations of the run's one wave, as `id: content`. */
function observations(session: ReturnType<typeof newSession>): string[] {
  return session
    .history()
    .filter((message) => message.role === 'tool')
    .map((message) => `${message.role === 'tool' ? message.toolCallId : ''}: ${message.content}`);
}

const canceled = canceledObservationText;

/** A reporter that holds back the report of one call until `ready` says so. */
function holdingReporter(id: string, ready: () => boolean): Reporter {
  return {
    onToolCall: async (call: ToolCall) => {
      if (call.id === id) await until(ready);
    },
  };
}

/**
 * A failure of the wave's own machinery (the session's tool journal, a tool's argument check)
 * stops the wave like a reporter failure does: siblings are aborted, finished calls keep their
 * results, and the run fails with the error once every call has its Observation.
 */
describe('tool wave failures (ENG-2, ENG-5, SES-8)', () => {
  let unhandled: ReturnType<typeof watchUnhandledRejections>;
  beforeEach(() => {
    unhandled = watchUnhandledRejections();
  });
  afterEach(async () => {
    expect(await unhandled.stop()).toEqual([]);
  });

  it('toolFinished fails: the running sibling is aborted, a queued call never starts, the finished call keeps its result', async () => {
    const log: string[] = [];
    const effects: string[] = [];
    const journal: string[] = [];
    const journalError = new Error('disk full');
    const session = newSession();
    Object.assign(session, {
      toolStarted: async (call: ToolCall) => void journal.push(`started ${call.id}`),
      toolFinished: async (id: string) => {
        journal.push(`finished ${id}`);
        if (id === 'fast') throw journalError;
      },
    });
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'slow', name: 'block', arguments: { label: 'slow' } },
          { id: 'fast', name: 'wait', arguments: { ms: 0, label: 'fast' } },
          { id: 'queued', name: 'record', arguments: { text: 'queued' } },
        ],
      },
      { text: 'never asked' },
    ]);
    const engine = new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [blockingTool(log), waitTool(log), recordTool(effects)],
      toolConcurrency: 2,
    });
    const result = await engine.run('go', { session });

    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ClawError);
    expect(result.error?.code).toBe('tool_journal_failed');
    expect(result.error?.cause).toBe(journalError);
    expect(result.error?.message).toMatch(/could not record .*fast.*disk full/);
    expect(log.sort()).toEqual(['aborted slow', 'end fast', 'start fast', 'start slow']);
    // The queued call never started: nothing ran, nothing was journaled for it.
    expect(effects).toEqual([]);
    expect(journal).not.toContain('started queued');
    expect(observations(session)).toEqual([
      `slow: ${canceled}`,
      'fast: waited 0 ms for fast',
      `queued: ${canceled}`,
    ]);
    expectPaired(session.history());
    expect(provider.calls).toHaveLength(1);
  });

  it('toolStarted fails: that tool does not run, the running sibling is aborted, a sibling that finished keeps its result', async () => {
    const log: string[] = [];
    const effects: string[] = [];
    const journalError = new Error('disk full');
    const session = newSession();
    Object.assign(session, {
      toolStarted: async (call: ToolCall) => {
        if (call.id === 'bad') throw journalError;
      },
    });
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'slow', name: 'block', arguments: { label: 'slow' } },
          { id: 'fast', name: 'wait', arguments: { ms: 0, label: 'fast' } },
          { id: 'bad', name: 'record', arguments: { text: 'side effect' } },
        ],
      },
      { text: 'never asked' },
    ]);
    const result = await new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [blockingTool(log), waitTool(log), recordTool(effects)],
    }).run('go', {
      session,
      // "bad" starts only once the other two are under way and "fast" is done.
      reporter: holdingReporter('bad', () => log.includes('start slow') && log.includes('end fast')),
    });

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('tool_journal_failed');
    expect(result.error?.cause).toBe(journalError);
    expect(effects).toEqual([]);
    expect(log).toContain('aborted slow');
    const [slow, fast, bad] = observations(session);
    expect(slow).toBe(`slow: ${canceled}`);
    expect(fast).toBe('fast: waited 0 ms for fast');
    expect(bad).toMatch(/^bad: Error: record failed: disk full/);
    expectPaired(session.history());
    expect(provider.calls).toHaveLength(1);
  });

  it('a tool whose parseArguments throws stops the wave: the running sibling is aborted, the run fails with the error as cause', async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    const bug = new Error('parser bug');
    const broken: Tool = {
      definition: { name: 'broken', description: 'Its argument check throws.', parameters: { type: 'object' } },
      risk: 'safe',
      parseArguments: () => {
        throw bug;
      },
      execute: async () => 'never',
    };
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'slow', name: 'block', arguments: { label: 'slow' } },
          { id: 'broken', name: 'broken', arguments: {} },
        ],
      },
      { text: 'never asked' },
    ]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [blockingTool(log, signals), broken] }).run('go', {
      session,
      reporter: holdingReporter('broken', () => log.includes('start slow')),
    });

    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ClawError);
    expect(result.error?.code).toBe('tool_arguments_check_failed');
    expect(result.error?.cause).toBe(bug);
    expect(signals[0]?.aborted).toBe(true);
    expect(log).toEqual(['start slow', 'aborted slow']);
    const [slow, brokenObservation] = observations(session);
    expect(slow).toBe(`slow: ${canceled}`);
    expect(brokenObservation).toMatch(/^broken: Error: .*parser bug/);
    expectPaired(session.history());
    expect(provider.calls).toHaveLength(1);
  });

  it('the user aborts after a journal failure: the outcome is canceled, history still paired', async () => {
    const controller = new AbortController();
    const session = newSession();
    Object.assign(session, {
      toolStarted: async () => {
        controller.abort();
        throw new Error('disk full');
      },
    });
    const effects: string[] = [];
    const provider = new ScriptedProvider([{ toolCalls: [{ id: 'c1', name: 'record', arguments: { text: 'x' } }] }]);
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      signal: controller.signal,
    });
    expect(result.status).toBe('canceled');
    expect(effects).toEqual([]);
    expectPaired(session.history());
  });
});
