import { findError, type CallOptions, type ModelRequest, type ModelResponse, type Provider, type StreamEvent } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ModelTimeoutError,
  PartialResponseError,
  RetryingProvider,
  classifyError,
  retryingProviderDefaults,
  type RetryInfo,
  type RetryingProviderOptions,
  type SetTimer,
} from '../src/index.js';
import { FunctionProvider, completed, drain, request, response, textOf, untilAborted } from './retry-helpers.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/**
 * A provider whose `generate`, per call, does what `answers` says: `'block'` (the default) waits
 * until its signal aborts, `'ignore-signal'` never settles at all, anything else is the answer.
 */
class BlockingProvider implements Provider {
  readonly name = 'blocking';
  readonly signals: AbortSignal[] = [];

  constructor(private readonly answers: string[] = []) {}

  async generate(_request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const signal = options.signal ?? new AbortController().signal;
    this.signals.push(signal);
    const answer = this.answers[this.signals.length - 1] ?? 'block';
    if (answer === 'block') return untilAborted(signal);
    if (answer === 'ignore-signal') return new Promise<never>(() => undefined);
    return response(answer);
  }
}

function streamOf(provider: RetryingProvider, signal?: AbortSignal): AsyncIterable<StreamEvent> {
  if (provider.stream === undefined) throw new Error('the provider cannot stream');
  return provider.stream(request, { signal });
}

/** Settles `promise` into a value (what it resolved with, or what it rejected with). */
function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then((value) => value, (error: unknown) => error);
}

const fast: RetryingProviderOptions = { backoffMs: 0 };

describe('callTimeout (PRV-5)', () => {
  it('two attempts that hang → both time out, "model call timed out", and the inner call saw the abort', async () => {
    const inner = new BlockingProvider();
    const provider = new RetryingProvider(inner, { ...fast, attempts: 2, callTimeoutMs: 20 });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(19);
    expect(inner.signals).toHaveLength(1);
    expect(inner.signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(inner.signals[0]?.aborted).toBe(true);
    expect(inner.signals[0]?.reason).toBeInstanceOf(ModelTimeoutError);
    await vi.advanceTimersByTimeAsync(20);
    const error = await outcome;
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect((error as ModelTimeoutError).code).toBe('model_call_timeout');
    expect((error as Error).message).toMatch(/^model call timed out after 0\.02s/);
    expect(inner.signals).toHaveLength(2);
    expect(inner.signals[1]?.aborted).toBe(true);
  });

  it('an inner provider that rejects with a plain AbortError on the timer still gets a retryable timeout', async () => {
    const signals: AbortSignal[] = [];
    const inner: Provider = {
      name: 'fetch-like',
      generate: async (_request, options = {}) => {
        const signal = options.signal ?? new AbortController().signal;
        signals.push(signal);
        if (signals.length === 2) return response('second try');
        // What `fetch` does: reject with its own AbortError, not with the signal's reason.
        return new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')));
        });
      },
    };
    const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 40 });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(40);
    expect(await outcome).toMatchObject({ message: { content: 'second try' } });
    expect(signals).toHaveLength(2);
    // Alone, the AbortError would be "canceled" and never retried.
    expect(classifyError(new DOMException('x', 'AbortError'))).toBe('canceled');
  });

  it('times out even when the inner provider ignores its signal', async () => {
    const inner = new BlockingProvider(['ignore-signal']);
    const provider = new RetryingProvider(inner, { ...fast, attempts: 1, callTimeoutMs: 30 });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(30);
    expect(await outcome).toMatchObject({ code: 'model_call_timeout' });
  });

  it('a timed-out attempt is retried and the next one may answer', async () => {
    const inner = new BlockingProvider(['block', 'second try']);
    const retries: RetryInfo[] = [];
    const onRetry = (info: RetryInfo) => retries.push(info);
    const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 100, onRetry });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(100);
    expect(await outcome).toMatchObject({ message: { content: 'second try' } });
    expect(retries).toHaveLength(1);
    expect(retries[0]?.error).toBeInstanceOf(ModelTimeoutError);
  });

  it('each attempt gets its own timer: a slow but in-time answer is fine', async () => {
    const inner = new ScriptedProvider([{ text: 'slow', delayMs: 90 }]);
    const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 100 });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(90);
    expect(await outcome).toMatchObject({ message: { content: 'slow' } });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('callTimeoutMs 0 and streamIdleTimeoutMs 0 mean no limit; generate has no first-token timer', async () => {
    const inner = new ScriptedProvider([{ text: 'patience', delayMs: 500_000 }]);
    const provider = new RetryingProvider(inner, {
      ...fast,
      callTimeoutMs: 0,
      streamIdleTimeoutMs: 0,
      firstTokenTimeoutMs: 20,
    });
    const outcome = settle(provider.generate(request));
    await vi.advanceTimersByTimeAsync(500_000);
    expect(await outcome).toMatchObject({ message: { content: 'patience' } });
  });

  it('an injected timer drives the timeouts', async () => {
    const started: Array<{ ms: number; fire: () => void }> = [];
    const setTimer: SetTimer = (callback, ms) => {
      started.push({ ms, fire: callback });
      return () => undefined;
    };
    const inner = new BlockingProvider();
    const provider = new RetryingProvider(inner, { attempts: 1, callTimeoutMs: 1234, setTimer });
    const outcome = settle(provider.generate(request));
    expect(started.map((timer) => timer.ms)).toEqual([1234]);
    started[0]?.fire();
    expect(await outcome).toMatchObject({ code: 'model_call_timeout' });
    expect((await outcome as Error).message).toContain('after 1.234s');
  });
});

