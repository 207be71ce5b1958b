import type { ModelRequest, ModelResponse, StreamEvent, ToolCall } from '@claw/core';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../src/index.js';
import { checkError, rawTurn, type Split } from './fixture-helpers.js';
import { drain } from './retry-helpers.js';
import { fixtures, type ExpectedReply } from './fixtures/index.js';

// Every fixture through the real `openai` client, over loopback, from the fake server's raw
// answer: what real servers send must come out as claw's reply or claw's error (REAL-4..6).
const request: ModelRequest = {
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object' } }],
};
let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function checkReply(response: ModelResponse, expected: ExpectedReply): void {
  expect(response.message).toEqual({
    role: 'assistant',
    content: expected.text,
    ...(expected.toolCalls === undefined ? {} : { toolCalls: expected.toolCalls }),
    ...(expected.reasoning === undefined ? {} : { reasoning: expected.reasoning }),
  });
  if (expected.usage === undefined) expect(response).not.toHaveProperty('usage');
  else expect(response.usage).toEqual(expected.usage);
  expect(response.finishReason).toBe(expected.finishReason);
}

/** The tool calls the `tool_call_delta` events add up to. */
function callsOfDeltas(events: StreamEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type !== 'tool_call_delta') continue;
    const call = (calls[event.index] ??= { id: '', name: '', arguments: '' });
    if (event.id !== undefined) call.id = event.id;
    if (event.name !== undefined) call.name = event.name;
    call.arguments += event.argumentsDelta;
  }
  return calls;
}

function joined(events: StreamEvent[], type: 'text_delta' | 'reasoning_delta'): string {
  return events.map((event) => (event.type === type ? event.delta : '')).join('');
}

describe('replies and errors of real servers, streamed (fixtures)', () => {
  for (const fixture of fixtures) {
    const answer = fixture.stream;
    if (answer === undefined) continue;
    for (const split of ['by event', 'at random'] satisfies Split[]) {
      it(`${fixture.name} (${fixture.server}), pieces cut ${split}`, async () => {
        server = await FakeOpenAIServer.start({ turns: [rawTurn(answer, split)] });
        const provider = new OpenAIProvider({ apiKey: 'test-key', model: 'some-model', baseURL: server.baseURL });
        const { events, error } = await drain(provider.stream(request));
        if ('reply' in fixture.expect) {
          const expected = fixture.expect.reply;
          expect(error).toBeUndefined();
          const last = events.at(-1);
          if (last?.type !== 'completed') throw new Error(`the stream ended with ${last?.type}`);
          checkReply(last.response, expected);
          // The deltas carry the same reply as the final message.
          expect(joined(events, 'text_delta')).toBe(expected.text);
          expect(joined(events, 'reasoning_delta')).toBe(expected.reasoning ?? '');
          expect(callsOfDeltas(events)).toEqual(expected.toolCalls ?? []);
          expect(events.filter((event) => event.type === 'completed')).toHaveLength(1);
        } else {
          const expected = fixture.expect.error;
          checkError(error, expected);
          expect(joined(events, 'text_delta')).toBe(expected.textBefore ?? '');
          expect(events.some((event) => event.type === 'completed')).toBe(false);
        }
        expect(server.requests).toHaveLength(1);
      });
    }
  }
});

describe('replies and errors of real servers, not streamed (fixtures)', () => {
  for (const fixture of fixtures) {
    const answer = fixture.generate;
    if (answer === undefined) continue;
    it(`${fixture.name} (${fixture.server})`, async () => {
      server = await FakeOpenAIServer.start({ turns: [rawTurn(answer, 'by event')] });
      const provider = new OpenAIProvider({ apiKey: 'test-key', model: 'some-model', baseURL: server.baseURL });
      const outcome = await provider.generate(request).then(
        (response) => ({ response, error: undefined }),
        (error: unknown) => ({ response: undefined, error }),
      );
      if ('reply' in fixture.expect) {
        expect(outcome.error).toBeUndefined();
        if (outcome.response === undefined) throw new Error('no response');
        checkReply(outcome.response, fixture.expect.reply);
      } else {
        const { textBefore: _, ...expected } = fixture.expect.error;
        checkError(outcome.error, expected);
      }
    });
  }
});

describe('the fixture set', () => {
  it('covers every server, streamed and not, replies and errors', () => {
    const servers = new Set(fixtures.map((fixture) => fixture.server));
    expect([...servers].sort()).toEqual(
      ['DeepSeek', 'Groq', 'LM Studio', 'Ollama', 'OpenAI', 'OpenRouter', 'llama.cpp', 'vLLM'].sort(),
    );
    expect(fixtures.filter((fixture) => fixture.generate !== undefined && 'reply' in fixture.expect).length).toBeGreaterThanOrEqual(5);
    expect(new Set(fixtures.map((fixture) => fixture.name)).size).toBe(fixtures.length);
  });
});
