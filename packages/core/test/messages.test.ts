import { describe, expect, it } from 'vitest';
import { addUsage, emptyUsage, maxTitleChars, messageSchema, promptTitle, sessionTitle, type Message } from '../src/index.js';

describe('Message (CORE-1)', () => {
  const history: Message[] = [
    { role: 'system', content: 'You are claw.' },
    { role: 'user', content: 'read a.ts and b.ts' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' },
        { id: 'call_2', name: 'read_file', arguments: '{"path":"b.ts"}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', content: 'export const a = 1;' },
    { role: 'tool', toolCallId: 'call_2', content: 'no such file', isError: true },
    { role: 'assistant', content: 'a.ts exports a; b.ts is missing.' },
  ];

  it('round-trips through JSON unchanged and validates against the schema', () => {
    const parsed: unknown = JSON.parse(JSON.stringify(history));
    expect(parsed).toEqual(history);
    for (const message of parsed as unknown[]) {
      expect(messageSchema.parse(message)).toEqual(message);
    }
  });

  it('rejects malformed wire messages', () => {
    expect(messageSchema.safeParse({ role: 'tool', content: 'x' }).success).toBe(false);
    expect(messageSchema.safeParse({ role: 'robot', content: 'x' }).success).toBe(false);
    expect(
      messageSchema.safeParse({ role: 'assistant', content: '', toolCalls: [{ id: '', name: 'x', arguments: '{}' }] })
        .success,
    ).toBe(false);
  });
});

describe('Usage', () => {
  it('adds up and treats a missing usage as zero', () => {
    const one = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };
    expect(addUsage(one, one)).toEqual({ promptTokens: 20, completionTokens: 4, totalTokens: 24 });
    expect(addUsage(one, undefined)).toEqual(one);
    expect(addUsage(emptyUsage, one)).toEqual(one);
  });
});

describe('findUnpairedCalls', () => {
  const call = (id: string) => ({ id, name: 'bash', arguments: '{}' });
  it('finds calls without an Observation, per assistant message, in call order', async () => {
    const { findUnpairedCalls } = await import('../src/index.js');
    const history: Message[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call('a'), call('b'), call('c')] },
      { role: 'tool', toolCallId: 'b', content: 'ok' },
      { role: 'user', content: 'and then' },
      { role: 'assistant', content: '', toolCalls: [call('a')] },
      { role: 'tool', toolCallId: 'a', content: 'ok' },
      { role: 'assistant', content: '', toolCalls: [call('d'), call('e')] },
    ];
    expect(findUnpairedCalls(history)).toEqual([
      { assistantIndex: 1, before: 3, calls: [call('a'), call('c')] },
      { assistantIndex: 6, before: 7, calls: [call('d'), call('e')] },
    ]);
    expect(findUnpairedCalls(history.slice(0, 1))).toEqual([]);
    // A repeated id in one message needs one Observation only once.
    expect(
      findUnpairedCalls([{ role: 'assistant', content: '', toolCalls: [call('x'), call('x')] }]),
    ).toEqual([{ assistantIndex: 0, before: 1, calls: [call('x')] }]);
  });
});

describe('promptTitle and sessionTitle', () => {
  it('title a prompt by its first line that is not blank, trimmed, cut to 80 characters with …', () => {
    expect(promptTitle('fix the login bug')).toBe('fix the login bug');
    expect(promptTitle('\n   \n  review this change  \n<stdin>\ndiff')).toBe('review this change');
    expect(promptTitle(' \n\t\n')).toBeUndefined();
    const long = promptTitle('é'.repeat(200));
    expect([...(long ?? '')]).toHaveLength(maxTitleChars);
    expect(long).toBe(`${'é'.repeat(maxTitleChars - 1)}…`);
    expect(promptTitle('x'.repeat(maxTitleChars))).toBe('x'.repeat(maxTitleChars));
  });

  it('title a session by its first prompt, skipping what comes before it and places not known', () => {
    const messages: Array<Message | undefined> = [
      undefined,
      { role: 'system', content: 'you are claw' },
      { role: 'user', content: 'first task\nwith details' },
      { role: 'user', content: 'second task' },
    ];
    expect(sessionTitle(messages)).toBe('first task');
    expect(sessionTitle([{ role: 'assistant', content: 'hello' }])).toBeUndefined();
    expect(sessionTitle([])).toBeUndefined();
  });
});
