import { ClawError, type ModelRequest } from '@claw/core';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpError, NetworkError, OpenAIProvider, findHttpError, parseRetryAfter } from '../src/index.js';

const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }] };
let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function providerFor(turns: FakeTurn[]): Promise<OpenAIProvider> {
  server = await FakeOpenAIServer.start({ turns });
  return new OpenAIProvider({ apiKey: 'test-key', model: 'fake-model', baseURL: server.baseURL });
}

async function streamError(provider: OpenAIProvider): Promise<unknown> {
  try {
    for await (const event of provider.stream(request)) void event;
  } catch (error) {
    return error;
  }
  throw new Error('the stream did not fail');
}

describe('OpenAIProvider: HTTP errors become HttpError', () => {
  for (const status of [401, 429, 500]) {
    for (const mode of ['stream', 'generate'] as const) {
      it(`${status} (${mode}) → HttpError with that status, the SDK error as cause, one request`, async () => {
        const provider = await providerFor([
          { fault: { type: 'status', status, message: `upstream says ${status}` } },
        ]);
        const error =
          mode === 'stream'
            ? await streamError(provider)
            : await provider.generate(request).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(HttpError);
        expect(error).toBeInstanceOf(ClawError);
        const httpError = error as HttpError;
        expect(httpError.status).toBe(status);
        expect(httpError.code).toBe('http_error');
        expect(httpError.message).toContain(`HTTP ${status}`);
        expect(httpError.message).toContain(`upstream says ${status}`);
        expect(httpError.cause).toBeInstanceOf(Error);
        expect((httpError.cause as { status?: number }).status).toBe(status);
        // The SDK's own retries are off: retrying is RetryingProvider's job.
        expect(server?.requests).toHaveLength(1);

        // Still reachable after outer wrapping, twice over.
        const wrapped = new ClawError('turn 3 failed', {
          code: 'run_failed',
          cause: new Error('model call failed', { cause: error }),
        });
        expect(findHttpError(wrapped)).toBe(error);
        expect(findHttpError(wrapped)?.status).toBe(status);
      });
    }
  }

  it('keeps the retry-after hint of a 429', async () => {
    const provider = await providerFor([
      { fault: { type: 'status', status: 429, headers: { 'retry-after': '2' } } },
    ]);
    const error = await streamError(provider);
    expect(findHttpError(error)?.retryAfterMs).toBe(2000);
  });

  it('says what to check on 401', async () => {
    const provider = await providerFor([{ fault: { type: 'status', status: 401 } }]);
    const error = await streamError(provider);
    expect((error as Error).message).toContain('check the API key');
  });

  it('an unreachable server is a NetworkError, not an HttpError, naming the address tried', async () => {
    const provider = await providerFor([]);
    const baseURL = server?.baseURL ?? '';
    await server?.close();
    server = undefined;
    const unreachable = new OpenAIProvider({ apiKey: 'k', model: 'm', baseURL });
    const error = await unreachable.generate(request).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect(findHttpError(error)).toBeUndefined();
    expect((error as Error).message).toMatch(
      new RegExp(`^could not reach the model API at ${baseURL}: Connection error: fetch failed: .*ECONNREFUSED`),
    );
    expect((error as Error).message).toContain('(is the server up, and is that its address?)');
    void provider;
  });

  it('refuses to start without an API key or model, saying which', () => {
    expect(() => new OpenAIProvider({ apiKey: '', model: 'm' })).toThrow(/API key/);
    expect(() => new OpenAIProvider({ apiKey: 'k', model: ' ' })).toThrow(/model name/);
  });
});

describe('parseRetryAfter', () => {
  it('reads milliseconds, seconds and HTTP dates', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '150' }))).toBe(150);
    expect(parseRetryAfter(new Headers({ 'retry-after': '1.5' }))).toBe(1500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(
      parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now),
    ).toBe(3000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(new Headers())).toBeUndefined();
  });
});
