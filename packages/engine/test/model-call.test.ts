import {
  hasErrorCode,
  sleep,
  type CallOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StreamEvent,
} from '@claw/core';
import { HttpError, PartialResponseError, RetryingProvider } from '@claw/provider';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine, ReporterError, spanAttributes, spanNames } from '../src/index.js';
import { callModel } from '../src/model-call.js';
import { SafeReporter } from '../src/safe-reporter.js';
import { newSession, settleMicrotasks, watch } from './helpers.js';

const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }] };
const reply = (text: string): ModelResponse => ({ message: { role: 'assistant', content: text }, finishReason: 'stop' });
const delta = (text: string): StreamEvent => ({ type: 'text_delta', delta: text });

/** A promise with its resolve function, for holding a callback until the test lets it go. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

type Script = (signal: AbortSignal) => AsyncGenerator<StreamEvent, void, undefined>;

/**
 * A streaming provider that runs `script` and counts what it produced and whether its stream was
 * closed (its `finally` ran).
 */
function scriptedStream(script: Script) {
  const probe = { produced: 0, closed: false };
  const provider: Provider = {
    name: 'probe',
    generate: () => Promise.reject(new Error('unused')),
    async *stream(_request: ModelRequest, options?: CallOptions): AsyncGenerator<StreamEvent> {
      try {
        for await (const event of script(options?.signal ?? new AbortController().signal)) {
          probe.produced += 1;
          yield event;
        }
      } finally {
        probe.closed = true;
      }
    },
  };
  return { provider, probe };
}

/** A reporter whose every text delta waits until the test releases it. */
function heldReporter() {
  const deltas: string[] = [];
  const holds: Array<ReturnType<typeof deferred>> = [];
  const reporter = new SafeReporter({
    onTextDelta: async (text) => {
      const hold = deferred();
      holds.push(hold);
      await hold.promise;
      deltas.push(text);
    },
  });
  return {
    reporter,
    deltas,
    /** How many deltas the reporter was handed so far (delivered or being delivered). */
    get handed() {
      return holds.length;
    },
    release: () => holds.at(-1)?.resolve(),
  };
}

/** One `callModel` with `reporter`, followed by `watch`. */
function startCall(
  provider: Provider,
  reporter: SafeReporter,
  options: { signal?: AbortSignal; onFirstOutput?: () => void } = {},
) {
  return watch(
    callModel({
      provider,
      request,
      signal: options.signal ?? new AbortController().signal,
      reporter,
      onFirstOutput: options.onFirstOutput ?? (() => undefined),
    }),
  );
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));

