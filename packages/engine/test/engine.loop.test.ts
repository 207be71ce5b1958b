import type { Tool } from '@claw/core';
import { SessionStore } from '@claw/session-store';
import { FlushControlledLog } from '@claw/session-store/testing';
import { AllowAllGate, DenyAllGate, RecordingReporter, ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine } from '../src/index.js';
import { expectPaired, newSession, recordTool, throwingTool, waitTool } from './helpers.js';

describe('Engine.run: the loop (ENG-1, ENG-2)', () => {
  it('runs three turns with two parallel tool calls each, in order and paired', async () => {
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      {
        textChunks: ['Recording ', 'a and b.'],
        toolCalls: [
          { id: 't1a', name: 'record', arguments: { text: 'a' } },
          { id: 't1b', name: 'record', arguments: { text: 'b' } },
        ],
        usage: { promptTokens: 10, completionTokens: 3 },
      },
      {
        toolCalls: [
          { id: 't2a', name: 'record', arguments: { text: 'c' } },
          { id: 't2b', name: 'record', arguments: { text: 'd' } },
        ],
        usage: { promptTokens: 20, completionTokens: 4 },
      },
      { textChunks: ['All ', 'done.'], usage: { promptTokens: 30, completionTokens: 5 } },
    ]);
    const session = newSession();
    const reporter = new RecordingReporter();
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] });

    const result = await engine.run('record four things', { session, reporter });

    expect(result).toMatchObject({ status: 'completed', finalText: 'All done.', turns: 3 });
    expect(result.usage).toEqual({ promptTokens: 60, completionTokens: 12, totalTokens: 72 });
    expect(session.usage()).toEqual(result.usage);
    expect(effects.sort()).toEqual(['a', 'b', 'c', 'd']);
    const history = session.history();
    expect(history.map((message) => (message.role === 'tool' ? `tool:${message.toolCallId}` : message.role))).toEqual([
      'user',
      'assistant',
      'tool:t1a',
      'tool:t1b',
      'assistant',
      'tool:t2a',
      'tool:t2b',
      'assistant',
    ]);
    expect(history[2]).toEqual({ role: 'tool', toolCallId: 't1a', content: 'recorded a' });
    expectPaired(history);

    // Reporter order: per turn, thinking → deltas → text → message → calls/results → observations.
    const secondThinking = reporter.types.indexOf('thinking', reporter.types.indexOf('thinking') + 1);
    const turnOne = reporter.types.slice(0, secondThinking);
    expect(turnOne.slice(0, 6)).toEqual([
      'message', // the user's prompt
      'thinking',
      'text_delta',
      'text_delta',
      'text_completed',
      'message', // the assistant message
    ]);
    const callsAndResults = turnOne.slice(6, -2);
    expect(callsAndResults.filter((type) => type === 'tool_call')).toHaveLength(2);
    expect(callsAndResults.filter((type) => type === 'tool_result')).toHaveLength(2);
    // Each result comes after its own call.
    const order = reporter.events
      .filter((event) => event.type === 'tool_call' || event.type === 'tool_result')
      .map((event) => (event.type === 'tool_call' ? `call:${event.call.id}` : `result:${event.result.toolCallId}`));
    for (const id of ['t1a', 't1b', 't2a', 't2b']) {
      expect(order.indexOf(`call:${id}`)).toBeLessThan(order.indexOf(`result:${id}`));
    }
    expect(turnOne.slice(-2)).toEqual(['message', 'message']); // the two Observations
    expect(reporter.types.at(-1)).toBe('message');
    expect(reporter.events.filter((event) => event.type === 'thinking').map((event) => event.turn)).toEqual([1, 2, 3]);

    // The model saw the tools and, on turn 2, the whole first exchange.
    expect(provider.calls[0]?.request.tools?.map((tool) => tool.name)).toEqual(['record']);
    // The system prompt, then the prompt, the reply with its two calls, and their two results.
    expect(provider.calls[1]?.request.messages).toHaveLength(5);
    expect(provider.calls.map((call) => call.mode)).toEqual(['stream', 'stream', 'stream']);
  });

  it('works with a provider that cannot stream', async () => {
    const provider = new ScriptedProvider([{ text: 'plain answer' }], { streaming: false });
    const reporter = new RecordingReporter();
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('hi', {
      session: newSession(),
      reporter,
    });
    expect(result).toMatchObject({ status: 'completed', finalText: 'plain answer' });
    expect(provider.calls[0]?.mode).toBe('generate');
    expect(reporter.types).toEqual(['message', 'thinking', 'text_completed', 'message']);
    expect(provider.calls[0]?.request).not.toHaveProperty('tools');
  });

  it('sends the system prompt first, without storing it in the session', async () => {
    const provider = new ScriptedProvider([{ text: 'ok' }]);
    const session = newSession();
    await new Engine({ provider, gate: new AllowAllGate(), systemPrompt: 'You are claw.' }).run('hi', { session });
    expect(provider.calls[0]?.request.messages[0]).toEqual({ role: 'system', content: 'You are claw.' });
    expect(session.history()[0]).toEqual({ role: 'user', content: 'hi' });
  });

  it('stops at maxTurns with a clear outcome, history still paired', async () => {
    const call = { name: 'record', arguments: { text: 'again' } };
    const provider = new ScriptedProvider([{ toolCalls: [call] }, { toolCalls: [call] }, { toolCalls: [call] }]);
    const session = newSession();
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])], maxTurns: 2 }).run(
      'loop forever',
      { session },
    );
    expect(result.status).toBe('max_turns');
    expect(result.error?.code).toBe('max_turns_reached');
    expect(result.error?.message).toMatch(/max turns reached: the run made 2 model calls/);
    expect(provider.calls).toHaveLength(2);
    expectPaired(session.history());
  });

  it('refuses nonsense settings', () => {
    const provider = new ScriptedProvider([]);
    expect(() => new Engine({ provider, gate: new AllowAllGate(), maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => new Engine({ provider, gate: new AllowAllGate(), toolConcurrency: 1.5 })).toThrow(/toolConcurrency/);
  });
});

