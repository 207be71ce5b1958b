import type { Message } from '@claw/core';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { Engine, estimateMessageTokens, selectWindow } from '../src/index.js';
import { expectPaired, newSession } from './helpers.js';

function exchange(index: number, size = 400): Message[] {
  return [
    { role: 'user', content: `step ${index} ${'u'.repeat(size)}` },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: `c${index}a`, name: 'read_file', arguments: '{"path":"a"}' },
        { id: `c${index}b`, name: 'read_file', arguments: '{"path":"b"}' },
      ],
    },
    { role: 'tool', toolCallId: `c${index}a`, content: 'a'.repeat(size) },
    { role: 'tool', toolCallId: `c${index}b`, content: 'b'.repeat(size) },
    { role: 'assistant', content: `answer ${index}` },
  ];
}

describe('selectWindow (ENG-8)', () => {
  const history = Array.from({ length: 30 }, (_, index) => exchange(index)).flat();

  it('keeps the whole history when it fits the context', () => {
    expect(selectWindow(history, { maxTokens: 1_000_000, maxMessages: 10_000 })).toEqual(history);
  });

  it('never starts with an orphan Observation, at every budget', () => {
    for (let maxTokens = 0; maxTokens < 4_000; maxTokens += 7) {
      const window = selectWindow(history, { maxTokens, maxMessages: 10_000 });
      expect(window[0]?.role).not.toBe('tool');
      expectPaired(window);
      const tokens = window.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
      expect(tokens <= maxTokens || window.length === 1).toBe(true);
      expect(window.at(-1)).toBe(history.at(-1));
    }
  });

  it('respects the message cap too', () => {
    const window = selectWindow(history, { maxTokens: 1_000_000, maxMessages: 7 });
    expect(window.length).toBeLessThanOrEqual(7);
    expect(window[0]?.role).not.toBe('tool');
    expect(window.at(-1)).toBe(history.at(-1));
  });

  it('keeps the newest exchange even when it alone is over budget', () => {
    const tail: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'big', name: 'read_file', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'big', content: 'x'.repeat(100_000) },
    ];
    expect(selectWindow(tail, { maxTokens: 10, maxMessages: 10 })).toEqual(tail.slice(1));
  });
});

describe('Engine working memory', () => {
  it('a long task keeps its early steps while the context has room (not a small message count)', async () => {
    const history = Array.from({ length: 40 }, (_, index) => exchange(index, 50)).flat();
    const provider = new ScriptedProvider([{ text: 'done' }]);
    // No system prompt: the window alone is measured.
    await new Engine({ provider, gate: new AllowAllGate(), systemPrompt: '' }).run('next', { session: newSession(history) });
    const sent = provider.calls[0]?.request.messages ?? [];
    expect(sent).toHaveLength(history.length + 1);
    expect(sent[0]).toEqual(history[0]);
  });

  it('a small context window compacts the conversation: the task stays first, the request fits, the session keeps everything (CMP-2)', async () => {
    const history = Array.from({ length: 40 }, (_, index) => exchange(index)).flat();
    const session = newSession(history);
    const provider = new ScriptedProvider([{ text: 'the summary of it' }, { text: 'done' }]);
    await new Engine({ provider, gate: new AllowAllGate(), systemPrompt: '', contextWindowTokens: 3_000, reservedOutputTokens: 500 }).run(
      'next',
      { session },
    );
    // Before: a sliding window that dropped the oldest messages, the task first.
    const sent = provider.calls[1]?.request.messages ?? [];
    expect(sent[0]).toEqual(history[0]);
    expect(sent.some((message) => message.content.includes('<summary>\nthe summary of it'))).toBe(true);
    expect(sent.length).toBeLessThan(history.length / 2);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'next' });
    expectPaired(sent);
    expect(session.history()).toHaveLength(history.length + 2);
  });
});
