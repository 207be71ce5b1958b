import type { ModelRequest, StreamEvent } from '@claw/core';
import { splitIntoPieces } from '@claw/testing';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, OpenAIProvider } from '../src/index.js';

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

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function completedOf(events: StreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== 'completed') throw new Error(`last event is ${last?.type}, not completed`);
  return last.response;
}

describe('OpenAIProvider.stream: assembling replies from chunks', () => {
  const readArgs = JSON.stringify({ path: 'src/some/deeply/nested/file name.ts', limit: 200 });
  const writeArgs = JSON.stringify({ path: 'out/ü-ñ.txt', content: 'line 1\nline "2"\n{}' });

  for (const interleave of [false, true]) {
    for (const seed of [1, 7, 42, 1234]) {
      it(`assembles two parallel tool calls from 1-7 character pieces (interleaved: ${interleave}, seed ${seed})`, async () => {
        const provider = await providerFor([
          {
            interleaveToolCalls: interleave,
            toolCalls: [
              {
                id: 'call_a',
                name: 'read_file',
                arguments: readArgs,
                argumentChunks: splitIntoPieces(readArgs, { min: 1, max: 7, seed }),
              },
              {
                id: 'call_b',
                name: 'write_file',
                arguments: writeArgs,
                argumentChunks: splitIntoPieces(writeArgs, { min: 1, max: 7, seed: seed + 1 }),
              },
            ],
          },
        ]);
        const events = await collect(provider.stream(request));
        const response = completedOf(events);
        expect(response.message.toolCalls).toEqual([
          { id: 'call_a', name: 'read_file', arguments: readArgs },
          { id: 'call_b', name: 'write_file', arguments: writeArgs },
        ]);
        expect(response.finishReason).toBe('tool_calls');
        expect(response.message.content).toBe('');
        // The deltas carry the same pieces: id and name once per call, in the first piece.
        const deltas = events.filter((event) => event.type === 'tool_call_delta');
        for (const [index, call] of [readArgs, writeArgs].entries()) {
          const own = deltas.filter((delta) => delta.index === index);
          expect(own.map((delta) => delta.argumentsDelta).join('')).toBe(call);
          expect(own.filter((delta) => delta.id !== undefined)).toHaveLength(1);
          expect(own[0]?.id).toBe(index === 0 ? 'call_a' : 'call_b');
          expect(own[0]?.name).toBe(index === 0 ? 'read_file' : 'write_file');
        }
      });
    }
  }

  it('forwards text deltas in order, then the tool calls that follow the text', async () => {
    const provider = await providerFor([
      {
        textChunks: ['Let me ', 'look at ', 'the file.'],
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
      },
    ]);
    const events = await collect(provider.stream(request));
    expect(events.map((event) => event.type)).toEqual([
      'text_delta',
      'text_delta',
      'text_delta',
      'tool_call_delta',
      'completed',
    ]);
    expect(events.slice(0, 3)).toEqual([
      { type: 'text_delta', delta: 'Let me ' },
      { type: 'text_delta', delta: 'look at ' },
      { type: 'text_delta', delta: 'the file.' },
    ]);
    const response = completedOf(events);
    expect(response.message).toEqual({
      role: 'assistant',
      content: 'Let me look at the file.',
      toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
    });
  });

  it('reads usage from the final chunk and asks the server for it', async () => {
    const provider = await providerFor([
      { text: 'done', usage: { promptTokens: 123, completionTokens: 45 } },
    ]);
    const response = completedOf(await collect(provider.stream(request)));
    expect(response.usage).toEqual({ promptTokens: 123, completionTokens: 45, totalTokens: 168 });
    expect(response.model).toBe('fake-model');
    expect(server?.requests[0]?.body).toMatchObject({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('completes without usage when the server sends none', async () => {
    const provider = await providerFor([{ text: 'done', usage: null }]);
    const response = completedOf(await collect(provider.stream(request)));
    expect(response.message.content).toBe('done');
    expect(response).not.toHaveProperty('usage');
    expect(response.finishReason).toBe('stop');
  });

  it('accepts a stream that ends cleanly after the finish reason but without [DONE]', async () => {
    // chunks: role, text, finish, usage → cut before the usage chunk, so no [DONE] either.
    const provider = await providerFor([{ text: 'whole answer', fault: { type: 'cut', afterChunks: 3, graceful: true } }]);
    const response = completedOf(await collect(provider.stream(request)));
    expect(response.message.content).toBe('whole answer');
    expect(response.finishReason).toBe('stop');
    expect(response).not.toHaveProperty('usage');
  });

  it('rejects a stream that ends without [DONE] before the reply was finished', async () => {
    const provider = await providerFor([
      { textChunks: ['half ', 'an answer'], fault: { type: 'cut', afterChunks: 2, graceful: true } },
    ]);
    const events: StreamEvent[] = [];
    const error = await collect(
      (async function* () {
        for await (const event of provider.stream(request)) {
          events.push(event);
          yield event;
        }
      })(),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('stream_incomplete');
    expect(events).toEqual([{ type: 'text_delta', delta: 'half ' }]);
  });

  it('rejects with a NetworkError when the connection is destroyed mid-stream', async () => {
    const provider = await providerFor([
      { textChunks: ['a', 'b', 'c'], fault: { type: 'cut', afterChunks: 2 } },
    ]);
    const error = await collect(provider.stream(request)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('sends history, tool calls, Observations and tool definitions in the wire format', async () => {
    const provider = await providerFor([{ text: 'ok' }]);
    await collect(
      provider.stream({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'read a.ts' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'export {}', isError: false },
        ],
        tools: [
          {
            name: 'read_file',
            description: 'Read a file',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
          },
        ],
        model: 'other-model',
      }),
    );
    expect(server?.requests[0]?.body).toMatchObject({
      model: 'other-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'read a.ts' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'export {}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
          },
        },
      ],
    });
    expect(server?.requests[0]?.headers.authorization).toBe('Bearer test-key');
  });
});

describe('OpenAIProvider.stream: reasoning and cached tokens (REAL-4, REAL-5)', () => {
  for (const reasoningField of ['reasoning_content', 'reasoning'] as const) {
    it(`streams ${reasoningField} as reasoning_delta events, apart from the text`, async () => {
      const provider = await providerFor([
        {
          reasoning: ['The user', ' says hi.'],
          reasoningField,
          textChunks: ['Hel', 'lo!'],
          usage: { promptTokens: 50, completionTokens: 9, cachedTokens: 32 },
        },
      ]);
      const events = await collect(provider.stream(request));
      expect(events.slice(0, 4)).toEqual([
        { type: 'reasoning_delta', delta: 'The user' },
        { type: 'reasoning_delta', delta: ' says hi.' },
        { type: 'text_delta', delta: 'Hel' },
        { type: 'text_delta', delta: 'lo!' },
      ]);
      const response = completedOf(events);
      expect(response.message).toEqual({ role: 'assistant', content: 'Hello!', reasoning: 'The user says hi.' });
      expect(response.usage).toEqual({
        promptTokens: 50,
        completionTokens: 9,
        totalTokens: 59,
        cachedPromptTokens: 32,
      });
    });
  }

  it('never sends reasoning of earlier replies back to the server', async () => {
    const provider = await providerFor([{ text: 'ok' }]);
    await collect(
      provider.stream({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Hello!', reasoning: 'The user greets me.' },
          { role: 'user', content: 'read a.ts' },
          {
            role: 'assistant',
            content: '',
            reasoning: 'I need the file.',
            toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'export {}' },
        ],
      }),
    );
    const body = server?.requests[0]?.body as { messages: Array<Record<string, unknown>> };
    expect(body.messages[1]).toEqual({ role: 'assistant', content: 'Hello!' });
    for (const message of body.messages) {
      expect(Object.keys(message)).not.toContain('reasoning');
      expect(Object.keys(message)).not.toContain('reasoning_content');
    }
  });
});
