import type { Message } from '@claw/core';
import type { CompletionUsage } from 'openai/resources/completions';
import { describe, expect, it } from 'vitest';
import { fromUsage, toChatMessages } from '../src/convert.js';

describe('toChatMessages', () => {
  const history: Message[] = [
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }] },
    { role: 'tool', toolCallId: 'c1', content: 'alpha' },
  ];

  it('converts to the wire format', () => {
    expect(toChatMessages(history)).toEqual([
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'alpha' },
    ]);
  });

  it('converts a message once for every request that sends it', () => {
    const first = toChatMessages(history);
    const second = toChatMessages([...history, { role: 'assistant', content: 'done' }]);
    expect(second.slice(0, 3)).toEqual(first);
    first.forEach((wire, index) => expect(second[index]).toBe(wire));
  });

  it('converts again a message whose content or tool calls changed since', () => {
    const reply: Message = { role: 'assistant', content: 'draft' };
    const [before] = toChatMessages([reply]);
    reply.content = 'final';
    expect(toChatMessages([reply])).toEqual([{ role: 'assistant', content: 'final' }]);
    const calls = [{ id: 'c2', name: 'read_file', arguments: '{}' }];
    const withCalls: Message = { role: 'assistant', content: '', toolCalls: calls };
    toChatMessages([withCalls]);
    calls.push({ id: 'c3', name: 'read_file', arguments: '{}' });
    const [after] = toChatMessages([withCalls]);
    expect(after).toMatchObject({ tool_calls: [{ id: 'c2' }, { id: 'c3' }] });
    expect(before).toEqual({ role: 'assistant', content: 'draft' });
  });
});

describe('fromUsage: cached prompt tokens (REAL-5)', () => {
  const base = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

  it('reads prompt_tokens_details.cached_tokens', () => {
    expect(fromUsage({ ...base, prompt_tokens_details: { cached_tokens: 64 } })).toEqual({
      promptTokens: 100,
      completionTokens: 20,
      totalTokens: 120,
      cachedPromptTokens: 64,
    });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens when there are no details", () => {
    const deepseek = { ...base, prompt_cache_hit_tokens: 96, prompt_cache_miss_tokens: 4 };
    expect(fromUsage(deepseek as CompletionUsage)?.cachedPromptTokens).toBe(96);
  });

  it('prefers prompt_tokens_details when both are there', () => {
    const both = { ...base, prompt_tokens_details: { cached_tokens: 50 }, prompt_cache_hit_tokens: 96 };
    expect(fromUsage(both as CompletionUsage)?.cachedPromptTokens).toBe(50);
  });

  it('counts 0 cached tokens as reported, and leaves the field out when nothing was reported', () => {
    expect(fromUsage({ ...base, prompt_tokens_details: { cached_tokens: 0 } })?.cachedPromptTokens).toBe(0);
    expect(fromUsage(base)).not.toHaveProperty('cachedPromptTokens');
    // vLLM sends `prompt_tokens_details: null`.
    expect(fromUsage({ ...base, prompt_tokens_details: null } as unknown as CompletionUsage)).not.toHaveProperty('cachedPromptTokens');
  });
});

describe('toChatMessages: reasoning stays home (REAL-4)', () => {
  it('never sends an assistant message\'s reasoning back', () => {
    const wire = toChatMessages([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!', reasoning: 'The user greets me.' },
      {
        role: 'assistant',
        content: '',
        reasoning: 'I should read the file.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{}' }],
      },
    ]);
    expect(wire[1]).toEqual({ role: 'assistant', content: 'Hello!' });
    expect(JSON.stringify(wire)).not.toMatch(/reasoning/);
  });
});
