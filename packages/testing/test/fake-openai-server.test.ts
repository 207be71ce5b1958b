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

/** The `data:` chunks of an SSE body, parsed (without `[DONE]`). */
function dataChunks(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.slice('data: '.length)) as Record<string, unknown>);
}

describe('FakeOpenAIServer: reasoning, cached tokens, silences and raw answers', () => {
  it('streams reasoning before the text, under reasoning_content by default', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ reasoning: ['Let me', ' think'], text: 'Done.' }] });
    const chunks = dataChunks(await (await post({ stream: true, messages: [] })).text());
    const deltas = chunks.map((chunk) => (chunk.choices as Array<{ delta: object }>)[0]?.delta);
    expect(deltas.slice(1, 4)).toEqual([
      { reasoning_content: 'Let me' },
      { reasoning_content: ' think' },
      { content: 'Done.' },
    ]);
  });

  it('puts reasoning under `reasoning` when asked, streamed and not', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { reasoning: ['hmm'], reasoningField: 'reasoning', text: 'ok' },
        { reasoning: ['a', 'b'], reasoningField: 'reasoning', text: 'ok' },
        { reasoning: ['c', 'd'], text: 'ok' },
      ],
    });
    const chunks = dataChunks(await (await post({ stream: true, messages: [] })).text());
    expect(chunks[1]).toMatchObject({ choices: [{ delta: { reasoning: 'hmm' } }] });
    expect(await (await post({ messages: [] })).json()).toMatchObject({
      choices: [{ message: { reasoning: 'ab', content: 'ok' } }],
    });
    expect(await (await post({ messages: [] })).json()).toMatchObject({
      choices: [{ message: { reasoning_content: 'cd', content: 'ok' } }],
    });
  });

  it('sends cached tokens as prompt_tokens_details.cached_tokens, and nothing of the kind without them', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { text: 'hi', usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 80 } },
        { text: 'hi', usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 80 } },
        { text: 'hi', usage: { promptTokens: 100, completionTokens: 5 } },
      ],
    });
    const streamed = dataChunks(
      await (await post({ stream: true, stream_options: { include_usage: true }, messages: [] })).text(),
    );
    expect(streamed.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 100, total_tokens: 105, prompt_tokens_details: { cached_tokens: 80 } },
    });
    expect(await (await post({ messages: [] })).json()).toMatchObject({
      usage: { prompt_tokens_details: { cached_tokens: 80 } },
    });
    expect(JSON.stringify(await (await post({ messages: [] })).json())).not.toContain('prompt_tokens_details');
  });

  it('firstChunkDelayMs: headers at once, then silence before the first data chunk', async () => {
    // The 50 ms of silence are timed from the request's arrival (the hook runs before the server
    // starts its own wait), so the server's 300 ms timer cannot fire first however busy the
    // machine: timers fire in the order they are due.
    let silence: Promise<string> | undefined;
    server = await FakeOpenAIServer.start({
      turns: [{ text: 'late', firstChunkDelayMs: 300 }],
      onRequest: () => {
        silence = new Promise((resolve) => setTimeout(resolve, 50, 'silence'));
      },
    });
    const response = await post({ stream: true, messages: [] });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = reader.read();
    const early = await Promise.race([first.then(() => 'data'), silence]);
    expect(early).toBe('silence');
    const { value } = await first;
    // Timers fire late, never early: the chunk came at least the delay after the request.
    expect(performance.now() - server.requests[0]!.receivedAt).toBeGreaterThanOrEqual(299);
    expect(new TextDecoder().decode(value)).toMatch(/^data: /);
    await reader.cancel();
  });

  it('raw: status, content type, headers and body as given, an array piece by piece', async () => {
    const pieces = [': OPENROUTER PROCESSING\n\n', 'data: {"choices":[]', '}\n\n', 'data: [DONE]\n\n'];
    server = await FakeOpenAIServer.start({
      turns: [
        { raw: { body: pieces, chunkDelayMs: 30, headers: { 'x-request-id': 'req_1' } }, text: 'ignored' },
        { raw: { status: 200, body: '{"error":{"message":"upstream failed","code":502}}' } },
        { raw: { status: 400, contentType: 'application/json; charset=utf-8', body: '{"object":"error","message":"too long","code":400}' } },
      ],
    });
    const streamed = await post({ stream: true, messages: [] });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    expect(streamed.headers.get('x-request-id')).toBe('req_1');
    const reader = (streamed.body as ReadableStream<Uint8Array>).getReader();
    const reads: string[] = [];
    for (let result = await reader.read(); result.done !== true; result = await reader.read()) {
      reads.push(new TextDecoder().decode(result.value));
    }
    expect(reads.join('')).toBe(pieces.join(''));
    // With a pause between them, the pieces arrive as separate reads.
    expect(reads.length).toBeGreaterThan(1);

    const reply = await post({ messages: [] });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(await reply.text()).toBe('{"error":{"message":"upstream failed","code":502}}');

    const rejected = await post({ stream: true, messages: [] });
    expect(rejected.status).toBe(400);
    expect(rejected.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await rejected.json()).toEqual({ object: 'error', message: 'too long', code: 400 });
  });
});