describe('Engine.run: tool failures become Observations (ENG-3, ENG-4)', () => {
  it('unknown tool, bad JSON, schema-invalid arguments and a throwing tool: error Observations with hints, loop goes on', async () => {
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'u', name: 'teleport', arguments: {} },
          { id: 'j', name: 'record', arguments: '{"text": "unterminated' },
          { id: 's', name: 'record', arguments: { text: 42 } },
          { id: 'x', name: 'explode', arguments: {} },
          { id: 'ok', name: 'record', arguments: { text: 'fine' } },
        ],
      },
      { text: 'recovered' },
    ]);
    const session = newSession();
    const result = await new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [recordTool(effects), throwingTool()],
    }).run('try things', { session });

    expect(result).toMatchObject({ status: 'completed', finalText: 'recovered' });
    expect(effects).toEqual(['fine']);
    const observations = session.history().filter((message) => message.role === 'tool');
    const byId = Object.fromEntries(observations.map((message) => [message.toolCallId, message]));
    expect(byId.u?.content).toBe('Error: unknown tool "teleport"\nHint: call one of the available tools: record, explode');
    expect(byId.j?.content).toMatch(/^Error: the arguments of record are not valid JSON \(.+\)\nHint: send the arguments as one JSON object/);
    expect(byId.s?.content).toMatch(/^Error: invalid arguments for record: .*text.*\nHint: fix the arguments/s);
    expect(byId.x?.content).toBe(
      'Error: explode failed: the disk is on fire\nHint: read the error, fix the cause (paths are relative to the workspace), and try again or take another approach',
    );
    for (const id of ['u', 'j', 's', 'x']) expect(byId[id]?.isError).toBe(true);
    expect(byId.ok).toEqual({ role: 'tool', toolCallId: 'ok', content: 'recorded fine' });
    expectPaired(session.history());
    // The second model call saw all five Observations.
    expect(provider.calls[1]?.request.messages.filter((message) => message.role === 'tool')).toHaveLength(5);
  });

  it('a denied call is not executed and becomes an error Observation', async () => {
    const effects: string[] = [];
    const gate = new DenyAllGate('the user said no');
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'd', name: 'record', arguments: { text: 'secret' } }] },
      { text: 'ok, I will not' },
    ]);
    const session = newSession();
    const result = await new Engine({ provider, gate, tools: [recordTool(effects)] }).run('write', { session });
    expect(result.status).toBe('completed');
    expect(effects).toEqual([]);
    expect(session.history()[2]).toEqual({
      role: 'tool',
      toolCallId: 'd',
      content: 'Error: permission denied: the user said no\nHint: do not repeat this call; choose another approach or ask the user for what you need',
      isError: true,
    });
    expect(gate.requests[0]).toMatchObject({
      sessionId: 'test-session',
      workDir: '/virtual/workspace',
      risk: 'mutating',
      arguments: { text: 'secret' },
      toolCall: { id: 'd', name: 'record' },
    });
  });

  it('validates arguments before asking the gate', async () => {
    const gate = new AllowAllGate();
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'record', arguments: { wrong: true } }] },
      { text: 'done' },
    ]);
    await new Engine({ provider, gate, tools: [recordTool([])] }).run('x', { session: newSession() });
    expect(gate.requests).toEqual([]);
  });
});