describe('callModel: the stream is pulled apart from the reporter (RT-3, ENG-6, ENG-7)', () => {
  it('pulls the whole stream while the reporter is still on the first delta, then reports every delta in order', async () => {
    const { provider, probe } = scriptedStream(async function* () {
      yield delta('a');
      yield delta('b');
      yield delta('c');
      yield { type: 'completed', response: reply('abc') };
    });
    const held = heldReporter();
    const call = startCall(provider, held.reporter);
    await settleMicrotasks();
    expect(held.handed).toBe(1);
    expect(probe).toEqual({ produced: 4, closed: true });
    // The result waits for the reporter.
    for (let index = 0; index < 3; index += 1) {
      expect(call.state.settled).toBe(false);
      held.release();
      await settleMicrotasks();
    }
    await call.done;
    expect(call.state.value).toEqual(reply('abc'));
    expect(held.deltas).toEqual(['a', 'b', 'c']);
  });

  it('calls onFirstOutput once, when the first output arrives, not when it is reported', async () => {
    const { provider } = scriptedStream(async function* () {
      yield { type: 'tool_call_delta', index: 0, id: 't', name: 'x', argumentsDelta: '' };
      yield delta('a');
      yield { type: 'completed', response: reply('a') };
    });
    const held = heldReporter();
    let firstOutputs = 0;
    const call = startCall(provider, held.reporter, { onFirstOutput: () => void (firstOutputs += 1) });
    await settleMicrotasks();
    expect(firstOutputs).toBe(1);
    expect(held.deltas).toEqual([]);
    held.release();
    await call.done;
    expect(firstOutputs).toBe(1);
  });

  it('a stream error comes after the deltas that arrived before it', async () => {
    const failure = new Error('connection reset');
    const { provider, probe } = scriptedStream(async function* () {
      yield delta('a');
      yield delta('b');
      throw failure;
    });
    const held = heldReporter();
    const call = startCall(provider, held.reporter);
    await settleMicrotasks();
    expect(probe.closed).toBe(true);
    expect(call.state.settled).toBe(false);
    held.release();
    await settleMicrotasks();
    expect(call.state.settled).toBe(false);
    held.release();
    await call.done.catch(() => undefined);
    expect(call.state.error).toBe(failure);
    expect(held.deltas).toEqual(['a', 'b']);
  });

  it('a reporter failure stops at once: no further delta is reported, the producer stops, the stream is closed', async () => {
    const { provider, probe } = scriptedStream(async function* () {
      for (;;) {
        yield delta('x');
        await Promise.resolve();
      }
    });
    const failure = new Error('socket closed');
    let reported = 0;
    const reporter = new SafeReporter({
      onTextDelta: () => {
        reported += 1;
        if (reported === 2) throw failure;
      },
    });
    const error = await startCall(provider, reporter).done.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReporterError);
    expect((error as ReporterError).cause).toBe(failure);
    await settleMicrotasks();
    expect(probe.closed).toBe(true);
    const produced = probe.produced;
    await settleMicrotasks();
    expect(probe.produced).toBe(produced);
    expect(reported).toBe(2);
  });

  it('an abort rejects with the signal\'s reason at once, while the reporter is still busy, and closes the stream', async () => {
    const { provider, probe } = scriptedStream(async function* (signal) {
      yield delta('a');
      yield delta('b');
      await untilAborted(signal);
    });
    const held = heldReporter();
    const controller = new AbortController();
    const call = startCall(provider, held.reporter, { signal: controller.signal });
    await settleMicrotasks();
    expect(held.handed).toBe(1);
    const reason = new Error('Ctrl-C');
    controller.abort(reason);
    await settleMicrotasks();
    expect(call.state).toEqual({ settled: true, error: reason });
    expect(probe.closed).toBe(true);
    // The reporter is never handed the delta that was still queued.
    held.release();
    await settleMicrotasks();
    expect(held.handed).toBe(1);
  });

  it('closes the stream on every way out (ENG-6)', async () => {
    const ways: Record<string, { script: Script; reporter?: SafeReporter; abort?: boolean }> = {
      // After the reply the stream would block forever: only closing it ends it.
      reply: {
        script: async function* (signal) {
          yield delta('a');
          yield { type: 'completed', response: reply('a') };
          await untilAborted(signal);
        },
      },
      error: {
        script: async function* () {
          yield delta('a');
          throw new Error('boom');
        },
      },
      'reporter failure': {
        script: async function* (signal) {
          yield delta('a');
          await untilAborted(signal);
        },
        reporter: new SafeReporter({
          onTextDelta: () => {
            throw new Error('reporter down');
          },
        }),
      },
      abort: {
        script: async function* (signal) {
          yield delta('a');
          await untilAborted(signal);
        },
        abort: true,
      },
      'no final message': {
        script: async function* () {
          yield delta('a');
        },
      },
    };
    for (const [way, setup] of Object.entries(ways)) {
      const { provider, probe } = scriptedStream(setup.script);
      const controller = new AbortController();
      const call = startCall(provider, setup.reporter ?? new SafeReporter({}), { signal: controller.signal });
      await settleMicrotasks();
      if (setup.abort === true) controller.abort();
      await call.done.catch(() => undefined);
      await settleMicrotasks();
      expect({ way, closed: probe.closed }).toEqual({ way, closed: true });
    }
  });
});

