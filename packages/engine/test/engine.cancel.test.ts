import { getEventListeners } from 'node:events';
import type { CallOptions, ModelRequest, Provider, StreamEvent } from '@claw/core';
import { AllowAllGate, RecordingReporter, ScriptedProvider } from '@claw/testing';
import { describe, expect, it, vi } from 'vitest';
import { Engine, ReporterError, canceledObservationText } from '../src/index.js';
import { expectPaired, newSession, recordTool, waitTool, watch } from './helpers.js';

describe('Engine.run: cancellation (ENG-5, ENG-6)', () => {
  it('abort during the model stream: canceled, no half reply in history, no event after the abort', async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([
      { textChunks: ['one ', 'two ', 'three'], chunkDelayMs: 50, toolCalls: [{ name: 'record', arguments: { text: 'x' } }] },
    ]);
    const reporter = new RecordingReporter({
      onEvent: (event) => {
        if (event.type === 'text_delta') controller.abort(new Error('Ctrl-C'));
      },
    });
    const session = newSession();
    const effects: string[] = [];
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter,
      signal: controller.signal,
    });
    expect(result.status).toBe('canceled');
    expect(result).not.toHaveProperty('error');
    expect(reporter.events.filter((event) => event.type === 'text_delta')).toHaveLength(1);
    expect(session.history()).toEqual([{ role: 'user', content: 'go' }]);
    expect(effects).toEqual([]);
  });

  it('abort while two tools run: both get "tool call canceled" at once, outcome canceled, nothing after', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const controller = new AbortController();
      const log: string[] = [];
      const provider = new ScriptedProvider([
        {
          toolCalls: [
            { id: 'a', name: 'wait', arguments: { ms: 60_000, label: 'a' } },
            { id: 'b', name: 'wait', arguments: { ms: 60_000, label: 'b' } },
          ],
        },
        { text: 'never asked' },
      ]);
      const session = newSession();
      const running = watch(
        new Engine({ provider, gate: new AllowAllGate(), tools: [waitTool(log)] }).run('go', {
          session,
          signal: controller.signal,
        }),
      );
      // Time stands still: only promise callbacks run until the abort.
      while (log.length < 2) await vi.advanceTimersByTimeAsync(0);
      const started = performance.now();
      controller.abort();
      await vi.advanceTimersByTimeAsync(0);
      // Settled without the clock moving: nothing waited out the tools' 60 s.
      expect(running.state.settled).toBe(true);
      expect(performance.now() - started).toBe(0);
      const result = await running.done;
      expect(result.status).toBe('canceled');
      expect(log).toEqual(['start a', 'start b']);
      const history = session.history();
      expect(history.slice(2)).toEqual([
        { role: 'tool', toolCallId: 'a', content: canceledObservationText, isError: true },
        { role: 'tool', toolCallId: 'b', content: canceledObservationText, isError: true },
      ]);
      expect(canceledObservationText).toBe('tool call canceled');
      expectPaired(history);
      expect(provider.calls).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a tool that finished before the abort keeps its real result', async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'fast', name: 'wait', arguments: { ms: 0, label: 'fast' } },
          { id: 'slow', name: 'wait', arguments: { ms: 60_000, label: 'slow' } },
        ],
      },
    ]);
    const session = newSession();
    const running = new Engine({ provider, gate: new AllowAllGate(), tools: [waitTool(log)] }).run('go', {
      session,
      signal: controller.signal,
    });
    while (!log.includes('end fast') || !log.includes('start slow')) await new Promise((resolve) => setTimeout(resolve, 2));
    controller.abort();
    expect((await running).status).toBe('canceled');
    expect(session.history().slice(2).map((message) => message.content)).toEqual([
      'waited 0 ms for fast',
      canceledObservationText,
    ]);
  });

  it('an already aborted signal appends nothing and calls no model', async () => {
    const provider = new ScriptedProvider([{ text: 'x' }]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('go', {
      session,
      signal: AbortSignal.abort(),
    });
    expect(result.status).toBe('canceled');
    expect(session.history()).toEqual([]);
    expect(provider.calls).toEqual([]);
  });

  it('closes the model stream when the call returns early (reporter failure mid-stream)', async () => {
    let closed = false;
    let produced = 0;
    const provider: Provider = {
      name: 'endless',
      generate: () => Promise.reject(new Error('unused')),
      async *stream(_request: ModelRequest, _options?: CallOptions): AsyncGenerator<StreamEvent> {
        try {
          for (;;) {
            produced += 1;
            yield { type: 'text_delta', delta: 'x' };
          }
        } finally {
          closed = true;
        }
      },
    };
    const reporter = new RecordingReporter({ failOn: { type: 'text_delta', nth: 3 } });
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('go', {
      session: newSession(),
      reporter,
    });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ReporterError);
    expect(closed).toBe(true);
    // The stream is pulled apart from the reporter (RT-3), so it may have run a few events ahead
    // of the failing report; what counts is that nothing produces once the call is over, and no
    // delta after the failing one was reported.
    const producedAtEnd = produced;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(produced).toBe(producedAtEnd);
    expect(reporter.events.filter((event) => event.type === 'text_delta')).toHaveLength(2);
  });
});