describe('Engine.run: parallel tool waves (ENG-2)', () => {
  describe('on fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('runs the calls of one reply in parallel: two 200 ms tools take 200 ms, not 400', async () => {
      const provider = new ScriptedProvider([
        {
          toolCalls: [
            { name: 'wait', arguments: { ms: 200, label: 'a' } },
            { name: 'wait', arguments: { ms: 200, label: 'b' } },
          ],
        },
        { text: 'done' },
      ]);
      const started = performance.now();
      let finished = Number.NaN;
      const running = new Engine({ provider, gate: new AllowAllGate(), tools: [waitTool()] })
        .run('x', { session: newSession() })
        .then((result) => {
          finished = performance.now();
          return result;
        });
      await vi.runAllTimersAsync();
      const result = await running;
      expect(result.status).toBe('completed');
      expect(finished - started).toBe(200);
      // Wall time counts the overlap once.
      expect(result.toolWallMs).toBe(200);
    });
  });

  it('never runs more calls at once than the concurrency limit', async () => {
    let running = 0;
    let peak = 0;
    const log: string[] = [];
    const tool = waitTool(log);
    const counting = {
      ...tool,
      async execute(args: unknown, context: Parameters<typeof tool.execute>[1]) {
        running += 1;
        peak = Math.max(peak, running);
        try {
          return await tool.execute(args, context);
        } finally {
          running -= 1;
        }
      },
    };
    const provider = new ScriptedProvider([
      { toolCalls: Array.from({ length: 6 }, (_, index) => ({ name: 'wait', arguments: { ms: 20, label: String(index) } })) },
      { text: 'done' },
    ]);
    const session = newSession();
    await new Engine({ provider, gate: new AllowAllGate(), tools: [counting], toolConcurrency: 2 }).run('x', { session });
    expect(peak).toBe(2);
    expect(log.filter((entry) => entry.startsWith('end'))).toHaveLength(6);
    // Completion order may differ; the Observations keep call order.
    expect(session.history().filter((message) => message.role === 'tool').map((message) => message.content)).toEqual(
      Array.from({ length: 6 }, (_, index) => `waited 20 ms for ${index}`),
    );
  });
});