describe('firstTokenTimeout (PRV-5)', () => {
  it('first token late → retried, then "model first token timed out"', async () => {
    const inner = new ScriptedProvider([{ text: 'late', delayMs: 1000 }, { text: 'late', delayMs: 1000 }]);
    const provider = new RetryingProvider(inner, { ...fast, attempts: 2, firstTokenTimeoutMs: 20 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(100);
    const { events, error } = await outcome;
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect((error as ModelTimeoutError).code).toBe('model_first_token_timeout');
    expect((error as Error).message).toMatch(/^model first token timed out after 0\.02s/);
    expect(inner.calls).toHaveLength(2);
  });

  it('first token in time → one call, whole reply', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['quick', ' reply'], delayMs: 10 }]);
    const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 200 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(10);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('quick reply');
    expect(inner.calls).toHaveLength(1);
  });

  it('never ends a stream that has started, however slow it goes on', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['a', 'b', 'c'], chunkDelayMs: 50 }]);
    const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 20, callTimeoutMs: 0 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(200);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('abc');
    expect(events.at(-1)?.type).toBe('completed');
  });

  it('text, then a stall → one call, "model call timed out" (not first token), as a partial response', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['hello', ' world'], chunkDelayMs: 10_000 }, { text: 'never' }]);
    const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 50, firstTokenTimeoutMs: 20 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(50);
    const { events, error } = await outcome;
    expect(textOf(events)).toBe('hello');
    expect(error).toBeInstanceOf(PartialResponseError);
    const cause = (error as PartialResponseError).cause;
    expect(cause).toBeInstanceOf(ModelTimeoutError);
    expect((cause as ModelTimeoutError).code).toBe('model_call_timeout');
    expect((error as Error).message).toContain('model call timed out');
    expect((error as Error).message).not.toContain('first token');
    expect(classifyError(error)).toBe('fatal');
    expect(inner.calls).toHaveLength(1);
  });

  it('a scripted inner stream that yields nothing for a while trips the timer', async () => {
    const inner = new ScriptedProvider([{ text: 'too late', delayMs: 500 }]);
    const provider = new RetryingProvider(inner, { ...fast, attempts: 1, firstTokenTimeoutMs: 50 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(50);
    expect((await outcome).error).toMatchObject({ code: 'model_first_token_timeout' });
  });

  it('empty events (keep-alive in disguise) do not stop the timer; the inner stream is aborted', async () => {
    const inner = new FunctionProvider([
      async function* (signal) {
        for (let tick = 0; tick < 100; tick += 1) {
          yield { type: 'text_delta', delta: '' };
          yield { type: 'tool_call_delta', index: 0, argumentsDelta: '' };
          await new Promise((resolve) => setTimeout(resolve, 10));
          if (signal.aborted) throw signal.reason as Error;
        }
        yield completed('too late');
      },
    ]);
    const provider = new RetryingProvider(inner, { ...fast, attempts: 1, firstTokenTimeoutMs: 50 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(60);
    const { events, error } = await outcome;
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'model_first_token_timeout' });
    expect(inner.signals[0]?.reason).toBe(error);
    expect(inner.closed).toBe(1);
  });

  it('firstTokenTimeoutMs 0 means no first-token limit', async () => {
    const inner = new ScriptedProvider([{ text: 'eventually', delayMs: 100_000 }]);
    const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 0, callTimeoutMs: 0 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(100_000);
    expect(textOf((await outcome).events)).toBe('eventually');
  });
});

