import type { StreamEvent } from '@claw/core';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { ModelServerError, StreamAssembler, classifyError } from '../src/index.js';

/** A chunk as a server sends it (fields the SDK's type lacks included). */
function chunk(fields: Record<string, unknown>): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', ...fields } as unknown as ChatCompletionChunk;
}

function delta(fields: Record<string, unknown>, finishReason: string | null = null): ChatCompletionChunk {
  return chunk({ choices: [{ index: 0, delta: fields, finish_reason: finishReason }] });
}

function run(chunks: ChatCompletionChunk[]): { events: StreamEvent[]; assembler: StreamAssembler } {
  const assembler = new StreamAssembler();
  const events = chunks.flatMap((piece) => assembler.push(piece));
  return { events, assembler };
}

const stop = delta({}, 'stop');

describe('StreamAssembler: reasoning (REAL-4)', () => {
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    it(`reads delta.${field} into reasoning_delta events and message.reasoning, never into the text`, () => {
      const { events, assembler } = run([
        delta({ role: 'assistant', content: '' }),
        delta({ [field]: 'The user wants', content: null }),
        delta({ [field]: ' a greeting.' }),
        delta({ content: 'Hello!', [field]: null }),
        stop,
      ]);
      expect(events).toEqual([
        { type: 'reasoning_delta', delta: 'The user wants' },
        { type: 'reasoning_delta', delta: ' a greeting.' },
        { type: 'text_delta', delta: 'Hello!' },
      ]);
      expect(assembler.response().message).toEqual({
        role: 'assistant',
        content: 'Hello!',
        reasoning: 'The user wants a greeting.',
      });
    });
  }

  it('reads reasoning_details[].text, only from entries with a string text', () => {
    const { events, assembler } = run([
      delta({
        reasoning_details: [
          { type: 'reasoning.summary', summary: 'a summary, not text' },
          { type: 'reasoning.text', text: 'Step 1.', format: 'unknown', index: 0 },
          { type: 'reasoning.encrypted', data: 'opaque' },
          { type: 'reasoning.text', text: 7 },
          null,
        ],
      }),
      delta({ reasoning_details: [{ type: 'reasoning.text', text: ' Step 2.' }] }),
      stop,
    ]);
    expect(events).toEqual([
      { type: 'reasoning_delta', delta: 'Step 1.' },
      { type: 'reasoning_delta', delta: ' Step 2.' },
    ]);
    expect(assembler.response().message.reasoning).toBe('Step 1. Step 2.');
  });

  it('one source per chunk: the same text under reasoning and reasoning_details counts once', () => {
    const { events, assembler } = run([
      delta({ reasoning: 'Think', reasoning_details: [{ type: 'reasoning.text', text: 'Think' }] }),
      delta({ reasoning: ' more', reasoning_details: [{ type: 'reasoning.text', text: ' more' }] }),
      delta({ reasoning_content: 'x', reasoning: 'x' }),
      stop,
    ]);
    expect(events.map((event) => (event.type === 'reasoning_delta' ? event.delta : ''))).toEqual(['Think', ' more', 'x']);
    expect(assembler.response().message.reasoning).toBe('Think morex');
  });

  it('no reasoning → no reasoning field at all; empty reasoning pieces are no events', () => {
    const { events, assembler } = run([delta({ content: 'hi', reasoning_content: '', reasoning: null }), stop]);
    expect(events).toEqual([{ type: 'text_delta', delta: 'hi' }]);
    expect(assembler.response().message).not.toHaveProperty('reasoning');
  });
});

