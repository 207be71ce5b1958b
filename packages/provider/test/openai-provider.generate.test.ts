import { getEventListeners } from 'node:events';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../src/index.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('OpenAIProvider.generate', () => {
  it('returns the whole message with tool calls and usage, without streaming', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        {
          text: 'Reading both.',
          toolCalls: [
            { id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
            { id: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
          ],
          usage: { promptTokens: 20, completionTokens: 7 },
        },
      ],
    });
    const provider = new OpenAIProvider({ apiKey: 'k', model: 'fake-model', baseURL: server.baseURL });
    const response = await provider.generate({ messages: [{ role: 'user', content: 'go' }] });
    expect(response).toEqual({
      message: {
        role: 'assistant',
        content: 'Reading both.',
        toolCalls: [
          { id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
          { id: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
        ],
      },
      usage: { promptTokens: 20, completionTokens: 7, totalTokens: 27 },
      finishReason: 'tool_calls',
      model: 'fake-model',
    });
    expect(server.requests[0]?.body).toMatchObject({ stream: false, model: 'fake-model' });
  });

  it('sends custom headers', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'hi' }] });
    const provider = new OpenAIProvider({
      apiKey: 'k',
      model: 'm',
      baseURL: server.baseURL,
      headers: { 'x-team': 'claw' },
    });
    await provider.generate({ messages: [{ role: 'user', content: 'go' }] });
    expect(server.requests[0]?.headers['x-team']).toBe('claw');
  });
});

describe('OpenAIProvider: abort listeners', () => {
  it('leaves no listener on the caller\'s signal, however many calls it covers', async () => {
    server = await FakeOpenAIServer.start({ turns: Array.from({ length: 24 }, () => ({ text: 'ok' })) });
    const provider = new OpenAIProvider({ apiKey: 'k', model: 'm', baseURL: server.baseURL });
    const controller = new AbortController();
    const request = { messages: [{ role: 'user' as const, content: 'go' }] };
    for (let index = 0; index < 12; index += 1) {
      await provider.generate(request, { signal: controller.signal });
      for await (const event of provider.stream(request, { signal: controller.signal })) void event;
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('OpenAIProvider.generate: reasoning and cached tokens (REAL-4, REAL-5)', () => {
  for (const reasoningField of ['reasoning_content', 'reasoning'] as const) {
    it(`reads message.${reasoningField} into message.reasoning`, async () => {
      server = await FakeOpenAIServer.start({
        turns: [{ reasoning: ['Two ', 'steps.'], reasoningField, text: 'Answer.', usage: { promptTokens: 30, completionTokens: 4, cachedTokens: 16 } }],
      });
      const provider = new OpenAIProvider({ apiKey: 'k', model: 'fake-model', baseURL: server.baseURL });
      const response = await provider.generate({ messages: [{ role: 'user', content: 'go' }] });
      expect(response.message).toEqual({ role: 'assistant', content: 'Answer.', reasoning: 'Two steps.' });
      expect(response.usage).toEqual({
        promptTokens: 30,
        completionTokens: 4,
        totalTokens: 34,
        cachedPromptTokens: 16,
      });
    });
  }

  it('leaves reasoning out when the server sent none', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'plain' }] });
    const provider = new OpenAIProvider({ apiKey: 'k', model: 'fake-model', baseURL: server.baseURL });
    const response = await provider.generate({ messages: [{ role: 'user', content: 'go' }] });
    expect(response.message).not.toHaveProperty('reasoning');
    expect(response.usage).not.toHaveProperty('cachedPromptTokens');
  });
});

describe('OpenAIProvider: a fetch of the caller\'s own', () => {
  it('is used for every request, and error replies are still read through it', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { text: 'hi' },
        { raw: { status: 200, contentType: 'application/json', body: '{"error":{"message":"no provider available","code":503}}' } },
      ],
    });
    const seen: string[] = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return globalThis.fetch(input, init);
    };
    const provider = new OpenAIProvider({ apiKey: 'k', model: 'm', baseURL: server.baseURL, fetch });
    await provider.generate({ messages: [{ role: 'user', content: 'go' }] });
    const failure = await (async () => {
      for await (const event of provider.stream({ messages: [{ role: 'user', content: 'go' }] })) void event;
    })().catch((error: unknown) => error);
    expect(seen).toHaveLength(2);
    expect(seen.every((url) => url.endsWith('/chat/completions'))).toBe(true);
    expect(failure).toMatchObject({ code: 'model_stream_error', serverCode: 503, retryable: true });
  });
});
