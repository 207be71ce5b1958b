import { afterEach, describe, expect, it } from 'vitest';
import { FakeOpenAIServer } from '../src/node.js';

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(body: object): Promise<Response> {
  return fetch(`${server?.baseURL ?? ''}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('FakeOpenAIServer wire format', () => {
  it('streams SSE chunks ending with a usage chunk and [DONE]', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'hi', usage: { promptTokens: 2, completionTokens: 1 } }] });
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await post({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const lines = (await response.text()).split('\n\n').filter(Boolean);
    expect(lines.at(-1)).toBe('data: [DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.replace(/^data: /, '')) as Record<string, unknown>);
    expect(chunks[0]).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant' } }] });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ finish_reason: 'stop' }] });
  });

  it('sends no usage chunk unless asked', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'hi' }] });
    const text = await (await post({ stream: true, messages: [] })).text();
    expect(text).not.toContain('usage');
  });

  it('answers a scripted status with an OpenAI-style error body and headers', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ fault: { type: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '1' } } }] });
    const response = await post({ stream: true, messages: [] });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ error: { message: 'slow down' } });
  });

  it('says so when the script has run out, and records every request', async () => {
    server = await FakeOpenAIServer.start({ turns: [] });
    const response = await post({ messages: [{ role: 'user', content: 'x' }] });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('no scripted turn left');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toEqual({ messages: [{ role: 'user', content: 'x' }] });
  });

  it('sends keep-alive comments before the first chunk', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'hi', keepAlive: { count: 2, intervalMs: 1 } }] });
    const text = await (await post({ stream: true, messages: [] })).text();
    expect(text.startsWith(': keep-alive\n\n: keep-alive\n\ndata: ')).toBe(true);
  });

  it('close() ends hung requests too', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ fault: { type: 'hang' } }] });
    const pending = post({ stream: true, messages: [] }).catch((error: unknown) => error);
    for (let attempt = 0; attempt < 200 && server.requests.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await server.close();
    server = undefined;
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('FakeOpenAIServer request hook', () => {
  it('calls onRequest with each recorded request, timed on arrival, before answering it', async () => {
    const events: string[] = [];
    const seen: Array<{ receivedAt: number; body: unknown }> = [];
    server = await FakeOpenAIServer.start({
      turns: (_body, index) => {
        events.push(`turn ${index}`);
        return { text: `answer ${index}` };
      },
      onRequest: (request) => {
        events.push(`request ${server?.requests.length ?? -1}`);
        seen.push({ receivedAt: request.receivedAt, body: request.body });
      },
    });
    const before = performance.now();
    await (await post({ stream: true, messages: [{ role: 'user', content: 'first' }] })).text();
    const between = performance.now();
    await (await post({ stream: true, messages: [{ role: 'user', content: 'second' }] })).text();
    const after = performance.now();

    expect(seen.map((request) => request.body)).toEqual([
      { stream: true, messages: [{ role: 'user', content: 'first' }] },
      { stream: true, messages: [{ role: 'user', content: 'second' }] },
    ]);
    // Recorded first, then the hook, then the turn is chosen and answered.
    expect(events).toEqual(['request 1', 'turn 0', 'request 2', 'turn 1']);
    // The arrival times are this process's performance.now(), each inside its request's window.
    const [first, second] = seen;
    expect(first?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(first?.receivedAt).toBeLessThanOrEqual(between);
    expect(second?.receivedAt).toBeGreaterThanOrEqual(between);
    expect(second?.receivedAt).toBeLessThanOrEqual(after);
    expect(server.requests.map((request) => request.receivedAt)).toEqual(
      seen.map((request) => request.receivedAt),
    );
  });

  it('stamps requests with their arrival time without a hook too', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'hi' }] });
    const before = performance.now();
    await (await post({ stream: true, messages: [] })).text();
    expect(server.requests[0]?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(server.requests[0]?.receivedAt).toBeLessThanOrEqual(performance.now());
  });
});