describe('a parent abort racing a timer is canceled, never a timeout (PRV-5)', () => {
  for (const order of ['timer first', 'abort first'] as const) {
    it(`generate, call timer and abort at the same moment (${order})`, async () => {
      const inner = new BlockingProvider();
      const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 50 });
      const controller = new AbortController();
      const reason = new Error('user pressed Ctrl-C');
      const abortAt50 = () => setTimeout(() => controller.abort(reason), 50);
      if (order === 'abort first') abortAt50();
      const outcome = settle(provider.generate(request, { signal: controller.signal }));
      if (order === 'timer first') abortAt50();
      // Both timers fire in one synchronous step: no promise callback runs in between.
      vi.advanceTimersByTime(50);
      const error = await outcome;
      expect(error).toBe(reason);
      expect(classifyError(error, { signal: controller.signal })).toBe('canceled');
      expect(inner.signals).toHaveLength(1);
    });

    it(`stream, first-token timer and abort at the same moment (${order})`, async () => {
      const inner = new ScriptedProvider([{ text: 'late', delayMs: 1000 }, { text: 'never' }]);
      const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 50 });
      const controller = new AbortController();
      const reason = new Error('user pressed Ctrl-C');
      const abortAt50 = () => setTimeout(() => controller.abort(reason), 50);
      if (order === 'abort first') abortAt50();
      const iterator = streamOf(provider, controller.signal)[Symbol.asyncIterator]();
      const first = settle(iterator.next());
      if (order === 'timer first') abortAt50();
      vi.advanceTimersByTime(50);
      expect(await first).toBe(reason);
      expect(inner.calls).toHaveLength(1);
    });
  }

  it('stream, call timer and abort at the same moment after text → the abort, not a partial error', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['hello', ' world'], chunkDelayMs: 10_000 }]);
    const provider = new RetryingProvider(inner, { ...fast, callTimeoutMs: 50 });
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    const iterator = streamOf(provider, controller.signal)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text_delta', delta: 'hello' } });
    setTimeout(() => controller.abort(reason), 50);
    const second = settle(iterator.next());
    vi.advanceTimersByTime(50);
    const error = await second;
    expect(error).toBe(reason);
    expect(error).not.toBeInstanceOf(PartialResponseError);
  });
});

/** Whether `promise` has settled yet (checked after the fake clock moved). */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  return { promise, settled: () => done };
}

