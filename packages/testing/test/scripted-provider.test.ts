import { ClawError, type CallOptions, type StreamEvent } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, splitIntoPieces } from '../src/index.js';

const request = { messages: [{ role: 'user' as const, content: 'go' }] };

function streamOf(provider: ScriptedProvider, options: CallOptions = {}) {
  if (provider.stream === undefined) throw new Error('the provider cannot stream');
  return provider.stream(request, options);
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('ScriptedProvider', () => {
  it('replays one step per call and records each call', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }], usage: { promptTokens: 3, completionTokens: 1 } },
      (received) => ({ text: `saw ${received.messages.length} messages` }),
    ]);
    const first = await provider.generate(request);
    expect(first.message.toolCalls).toEqual([{ id: 'call_1_1', name: 'read_file', arguments: '{"path":"a"}' }]);
    expect(first.usage).toEqual({ promptTokens: 3, completionTokens: 1, totalTokens: 4 });
    const second = await provider.generate({ messages: [...request.messages, first.message] });
    expect(second.message.content).toBe('saw 2 messages');
    expect(provider.calls.map((call) => call.mode)).toEqual(['generate', 'generate']);
    expect(provider.calls[1]?.request.messages).toHaveLength(2);
    expect(provider.remaining).toBe(0);
  });

  it('records a copy of the request, not the caller\'s array', async () => {
    const provider = new ScriptedProvider([{ text: 'ok' }]);
    const messages = [...request.messages];
    await provider.generate({ messages });
    messages.push({ role: 'user', content: 'later' });
    expect(provider.calls[0]?.request.messages).toHaveLength(1);
  });

  it('streams text chunks, tool-call deltas and a completed event', async () => {
    const provider = new ScriptedProvider([
      { textChunks: ['a', 'b'], toolCalls: [{ id: 'x', name: 'bash', arguments: '{"command":"ls"}' }] },
    ]);
    const events = await collect(streamOf(provider));
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'text_delta', 'tool_call_delta', 'completed']);
    const completed = events.at(-1);
    expect(completed?.type === 'completed' ? completed.response.message.content : '').toBe('ab');
  });

  it('has no stream method when built as non-streaming', () => {
    expect(new ScriptedProvider([], { streaming: false }).stream).toBeUndefined();
  });

  it('fails clearly when called more often than scripted', async () => {
    const provider = new ScriptedProvider([{ text: 'once' }]);
    await provider.generate(request);
    const error = await provider.generate(request).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawError);
    expect((error as ClawError).code).toBe('script_exhausted');
    expect((error as Error).message).toContain('call 2 has no scripted step (the script has 1)');
  });

  it('with `then`, answers every call past the script with that step, and can keep no copies', async () => {
    const provider = new ScriptedProvider([{ text: 'first' }], {
      then: (_request, index) => ({ text: `call ${index + 1}` }),
      record: false,
    });
    const texts = [];
    for (let call = 0; call < 4; call += 1) texts.push((await provider.generate(request)).message.content);
    expect(texts).toEqual(['first', 'call 2', 'call 3', 'call 4']);
    expect(provider.calls).toEqual([]);
    expect(provider.remaining).toBe(0);
  });

  it('honours the signal during a delay and between stream events', async () => {
    const provider = new ScriptedProvider([{ text: 'slow', delayMs: 60_000 }, { textChunks: ['a', 'b'], chunkDelayMs: 60_000 }]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = provider.generate(request, { signal: controller.signal });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);

    const second = new AbortController();
    const events: StreamEvent[] = [];
    const streaming = (async () => {
      for await (const event of streamOf(provider, { signal: second.signal })) {
        events.push(event);
        second.abort(reason);
      }
    })();
    await expect(streaming).rejects.toBe(reason);
    expect(events).toHaveLength(1);
  });

  it('waits through an injected sleep: the delay before the reply and between stream events, with the signal', async () => {
    const waits: Array<{ ms: number; signal: AbortSignal | undefined }> = [];
    const provider = new ScriptedProvider(
      [{ text: 'done', delayMs: 40 }, { textChunks: ['a', 'b', 'c'], delayMs: 7, chunkDelayMs: 3 }],
      {
        sleep: async (ms, signal) => {
          waits.push({ ms, signal });
        },
      },
    );
    const controller = new AbortController();
    await provider.generate(request, { signal: controller.signal });
    expect(waits).toEqual([{ ms: 40, signal: controller.signal }]);
    waits.length = 0;
    const events = await collect(streamOf(provider, { signal: controller.signal }));
    // 3 text deltas and the completed event: the delay first, then a gap before each later event.
    expect(events).toHaveLength(4);
    expect(waits.map((wait) => wait.ms)).toEqual([7, 3, 3, 3]);
    expect(waits.every((wait) => wait.signal === controller.signal)).toBe(true);
  });

  it('fails a stream after the scripted number of events', async () => {
    const failure = new Error('connection reset');
    const provider = new ScriptedProvider([{ textChunks: ['a', 'b', 'c'], error: failure, failAfterEvents: 2 }]);
    const events: StreamEvent[] = [];
    await expect(
      (async () => {
        for await (const event of streamOf(provider)) events.push(event);
      })(),
    ).rejects.toBe(failure);
    expect(events).toHaveLength(2);
  });
});

describe('splitIntoPieces', () => {
  it('covers the text with pieces inside the size range, the same for the same seed', () => {
    const text = 'x'.repeat(500);
    const pieces = splitIntoPieces(text, { min: 1, max: 7, seed: 9 });
    expect(pieces.join('')).toBe(text);
    expect(pieces.slice(0, -1).every((piece) => piece.length >= 1 && piece.length <= 7)).toBe(true);
    expect(new Set(pieces.map((piece) => piece.length)).size).toBeGreaterThan(3);
    expect(splitIntoPieces(text, { min: 1, max: 7, seed: 9 })).toEqual(pieces);
    expect(() => splitIntoPieces(text, { min: 0, max: 7, seed: 1 })).toThrow(RangeError);
  });
});