describe('Engine.run: reporter failures (ENG-7)', () => {
  it('onToolCall fails: that tool never runs, later ones neither, every call paired, run failed', async () => {
    const effects: string[] = [];
    const failure = new Error('socket closed');
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'first', name: 'record', arguments: { text: 'first' } },
          { id: 'second', name: 'record', arguments: { text: 'second' } },
        ],
      },
    ]);
    const session = newSession();
    const reporter = new RecordingReporter({ failOn: { type: 'tool_call', nth: 2, error: failure } });
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter,
    });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ReporterError);
    expect(result.error?.code).toBe('reporter_failed');
    expect(result.error?.cause).toBe(failure);
    expect(effects).not.toContain('second');
    const observations = session.history().filter((message) => message.role === 'tool');
    expect(observations.map((message) => message.toolCallId)).toEqual(['first', 'second']);
    expect(observations[1]?.content).toBe(canceledObservationText);
    expectPaired(session.history());
    expect(provider.calls).toHaveLength(1);
  });

  it('onToolCall fails on the first call: nothing executes at all', async () => {
    const effects: string[] = [];
    const provider = new ScriptedProvider([{ toolCalls: [{ name: 'record', arguments: { text: 'side effect' } }] }]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter: new RecordingReporter({ failOn: { type: 'tool_call' } }),
    });
    expect(result.status).toBe('failed');
    expect(effects).toEqual([]);
    expectPaired(session.history());
  });

  it('the reporter fails while the user aborts: the outcome is canceled', async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([{ toolCalls: [{ name: 'record', arguments: { text: 'x' } }] }]);
    const session = newSession();
    const effects: string[] = [];
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      signal: controller.signal,
      reporter: {
        onToolCall: async () => {
          controller.abort();
          throw new Error('connection lost');
        },
      },
    });
    expect(result.status).toBe('canceled');
    expect(effects).toEqual([]);
    expectPaired(session.history());
  });

  it('onMessage fails right after the assistant message: its calls get canceled Observations', async () => {
    const effects: string[] = [];
    const provider = new ScriptedProvider([{ toolCalls: [{ id: 'c1', name: 'record', arguments: { text: 'x' } }] }]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter: new RecordingReporter({ failOn: { type: 'message', nth: 2 } }),
    });
    expect(result.status).toBe('failed');
    expect(effects).toEqual([]);
    expect(session.history().at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', content: canceledObservationText, isError: true });
    expectPaired(session.history());
  });

  it('a failing model call fails the run with the provider\'s error', async () => {
    const failure = new Error('HTTP 401');
    const provider = new ScriptedProvider([{ error: failure }]);
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('go', { session: newSession() });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('run_failed');
    expect(result.error?.cause).toBe(failure);
  });
});

describe('Engine.run: abort listeners', () => {
  it('a long run leaves no listener on its signal', async () => {
    const controller = new AbortController();
    const call = { name: 'wait', arguments: { ms: 0, label: 'x' } };
    const provider = new ScriptedProvider([
      ...Array.from({ length: 15 }, () => ({ toolCalls: [call, call] })),
      { text: 'done' },
    ]);
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [waitTool()] }).run('go', {
      session: newSession(),
      signal: controller.signal,
    });
    expect(result.status).toBe('completed');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