describe('streamIdleTimeout (PRV-5, REAL-3)', () => {
  const idle: RetryingProviderOptions = {
    ...fast,
    callTimeoutMs: 0,
    firstTokenTimeoutMs: 50,
    streamIdleTimeoutMs: 100,
  };

  it('the defaults: no call limit, 120 s for the first token and for a silence', async () => {
    expect(retryingProviderDefaults).toMatchObject({
      callTimeoutMs: 0,
      firstTokenTimeoutMs: 120_000,
      streamIdleTimeoutMs: 120_000,
    });
    const started: number[] = [];
    const setTimer: SetTimer = (_callback, ms) => {
      started.push(ms);
      return () => undefined;
    };
    const provider = new RetryingProvider(new ScriptedProvider([{ text: 'hi' }, { text: 'hi' }]), { setTimer });
    await provider.generate(request);
    expect(started).toEqual([120_000]);
    started.length = 0;
    const { error } = await drain(streamOf(provider));
    expect(error).toBeUndefined();
    // first token, then the idle timer after the text
    expect(started).toEqual([120_000, 120_000]);
  });

  it('text, then silence → "model stream went silent" after the idle limit, a partial response, not retried', async () => {
    const inner = new FunctionProvider([
      async function* (signal) {
        yield { type: 'text_delta', delta: 'hello' };
        await untilAborted(signal);
      },
      async function* () {
        yield completed('never');
      },
    ]);
    const provider = new RetryingProvider(inner, idle);
    const outcome = tracked(drain(streamOf(provider)));
    await vi.advanceTimersByTimeAsync(99);
    expect(outcome.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const { events, error } = await outcome.promise;
    expect(textOf(events)).toBe('hello');
    expect(error).toBeInstanceOf(PartialResponseError);
    const cause = (error as PartialResponseError).cause as ModelTimeoutError;
    expect(cause).toBeInstanceOf(ModelTimeoutError);
    expect(cause.code).toBe('model_stream_idle_timeout');
    expect(cause.kind).toBe('idle');
    expect(cause.message).toMatch(/^model stream went silent for 0\.1s /);
    expect(cause.message).toContain('retry later, or raise --stream-idle-timeout-ms');
    expect(classifyError(cause)).toBe('retryable');
    expect(classifyError(error)).toBe('fatal');
    expect(inner.signals[0]?.reason).toBe(cause);
    expect(inner.calls).toBe(1);
    expect(inner.closed).toBe(1);
  });

  it('each content restarts it: a slow but steady stream is never cut off', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 80 }]);
    const provider = new RetryingProvider(inner, idle);
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(500);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('abcde');
  });

  it('reasoning and tool-call pieces are content too: they restart it', async () => {
    const inner = new FunctionProvider([
      async function* () {
        for (const piece of ['Let', ' me', ' think']) {
          yield { type: 'reasoning_delta', delta: piece };
          await new Promise((resolve) => setTimeout(resolve, 80));
        }
        for (const piece of ['{"pa', 'th":', '"a"}']) {
          yield { type: 'tool_call_delta', index: 0, argumentsDelta: piece };
          await new Promise((resolve) => setTimeout(resolve, 80));
        }
        yield completed('');
      },
    ]);
    const provider = new RetryingProvider(inner, idle);
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(600);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(events.filter((event) => event.type === 'reasoning_delta')).toHaveLength(3);
    expect(events.at(-1)?.type).toBe('completed');
  });

  it('empty pieces after the first content do not restart it (keep-alive in disguise)', async () => {
    const inner = new FunctionProvider([
      async function* (signal) {
        yield { type: 'text_delta', delta: 'start' };
        for (let tick = 0; tick < 100; tick += 1) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          if (signal.aborted) throw signal.reason as Error;
          yield { type: 'text_delta', delta: '' };
          yield { type: 'reasoning_delta', delta: '' };
          yield { type: 'tool_call_delta', index: 0, argumentsDelta: '' };
        }
        yield completed('too late');
      },
    ]);
    const provider = new RetryingProvider(inner, idle);
    const outcome = tracked(drain(streamOf(provider)));
    await vi.advanceTimersByTimeAsync(99);
    expect(outcome.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const { error } = await outcome.promise;
    expect(findError(error, ModelTimeoutError)?.code).toBe('model_stream_idle_timeout');
  });

  it('before the first content the first-token timer governs, not the idle timer', async () => {
    const inner = new ScriptedProvider([{ text: 'thought long', delayMs: 150 }]);
    const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 200, streamIdleTimeoutMs: 50 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(150);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('thought long');
  });

  it('with firstTokenTimeoutMs 0 it covers the wait for the first content: retried, never partial', async () => {
    const inner = new ScriptedProvider([{ text: 'late', delayMs: 1000 }, { text: 'late', delayMs: 1000 }]);
    const options = { ...fast, attempts: 2, firstTokenTimeoutMs: 0, streamIdleTimeoutMs: 50 };
    const provider = new RetryingProvider(inner, options);
    const outcome = tracked(drain(streamOf(provider)));
    await vi.advanceTimersByTimeAsync(49);
    expect(outcome.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(51);
    const { events, error } = await outcome.promise;
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect((error as ModelTimeoutError).code).toBe('model_stream_idle_timeout');
    expect(inner.calls).toHaveLength(2);
  });

  it('both 0: a stream may take as long as it likes', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['slow', 'er'], delayMs: 500_000, chunkDelayMs: 500_000 }]);
    const provider = new RetryingProvider(inner, { ...fast, firstTokenTimeoutMs: 0, streamIdleTimeoutMs: 0 });
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(5_000_000);
    expect(textOf((await outcome).events)).toBe('slower');
  });

  it('a consumer that holds an event is not a silent model', async () => {
    const inner = new FunctionProvider([
      async function* () {
        yield { type: 'text_delta', delta: 'one' };
        yield { type: 'text_delta', delta: ' two' };
        yield completed('one two');
      },
    ]);
    const provider = new RetryingProvider(inner, idle);
    const iterator = streamOf(provider)[Symbol.asyncIterator]();
    expect(await iterator.next()).toMatchObject({ value: { delta: 'one' } });
    // The reporter takes its time over each piece, far longer than the idle limit.
    await vi.advanceTimersByTimeAsync(1000);
    expect(await iterator.next()).toMatchObject({ value: { delta: ' two' } });
    await vi.advanceTimersByTimeAsync(1000);
    expect(await iterator.next()).toMatchObject({ value: { type: 'completed' } });
    expect((await iterator.next()).done).toBe(true);
  });

  it('generate without a call timeout is limited by the idle timeout', async () => {
    const inner = new BlockingProvider();
    const provider = new RetryingProvider(inner, { ...fast, attempts: 1, callTimeoutMs: 0, streamIdleTimeoutMs: 100 });
    const outcome = tracked(settle(provider.generate(request)));
    await vi.advanceTimersByTimeAsync(99);
    expect(outcome.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome.promise).toMatchObject({ code: 'model_stream_idle_timeout' });
    expect(inner.signals[0]?.aborted).toBe(true);
  });

  it('generate with a call timeout uses it instead of the idle timeout', async () => {
    const inner = new BlockingProvider();
    const options = { ...fast, attempts: 1, callTimeoutMs: 300, streamIdleTimeoutMs: 100 };
    const provider = new RetryingProvider(inner, options);
    const outcome = tracked(settle(provider.generate(request)));
    await vi.advanceTimersByTimeAsync(299);
    expect(outcome.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome.promise).toMatchObject({ code: 'model_call_timeout' });
  });

  it('refuses a negative or non-finite streamIdleTimeoutMs', () => {
    const inner = new ScriptedProvider([]);
    expect(() => new RetryingProvider(inner, { streamIdleTimeoutMs: -1 })).toThrow(/streamIdleTimeoutMs/);
    expect(() => new RetryingProvider(inner, { streamIdleTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(/config_invalid|streamIdleTimeoutMs/);
  });
});

describe('the defaults fit real models (REAL-3)', () => {
  it('a reasoning reply silent for 100 s, then thinking in pieces 90 s apart, then a long answer: not cut', async () => {
    const inner = new ScriptedProvider([
      {
        delayMs: 100_000,
        reasoning: ['Reading ', 'the code… ', 'done thinking.'],
        textChunks: Array.from({ length: 40 }, (_, index) => `part ${index} `),
        chunkDelayMs: 90_000,
      },
    ]);
    // The defaults, as the runtime gives them: no whole-call limit.
    const provider = new RetryingProvider(inner);
    expect(retryingProviderDefaults)
      .toMatchObject({ callTimeoutMs: 0, firstTokenTimeoutMs: 120_000, streamIdleTimeoutMs: 120_000 });
    const outcome = drain(streamOf(provider));
    // 100 s before the first piece, then 43 pieces 90 s apart: over an hour in all.
    await vi.advanceTimersByTimeAsync(100_000 + 44 * 90_000);
    const { events, error } = await outcome;
    expect(error).toBeUndefined();
    expect(events.filter((event) => event.type === 'reasoning_delta')).toHaveLength(3);
    expect(textOf(events)).toBe(Array.from({ length: 40 }, (_, index) => `part ${index} `).join(''));
    expect(inner.calls).toHaveLength(1);
  });

  it('a stream silent for longer than the idle limit once it started is cut: a partial reply, not retried', async () => {
    const inner = new ScriptedProvider([
      { reasoning: ['a'], textChunks: ['b', 'c'], chunkDelayMs: 121_000 },
      { text: 'never asked' },
    ]);
    const provider = new RetryingProvider(inner, fast);
    const outcome = drain(streamOf(provider));
    await vi.advanceTimersByTimeAsync(130_000);
    const { error } = await outcome;
    expect(error).toBeInstanceOf(PartialResponseError);
    expect(findError(error, ModelTimeoutError)).toMatchObject({ kind: 'idle', code: 'model_stream_idle_timeout' });
    expect(inner.calls).toHaveLength(1);
  });
});