describe('Engine.run: session hooks (ENG-10, SES-8)', () => {
  it('calls beforeRun first, and records each tool\'s start before it runs and its end after', async () => {
    const log: string[] = [];
    const session = newSession();
    Object.assign(session, {
      beforeRun: async () => void log.push(`beforeRun (history ${session.history().length})`),
      toolStarted: async (call: { id: string }) => void log.push(`started ${call.id}`),
      toolFinished: async (id: string) => void log.push(`finished ${id}`),
    });
    const effects: string[] = [];
    const tool = recordTool(effects);
    const observed = { ...tool, execute: async (args: unknown, context: Parameters<typeof tool.execute>[1]) => {
      log.push('executing');
      return tool.execute(args, context);
    } };
    const provider = new ScriptedProvider([{ toolCalls: [{ id: 'c1', name: 'record', arguments: { text: 'x' } }] }, { text: 'done' }]);
    await new Engine({ provider, gate: new AllowAllGate(), tools: [observed] }).run('go', { session });
    expect(log).toEqual(['beforeRun (history 0)', 'started c1', 'executing', 'finished c1']);
  });

  it('a tool whose start cannot be recorded does not run', async () => {
    const session = newSession();
    Object.assign(session, { toolStarted: async () => Promise.reject(new Error('disk full')) });
    const effects: string[] = [];
    const provider = new ScriptedProvider([{ toolCalls: [{ id: 'c1', name: 'record', arguments: { text: 'x' } }] }, { text: 'done' }]);
    await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', { session });
    expect(effects).toEqual([]);
    expect(session.history()[2]?.content).toMatch(/^Error: record failed: disk full/);
  });

  it('a read-only tool starts once its intent is written; one with effects waits for the flush', async () => {
    const log = new FlushControlledLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir: '/work/space' });
    const ran: string[] = [];
    const tool = (name: string, readOnly: boolean): Tool => ({
      definition: { name, description: name, parameters: { type: 'object' } },
      risk: readOnly ? 'safe' : 'mutating',
      ...(readOnly ? { readOnly } : {}),
      execute: async () => {
        ran.push(`${name}, flushes held: ${log.heldFlushes.length}`);
        return `${name} done`;
      },
    });
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'c1', name: 'look', arguments: {} }, { id: 'c2', name: 'change', arguments: {} }] },
      { text: 'done' },
    ]);
    const engine = new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [tool('look', true), tool('change', false)],
    });
    const run = engine.run('go', { session });
    while (ran.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // The two intents went out in one write with one flush, which the log still holds.
    expect(ran).toEqual(['look, flushes held: 1']);
    log.releaseFlushes();
    expect((await run).status).toBe('completed');
    expect(ran).toEqual(['look, flushes held: 1', 'change, flushes held: 0']);
    const stored = await log.load('s');
    const journal = stored?.records.filter((record) => record.change.type.startsWith('tool_'));
    expect(journal?.map((record) => record.change.type)).toEqual([
      'tool_started', 'tool_started', 'tool_finished', 'tool_finished',
    ]);
    await store.close();
  });
});

describe('onToolStarted', () => {
  it('is told right before each allowed call runs, never for a denied one', async () => {
    const effects: string[] = [];
    const started: string[] = [];
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'a', name: 'record', arguments: { text: 'x' } }, { id: 'b', name: 'record', arguments: { text: 'y' } }] },
      { text: 'done' },
    ]);
    const gate = {
      check: async (request: { toolCall: { id: string } }) =>
        request.toolCall.id === 'a' ? { allowed: true as const } : { allowed: false as const, reason: 'no' },
    };
    await new Engine({ provider, gate, tools: [recordTool(effects)] }).run('go', {
      session: newSession(),
      reporter: { onToolStarted: (call) => void started.push(`${call.id}:${effects.length}`) },
    });
    // Told before it ran (nothing recorded yet), and only for the allowed call.
    expect(started).toEqual(['a:0']);
    expect(effects).toEqual(['x']);
  });
});
