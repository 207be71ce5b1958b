import { getEventListeners } from 'node:events';
import { ClawError } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetryingProvider, retryingProviderDefaults, type RetryInfo } from '../src/index.js';
import { http, recordingSleep, request } from './retry-helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('RetryingProvider.generate: what is retried (PRV-3)', () => {
  it('429, 429, success → 3 calls and the answer; waits 200 then 400 ms', async () => {
    const inner = new ScriptedProvider([{ error: http(429) }, { error: http(429) }, { text: 'hello' }]);
    const { sleep, delays } = recordingSleep();
    const retries: RetryInfo[] = [];
    const provider = new RetryingProvider(inner, { sleep, onRetry: (info) => retries.push(info) });
    const reply = await provider.generate(request);
    expect(reply.message.content).toBe('hello');
    expect(inner.calls).toHaveLength(3);
    expect(delays).toEqual([200, 400]);
    expect(retries.map(({ mode, attempt, delayMs }) => ({ mode, attempt, delayMs }))).toEqual([
      { mode: 'generate', attempt: 1, delayMs: 200 },
      { mode: 'generate', attempt: 2, delayMs: 400 },
    ]);
    expect((retries[0]?.error as { status?: number }).status).toBe(429);
  });

  it('tells the call\'s own onRetry too, and not of the last failure, which the call rejects with', async () => {
    const inner = new ScriptedProvider([{ error: http(500) }, { error: http(502) }, { error: http(503) }]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep });
    const told: Array<[number, number, number]> = [];
    const rejection = await provider
      .generate(request, { onRetry: ({ attempt, attempts, delayMs }) => told.push([attempt, attempts, delayMs]) })
      .catch((error: unknown) => error);
    expect((rejection as { status?: number }).status).toBe(503);
    expect(told).toEqual([[1, 3, 200], [2, 3, 400]]);
  });

  it('401 → 1 call, the HttpError as it is, no wait', async () => {
    const unauthorized = http(401);
    const inner = new ScriptedProvider([{ error: unauthorized }, { text: 'never' }]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { sleep });
    await expect(provider.generate(request)).rejects.toBe(unauthorized);
    expect(inner.calls).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('a local error (invalid tool JSON) is not retried', async () => {
    const local = new SyntaxError('Unexpected end of JSON input');
    const inner = new ScriptedProvider([{ error: local }, { text: 'never' }]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep });
    await expect(provider.generate(request)).rejects.toBe(local);
    expect(inner.calls).toHaveLength(1);
  });

  it('a canceled inner call is not retried', async () => {
    const aborted = new ClawError('model request aborted', { code: 'aborted' });
    const inner = new ScriptedProvider([{ error: aborted }, { text: 'never' }]);
    const provider = new RetryingProvider(inner, { sleep: recordingSleep().sleep });
    await expect(provider.generate(request)).rejects.toBe(aborted);
    expect(inner.calls).toHaveLength(1);
  });

  it('gives up after `attempts` (default 3) with the last error', async () => {
    const last = http(503);
    const inner = new ScriptedProvider([{ error: http(500) }, { error: http(502) }, { error: last }, { text: 'never' }]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { sleep });
    await expect(provider.generate(request)).rejects.toBe(last);
    expect(inner.calls).toHaveLength(retryingProviderDefaults.attempts);
    expect(delays).toEqual([200, 400]);
  });

  it('attempts: 1 turns retrying off', async () => {
    const inner = new ScriptedProvider([{ error: http(429) }, { text: 'never' }]);
    const provider = new RetryingProvider(inner, { attempts: 1, sleep: recordingSleep().sleep });
    await expect(provider.generate(request)).rejects.toMatchObject({ status: 429 });
    expect(inner.calls).toHaveLength(1);
  });

  it('an already aborted signal makes no call at all', async () => {
    const inner = new ScriptedProvider([{ text: 'never' }]);
    const provider = new RetryingProvider(inner);
    const reason = new Error('Ctrl-C');
    await expect(provider.generate(request, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(inner.calls).toHaveLength(0);
  });
});

describe('RetryingProvider: backoff (PRV-3)', () => {
  it('doubles per failure and is capped at maxBackoffMs: 200 → 400 → 500 → 500', async () => {
    const inner = new ScriptedProvider([
      { error: http(500) }, { error: http(500) }, { error: http(500) }, { error: http(500) }, { text: 'ok' },
    ]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { attempts: 5, backoffMs: 200, maxBackoffMs: 500, sleep });
    await expect(provider.generate(request)).resolves.toMatchObject({ message: { content: 'ok' } });
    expect(delays).toEqual([200, 400, 500, 500]);
  });

  it('the default cap is 2 s', async () => {
    const inner = new ScriptedProvider([...Array.from({ length: 6 }, () => ({ error: http(503) })), { text: 'ok' }]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { attempts: 7, sleep });
    await provider.generate(request);
    expect(delays).toEqual([200, 400, 800, 1600, 2000, 2000]);
  });

  it('backoff 0 waits 0, retry-after hints included', async () => {
    const inner = new ScriptedProvider([{ error: http(429, 1500) }, { error: http(500) }, { text: 'ok' }]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { backoffMs: 0, sleep });
    await provider.generate(request);
    expect(delays).toEqual([0, 0]);
    expect(inner.calls).toHaveLength(3);
  });

  it('honours retry-after within the cap: the larger of hint and backoff, never above the max', async () => {
    const inner = new ScriptedProvider([
      { error: http(429, 1000) }, // hint above the backoff (200): wait the hint
      { error: http(429, 50) }, // hint below the backoff (400): wait the backoff
      { error: http(429, 30_000) }, // hint above the cap: wait the cap
      { text: 'ok' },
    ]);
    const { sleep, delays } = recordingSleep();
    const provider = new RetryingProvider(inner, { attempts: 4, sleep });
    await provider.generate(request);
    expect(delays).toEqual([1000, 400, 2000]);
  });

  it('the default sleep really waits (fake timers): no second call before 200 ms', async () => {
    vi.useFakeTimers();
    const inner = new ScriptedProvider([{ error: http(429) }, { text: 'ok' }]);
    const provider = new RetryingProvider(inner);
    const pending = provider.generate(request);
    await vi.advanceTimersByTimeAsync(199);
    expect(inner.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(inner.calls).toHaveLength(2);
    await expect(pending).resolves.toMatchObject({ message: { content: 'ok' } });
  });

  it('500, then an abort during the backoff → no further call, the abort reason at once', async () => {
    vi.useFakeTimers();
    const inner = new ScriptedProvider([{ error: http(500) }, { text: 'never' }]);
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    let waiting: () => void = () => undefined;
    const backoffStarted = new Promise<void>((resolve) => (waiting = resolve));
    const provider = new RetryingProvider(inner, { backoffMs: 2000, onRetry: () => waiting() });
    const pending = provider.generate(request, { signal: controller.signal });
    const outcome = pending.then(() => 'resolved', (error: unknown) => error);
    await backoffStarted;
    controller.abort(reason);
    // No timer is advanced: the rejection cannot come from the backoff running out.
    await expect(outcome).resolves.toBe(reason);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(inner.calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an injected sleep that ignores the signal still cannot hold up an abort', async () => {
    const inner = new ScriptedProvider([{ error: http(500) }, { text: 'never' }]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const provider = new RetryingProvider(inner, {
      sleep: () => {
        setTimeout(() => controller.abort(reason), 1);
        return new Promise<void>(() => undefined);
      },
    });
    await expect(provider.generate(request, { signal: controller.signal })).rejects.toBe(reason);
    expect(inner.calls).toHaveLength(1);
  });
});

describe('RetryingProvider: shape', () => {
  it('has no stream when the inner provider has none, and one when it has', () => {
    const plain = new RetryingProvider(new ScriptedProvider([], { streaming: false, name: 'plain' }));
    expect(plain.stream).toBeUndefined();
    expect('stream' in plain).toBe(false);
    expect(plain.name).toBe('plain');
    const streaming = new RetryingProvider(new ScriptedProvider([]));
    expect(typeof streaming.stream).toBe('function');
  });

  it('rejects options out of range, naming the option', () => {
    const inner = new ScriptedProvider([]);
    expect(() => new RetryingProvider(inner, { attempts: 0 })).toThrow(/attempts must be a whole number of at least 1/);
    expect(() => new RetryingProvider(inner, { attempts: 2.5 })).toThrow(/attempts/);
    expect(() => new RetryingProvider(inner, { backoffMs: -1 })).toThrow(/backoffMs/);
    expect(() => new RetryingProvider(inner, { callTimeoutMs: Number.NaN })).toThrow(/callTimeoutMs/);
    expect(() => new RetryingProvider(inner, { firstTokenTimeoutMs: -5 })).toThrow(ClawError);
  });

  it('leaves no listener on a long-lived signal, through retries, timeouts and streams', async () => {
    const controller = new AbortController();
    const inner = new ScriptedProvider([
      { error: http(429) }, { text: 'one' }, { error: http(500) }, { text: 'two', textChunks: ['t', 'wo'] },
    ]);
    const provider = new RetryingProvider(inner, { backoffMs: 1, callTimeoutMs: 5000, firstTokenTimeoutMs: 5000 });
    await provider.generate(request, { signal: controller.signal });
    for await (const event of provider.stream?.(request, { signal: controller.signal }) ?? []) void event;
    expect(inner.calls).toHaveLength(4);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
