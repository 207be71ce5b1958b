import { ClawError, type StreamEvent } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import {
  NetworkError,
  PartialResponseError,
  RetryingProvider,
  classifyError,
  findHttpError,
} from '../src/index.js';
import { FunctionProvider, completed, drain, http, recordingSleep, request, textOf } from './retry-helpers.js';

function streamOf(provider: RetryingProvider, signal?: AbortSignal): AsyncIterable<StreamEvent> {
  if (provider.stream === undefined) throw new Error('the provider cannot stream');
  return provider.stream(request, { signal });
}

const noTimers = { callTimeoutMs: 0, firstTokenTimeoutMs: 0 };

describe('RetryingProvider.stream: retries before anything was forwarded (PRV-3, PRV-4)', () => {
  it('an error before output is retried and invisible: the consumer sees one clean stream', async () => {
    const inner = new ScriptedProvider([
      { textChunks: ['Hel', 'lo'], error: http(429), failAfterEvents: 0 },
      { textChunks: ['Hel', 'lo'], error: http(503), failAfterEvents: 0 },
      { textChunks: ['Hel', 'lo'] },
    ]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(error).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'text_delta', 'completed']);
    expect(textOf(events)).toBe('Hello');
    expect(inner.calls.map((call) => call.mode)).toEqual(['stream', 'stream', 'stream']);
    expect(delays).toEqual([200, 400]);
  });

  it('tells the call\'s own onRetry of each retry, with the attempts in all, before it waits', async () => {
    const inner = new ScriptedProvider([
      { error: http(503) },
      { error: http(429) },
      { text: 'at last' },
    ]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { sleep, ...noTimers });
    const told: Array<Record<string, unknown>> = [];
    const events = provider.stream!(request, {
      onRetry: ({ attempt, attempts, delayMs, error }) => {
        told.push({ attempt, attempts, delayMs, status: findHttpError(error)?.status, waitsBefore: delays.length });
      },
    });
    expect(textOf((await drain(events)).events)).toBe('at last');
    expect(told).toEqual([
      { attempt: 1, attempts: 3, delayMs: 200, status: 503, waitsBefore: 0 },
      { attempt: 2, attempts: 3, delayMs: 400, status: 429, waitsBefore: 1 },
    ]);
  });

  it('text, then 429 → not retried; a PartialResponseError with the 429 reachable through cause', async () => {
    const inner = new ScriptedProvider([
      { textChunks: ['Hel', 'lo', '!'], error: http(429), failAfterEvents: 1 },
      { text: 'never' },
    ]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(textOf(events)).toBe('Hel');
    expect(error).toBeInstanceOf(PartialResponseError);
    expect((error as PartialResponseError).code).toBe('partial_response');
    expect(findHttpError(error)?.status).toBe(429);
    expect(classifyError(error)).toBe('fatal');
    expect(inner.calls).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('the stream closing after text (no completed event) is a partial response, not retried', async () => {
    const inner = new FunctionProvider([
      async function* () {
        yield { type: 'text_delta', delta: 'half an ans' };
      },
      async function* () {
        yield completed('never');
      },
    ]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(textOf(events)).toBe('half an ans');
    expect(error).toBeInstanceOf(PartialResponseError);
    const cause = (error as PartialResponseError).cause;
    expect(cause).toBeInstanceOf(NetworkError);
    expect((cause as NetworkError).code).toBe('stream_incomplete');
    expect(inner.calls).toBe(1);
  });

  it('a stream that ends with nothing (no completed) before output is retried like stream_incomplete', async () => {
    const inner = new FunctionProvider([
      async function* () {
        // nothing at all
      },
      async function* () {
        yield { type: 'text_delta', delta: 'ok' };
        yield completed('ok');
      },
    ]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(error).toBeUndefined();
    expect(events).toEqual([{ type: 'text_delta', delta: 'ok' }, completed('ok')]);
    expect(inner.calls).toBe(2);
  });

  it('when every attempt ends early without output, the last failure is a NetworkError, not partial', async () => {
    const empty = async function* (): AsyncGenerator<StreamEvent, void, undefined> {};
    const inner = new FunctionProvider([empty, empty]);
    const provider = new RetryingProvider(inner, { attempts: 2, sleep: recordingSleep().sleep, ...noTimers });
    const { error } = await drain(streamOf(provider));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(PartialResponseError);
    expect((error as NetworkError).code).toBe('stream_incomplete');
    expect(inner.calls).toBe(2);
  });

  it('a fatal error before output is not retried and not partial', async () => {
    const inner = new ScriptedProvider([{ text: 'x', error: http(401), failAfterEvents: 0 }, { text: 'never' }]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(events).toEqual([]);
    expect(error).not.toBeInstanceOf(PartialResponseError);
    expect(findHttpError(error)?.status).toBe(401);
    expect(inner.calls).toHaveLength(1);
  });

  it('the completed event alone counts as forwarded: a failure after it is not retried', async () => {
    const inner = new FunctionProvider([
      async function* () {
        yield completed('done');
        throw http(500);
      },
    ]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    // The reply was whole at `completed`: the attempt ends there and the inner stream is closed.
    expect(error).toBeUndefined();
    expect(events).toEqual([completed('done')]);
    expect(inner.calls).toBe(1);
    expect(inner.closed).toBe(1);
  });

  it('a tool-call piece counts as forwarded: an error after it is partial', async () => {
    const inner = new FunctionProvider([
      async function* () {
        yield { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'read_file', argumentsDelta: '' };
        throw new NetworkError('connection reset', {});
      },
    ]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(PartialResponseError);
    expect(inner.calls).toBe(1);
  });

  it('empty pieces before any content are dropped, so a retry never repeats them', async () => {
    const empties = async function* (): AsyncGenerator<StreamEvent, void, undefined> {
      yield { type: 'text_delta', delta: '' };
      yield { type: 'tool_call_delta', index: 0, argumentsDelta: '' };
    };
    const inner = new FunctionProvider([
      async function* () {
        yield* empties();
        throw http(502);
      },
      async function* () {
        yield* empties();
        yield { type: 'text_delta', delta: 'hi' };
        yield completed('hi');
      },
    ]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });
    const { events, error } = await drain(streamOf(provider));
    expect(error).toBeUndefined();
    expect(events).toEqual([{ type: 'text_delta', delta: 'hi' }, completed('hi')]);
    expect(inner.calls).toBe(2);
  });

  it('a PartialResponseError from an inner RetryingProvider is not wrapped again', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['a', 'b'], error: http(500), failAfterEvents: 1 }]);
    const innerRetrying = new RetryingProvider(inner, noTimers);
    const provider = new RetryingProvider(innerRetrying, { sleep: recordingSleep().sleep, ...noTimers });
    const { error } = await drain(streamOf(provider));
    expect(error).toBeInstanceOf(PartialResponseError);
    expect((error as PartialResponseError).cause).toMatchObject({ status: 500 });
    expect(inner.calls).toHaveLength(1);
  });
});

describe('RetryingProvider.stream: abort and closing the inner stream', () => {
  it('a parent abort after text returns the abort reason, not a partial error', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['one', 'two', 'three'], chunkDelayMs: 5 }]);
    const provider = new RetryingProvider(inner, noTimers);
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    const events: StreamEvent[] = [];
    const run = (async () => {
      for await (const event of streamOf(provider, controller.signal)) {
        events.push(event);
        controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(textOf(events)).toBe('one');
    expect(inner.calls).toHaveLength(1);
  });

  it('an inner stream that ignores the signal is left at once on abort, and still closed', async () => {
    let release: () => void = () => undefined;
    const inner = new FunctionProvider([
      async function* () {
        yield { type: 'text_delta', delta: 'a' };
        await new Promise<void>((resolve) => (release = resolve));
        yield { type: 'text_delta', delta: 'late' };
      },
    ]);
    const provider = new RetryingProvider(inner, noTimers);
    const controller = new AbortController();
    const reason = new Error('stop');
    const iterator = streamOf(provider, controller.signal)[Symbol.asyncIterator]();
    await expect(iterator.next()).resolves.toEqual({ done: false, value: { type: 'text_delta', delta: 'a' } });
    const second = iterator.next();
    controller.abort(reason);
    await expect(second).rejects.toBe(reason);
    expect(inner.signals[0]?.aborted).toBe(true);
    release();
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(inner.closed).toBe(1);
  });

  it('closes the inner stream on every exit path', async () => {
    const body = async function* (): AsyncGenerator<StreamEvent, void, undefined> {
      yield { type: 'text_delta', delta: 'a' };
      yield { type: 'text_delta', delta: 'b' };
      yield completed('ab');
    };
    const failing = async function* (): AsyncGenerator<StreamEvent, void, undefined> {
      yield { type: 'text_delta', delta: 'a' };
      throw http(500);
    };
    const retried = async function* (): AsyncGenerator<StreamEvent, void, undefined> {
      yield* [];
      throw http(500);
    };
    const inner = new FunctionProvider([body, body, failing, retried, body, body]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep, ...noTimers });

    // 1. Success.
    await drain(streamOf(provider));
    expect(inner.closed).toBe(1);
    // 2. The consumer breaks out after the first delta: the inner stream is closed and aborted.
    for await (const event of streamOf(provider)) {
      expect(event.type).toBe('text_delta');
      break;
    }
    expect(inner.closed).toBe(2);
    expect(inner.signals[1]?.aborted).toBe(true);
    // 3. A partial failure.
    expect((await drain(streamOf(provider))).error).toBeInstanceOf(PartialResponseError);
    expect(inner.closed).toBe(3);
    // 4. A failure before output, then a retry that succeeds: both inner streams closed.
    expect((await drain(streamOf(provider))).error).toBeUndefined();
    expect(inner.closed).toBe(5);
    // 5. The caller aborts while an event is being handled.
    const controller = new AbortController();
    const run = (async () => {
      for await (const event of streamOf(provider, controller.signal)) {
        void event;
        controller.abort(new ClawError('stop', { code: 'aborted' }));
      }
    })();
    await expect(run).rejects.toMatchObject({ code: 'aborted' });
    expect(inner.closed).toBe(6);
    expect(inner.calls).toBe(6);
  });
});
