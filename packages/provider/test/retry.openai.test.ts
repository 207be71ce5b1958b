import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ModelTimeoutError,
  NetworkError,
  OpenAIProvider,
  PartialResponseError,
  RetryingProvider,
  findHttpError,
  type RetryInfo,
  type RetryingProviderOptions,
} from '../src/index.js';
import { drain, request, textOf } from './retry-helpers.js';

// The whole stack: RetryingProvider → OpenAIProvider → the real `openai` client → HTTP over
// loopback → the fake server. Real timers, kept short.
let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function retryingFor(turns: FakeTurn[], options: RetryingProviderOptions) {
  server = await FakeOpenAIServer.start({ turns });
  const openai = new OpenAIProvider({ apiKey: 'test-key', model: 'fake-model', baseURL: server.baseURL });
  const provider = new RetryingProvider(openai, options);
  const stream = () => {
    if (provider.stream === undefined) throw new Error('the OpenAI provider should stream');
    return provider.stream(request);
  };
  return { provider, stream, requests: server.requests };
}

describe('RetryingProvider over OpenAIProvider and the fake server', () => {
  it('429 then success: 2 requests, one clean stream to the consumer, the retry-after hint honoured', async () => {
    const retries: RetryInfo[] = [];
    const { stream, requests } = await retryingFor(
      [
        { fault: { type: 'status', status: 429, headers: { 'retry-after-ms': '30' } } },
        { textChunks: ['Hel', 'lo'] },
      ],
      { backoffMs: 10, onRetry: (info) => retries.push(info) },
    );
    const { events, error } = await drain(stream());
    expect(error).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'text_delta', 'completed']);
    expect(textOf(events)).toBe('Hello');
    const last = events.at(-1);
    expect(last?.type === 'completed' ? last.response.message.content : undefined).toBe('Hello');
    expect(requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.delayMs).toBe(30);
    expect(findHttpError(retries[0]?.error)?.status).toBe(429);
  });

  it('generate: 503 then success → 2 requests', async () => {
    const { provider, requests } = await retryingFor(
      [{ fault: { type: 'status', status: 503 } }, { text: 'fine' }],
      { backoffMs: 5 },
    );
    await expect(provider.generate(request)).resolves.toMatchObject({ message: { content: 'fine' } });
    expect(requests).toHaveLength(2);
  });

  it('401 → 1 request', async () => {
    const { stream, requests } = await retryingFor(
      [{ fault: { type: 'status', status: 401 } }, { text: 'never' }],
      { backoffMs: 5 },
    );
    const { error } = await drain(stream());
    expect(findHttpError(error)?.status).toBe(401);
    expect(requests).toHaveLength(1);
  });

  it('a keep-alive-only stream trips the first-token timer, on every attempt', async () => {
    const keepAliveOnly: FakeTurn = { text: 'too late', keepAlive: { count: 60, intervalMs: 10 } };
    const { stream, requests } = await retryingFor([keepAliveOnly, keepAliveOnly], {
      attempts: 2,
      backoffMs: 0,
      firstTokenTimeoutMs: 80,
    });
    const { events, error } = await drain(stream());
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect((error as ModelTimeoutError).code).toBe('model_first_token_timeout');
    expect(requests).toHaveLength(2);
    // The timer aborted each HTTP request: the server saw both connections closed early.
    await expect(Promise.all(requests.map((recorded) => recorded.closed))).resolves.toEqual([
      { completed: false },
      { completed: false },
    ]);
  });

  it('keep-alive comments then content in time: one request, the whole reply', async () => {
    const { stream, requests } = await retryingFor(
      [{ text: 'worth the wait', keepAlive: { count: 3, intervalMs: 10 } }],
      { firstTokenTimeoutMs: 2000 },
    );
    const { events, error } = await drain(stream());
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('worth the wait');
    expect(requests).toHaveLength(1);
  });

  it('a hung server: the call timeout ends the HTTP request', async () => {
    const { provider, requests } = await retryingFor([{ text: 'never', fault: { type: 'hang' } }], {
      attempts: 1,
      callTimeoutMs: 80,
    });
    await expect(provider.generate(request)).rejects.toMatchObject({ code: 'model_call_timeout' });
    expect(requests).toHaveLength(1);
    await expect(requests[0]?.closed).resolves.toEqual({ completed: false });
  });

  it('a stream cut after text: a partial response, not retried', async () => {
    // Chunk 0 is the role chunk, chunk 1 the first text; the response ends after it.
    const { stream, requests } = await retryingFor(
      [{ textChunks: ['Hel', 'lo'], fault: { type: 'cut', afterChunks: 2, graceful: true } }, { text: 'never' }],
      { backoffMs: 0 },
    );
    const { events, error } = await drain(stream());
    expect(textOf(events)).toBe('Hel');
    expect(error).toBeInstanceOf(PartialResponseError);
    expect((error as PartialResponseError).cause).toBeInstanceOf(NetworkError);
    expect(((error as PartialResponseError).cause as NetworkError).code).toBe('stream_incomplete');
    expect(requests).toHaveLength(1);
  });

  it('a connection cut before any text: retried, the consumer sees one clean stream', async () => {
    const { stream, requests } = await retryingFor(
      [{ textChunks: ['Hel', 'lo'], fault: { type: 'cut', afterChunks: 1, graceful: true } }, { textChunks: ['Hel', 'lo'] }],
      { backoffMs: 0 },
    );
    const { events, error } = await drain(stream());
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('Hello');
    expect(requests).toHaveLength(2);
  });
});
