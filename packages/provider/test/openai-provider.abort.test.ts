import type { ModelRequest, StreamEvent } from '@claw/core';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../src/index.js';

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

function firstRequest() {
  const recorded = server?.requests[0];
  if (recorded === undefined) throw new Error('the fake server received no request');
  return recorded;
}

describe('OpenAIProvider: abort', () => {
  it('mid-stream: rejects with the abort reason, delivers nothing after it, and the server sees the connection closed', async () => {
    // Two text chunks, then the server stalls with the connection open.
    const provider = await providerFor([
      { textChunks: ['one ', 'two ', 'three'], fault: { type: 'hang', afterChunks: 3 } },
    ]);
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    const events: StreamEvent[] = [];
    const iteration = (async () => {
      for await (const event of provider.stream(request, { signal: controller.signal })) {
        events.push(event);
        if (events.length === 2) controller.abort(reason);
      }
    })();
    await expect(iteration).rejects.toBe(reason);
    // The abort came while handling the second event: nothing may follow it.
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'text_delta']);
    await expect(firstRequest().closed).resolves.toEqual({ completed: false });
  });

  it('forwards deltas while the server is still streaming (not buffered until the end)', async () => {
    const provider = await providerFor([
      { textChunks: ['early'], fault: { type: 'hang', afterChunks: 2 } },
    ]);
    const controller = new AbortController();
    const stream = provider.stream(request, { signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    // The server never finishes this stream, so the delta can only come if it is forwarded live.
    await expect(iterator.next()).resolves.toEqual({
      done: false,
      value: { type: 'text_delta', delta: 'early' },
    });
    controller.abort();
    await expect(iterator.next()).rejects.toMatchObject({ name: 'AbortError' });
    await expect(firstRequest().closed).resolves.toEqual({ completed: false });
  });

  it('before the response headers: rejects with the reason and closes the connection', async () => {
    const provider = await providerFor([{ text: 'never', fault: { type: 'hang' } }]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = (async () => {
      for await (const event of provider.stream(request, { signal: controller.signal })) {
        throw new Error(`unexpected event ${event.type}`);
      }
    })();
    await waitFor(() => server?.requests.length === 1);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(firstRequest().closed).resolves.toEqual({ completed: false });
  });

  it('generate: aborting a hung call rejects with the reason', async () => {
    const provider = await providerFor([{ text: 'never', fault: { type: 'hang' } }]);
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = provider.generate(request, { signal: controller.signal });
    await waitFor(() => server?.requests.length === 1);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(firstRequest().closed).resolves.toEqual({ completed: false });
  });

  it('an already aborted signal fails before any request is sent', async () => {
    const provider = await providerFor([{ text: 'never' }]);
    const reason = new Error('already');
    await expect(provider.generate(request, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    const stream = provider.stream(request, { signal: AbortSignal.abort(reason) });
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toBe(reason);
    expect(server?.requests).toHaveLength(0);
  });

  it('breaking out of the iteration ends the HTTP request', async () => {
    const provider = await providerFor([
      { textChunks: ['a', 'b'], fault: { type: 'hang', afterChunks: 2 } },
    ]);
    for await (const event of provider.stream(request)) {
      expect(event.type).toBe('text_delta');
      break;
    }
    await expect(firstRequest().closed).resolves.toEqual({ completed: false });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (!condition()) throw new Error('condition not met in time');
}