describe('StreamAssembler: tool calls as real servers send them (REAL-6)', () => {
  it('a piece without index belongs to the last call; a new id starts a new call', () => {
    const { events, assembler } = run([
      delta({ tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"pa' } }] }),
      delta({ tool_calls: [{ function: { arguments: 'th":"a"}' } }] }),
      delta({ tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] }),
      delta({ tool_calls: [{ id: 'call_b', function: { arguments: '' } }] }),
      delta({}, 'tool_calls'),
    ]);
    expect(assembler.response().message.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
      { id: 'call_b', name: 'list_dir', arguments: '{}' },
    ]);
    expect(events.map((event) => (event.type === 'tool_call_delta' ? event.index : -1))).toEqual([0, 0, 1]);
  });

  it('a piece without index and without a call before it starts the first call', () => {
    const { assembler } = run([
      delta({ tool_calls: [{ id: 'call_1', function: { name: 'bash', arguments: '{"command":"ls"}' } }] }),
      stop,
    ]);
    expect(assembler.response().message.toolCalls).toEqual([{ id: 'call_1', name: 'bash', arguments: '{"command":"ls"}' }]);
  });

  it('two calls sent under the same index with different ids stay two calls', () => {
    const { assembler } = run([
      delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a.py"}' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name: 'write_file', arguments: '{"path":"b.py"}' } }] }),
      delta({}, 'tool_calls'),
    ]);
    expect(assembler.response().message.toolCalls).toEqual([
      { id: 'call_1', name: 'write_file', arguments: '{"path":"a.py"}' },
      { id: 'call_2', name: 'write_file', arguments: '{"path":"b.py"}' },
    ]);
  });

  it('a server that repeats the same id and name in every piece still gives one call', () => {
    const { assembler } = run([
      delta({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'bash', arguments: '{"comm' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'bash', arguments: 'and":"ls"}' } }] }),
      stop,
    ]);
    expect(assembler.response().message.toolCalls).toEqual([{ id: 'call_1', name: 'bash', arguments: '{"command":"ls"}' }]);
  });

  it('finish_reason "stop" with tool calls still returns the calls', () => {
    const { assembler } = run([
      delta({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'bash', arguments: '{}' } }] }),
      stop,
    ]);
    const response = assembler.response();
    expect(response.finishReason).toBe('stop');
    expect(response.message.toolCalls).toHaveLength(1);
  });
});

describe('StreamAssembler: usage and ends', () => {
  it('reads usage from a last chunk with empty choices, cached tokens included', () => {
    const { assembler } = run([
      delta({ content: 'x' }),
      stop,
      chunk({
        choices: [],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 2,
          total_tokens: 12,
          prompt_tokens_details: { cached_tokens: 8 },
        },
      }),
    ]);
    expect(assembler.response().usage).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      totalTokens: 12,
      cachedPromptTokens: 8,
    });
  });

  it("reads Groq's x_groq.usage when there is no top-level usage", () => {
    const { assembler } = run([
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], x_groq: { id: 'req_1' } }),
      delta({ content: 'hi' }),
      chunk({
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        x_groq: { id: 'req_1', usage: { queue_time: 0.01, prompt_tokens: 18, prompt_time: 0.001, completion_tokens: 4, completion_time: 0.01, total_tokens: 22, total_time: 0.011 } },
      }),
    ]);
    expect(assembler.response().usage).toEqual({ promptTokens: 18, completionTokens: 4, totalTokens: 22 });
  });

  it('tolerates a chunk without choices', () => {
    const { events, assembler } = run([chunk({ timings: { predicted_n: 3 } }), delta({ content: 'ok' }), stop]);
    expect(events).toEqual([{ type: 'text_delta', delta: 'ok' }]);
    expect(assembler.finished).toBe(true);
  });

  it('finish_reason "error" is a retryable ModelServerError, never a normal end', () => {
    const assembler = new StreamAssembler();
    assembler.push(delta({ content: 'Half an ans' }));
    let thrown: unknown;
    try {
      assembler.push(delta({ content: '' }, 'error'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ModelServerError);
    expect((thrown as ModelServerError).code).toBe('model_stream_error');
    expect((thrown as Error).message).toContain('finish_reason "error"');
    expect(classifyError(thrown)).toBe('retryable');
    expect(assembler.finished).toBe(false);
  });
});
