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