describe('the model call timers never count the reporter\'s time (RT-3, PRV-5)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const slowDeltaMs = 1_000;
  // Far below the reporter's 4 × 1 s; the stream itself takes 30 ms.
  const timeouts = { attempts: 1, callTimeoutMs: 100, firstTokenTimeoutMs: 50 };
  const chunks = ['Hello', ', ', 'world', '!'];

  it('a reporter that takes 1 s per delta under a 100 ms call timeout: the run completes with the full text', async () => {
    const provider = new RetryingProvider(new ScriptedProvider([{ textChunks: chunks, chunkDelayMs: 10 }]), timeouts);
    const delivered: string[] = [];
    const running = new Engine({ provider, gate: new AllowAllGate() }).run('greet', {
      session: newSession(),
      reporter: {
        onTextDelta: async (text) => {
          await sleep(slowDeltaMs);
          delivered.push(text);
        },
      },
    });
    await vi.advanceTimersByTimeAsync(chunks.length * slowDeltaMs + 100);
    const result = await running;
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'completed', finalText: 'Hello, world!' });
    expect(delivered).toEqual(chunks);
  });

  it('contrast: the same slow consumption straight on the provider\'s stream times out', async () => {
    const provider = new RetryingProvider(new ScriptedProvider([{ textChunks: chunks, chunkDelayMs: 10 }]), timeouts);
    const stream = provider.stream?.(request) ?? [];
    const consuming = (async () => {
      for await (const event of stream) {
        if (event.type === 'text_delta') await sleep(slowDeltaMs);
      }
    })();
    const outcome = consuming.then(() => undefined, (error: unknown) => error);
    await vi.advanceTimersByTimeAsync(chunks.length * slowDeltaMs + 100);
    const error = await outcome;
    expect(error).toBeInstanceOf(PartialResponseError);
    expect(hasErrorCode(error, 'model_call_timeout')).toBe(true);
  });

  it('ttfb is the time to the first output from the provider, however slow the reporter', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const provider = new ScriptedProvider([
      { textChunks: ['a', 'b'], delayMs: 120 },
      { textChunks: ['c'], delayMs: 70 },
    ]);
    // Two runs on one session: the second call's ttfb does not include the first's reporting.
    const engine = new Engine({ provider, gate: new AllowAllGate(), tracer, now: () => Date.now() });
    const session = newSession();
    const reporter = { onTextDelta: () => sleep(slowDeltaMs) };
    for (const prompt of ['one', 'two']) {
      const running = engine.run(prompt, { session, reporter });
      await vi.advanceTimersByTimeAsync(5 * slowDeltaMs);
      expect((await running).status).toBe('completed');
    }
    const thinking = exporter.getFinishedSpans().filter((span) => span.name === spanNames.thinking);
    expect(thinking.map((span) => span.attributes[spanAttributes.ttfbMs])).toEqual([120, 70]);
  });
});

describe('a model call that is tried again is reported', () => {
  it.each([true, false])('streaming %s: the reporter hears each retry with its reason, and the run goes on', async (streaming) => {
    const inner = new ScriptedProvider(
      [{ error: new HttpError('overloaded', { status: 503 }) }, { text: 'fine now' }],
      { streaming },
    );
    const retries: unknown[] = [];
    const provider = new RetryingProvider(inner, { backoffMs: 1, callTimeoutMs: 0, firstTokenTimeoutMs: 0 });
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('hi', {
      session: newSession(),
      reporter: { onModelRetry: (report) => void retries.push(report) },
    });
    expect(result).toMatchObject({ status: 'completed', finalText: 'fine now' });
    expect(retries).toEqual([{ attempt: 1, attempts: 3, delayMs: 1, reason: 'overloaded' }]);
  });

  it('a reporter that fails on a retry does not stop the run', async () => {
    const inner = new ScriptedProvider([{ error: new HttpError('busy', { status: 429 }) }, { text: 'done' }]);
    const provider = new RetryingProvider(inner, { backoffMs: 1, callTimeoutMs: 0, firstTokenTimeoutMs: 0 });
    let told = 0;
    const result = await new Engine({ provider, gate: new AllowAllGate() }).run('hi', {
      session: newSession(),
      reporter: {
        onModelRetry: () => {
          told += 1;
          throw new Error('the screen is gone');
        },
      },
    });
    expect(told).toBe(1);
    expect(result).toMatchObject({ status: 'completed', finalText: 'done' });
  });
});
