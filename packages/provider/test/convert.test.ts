import type { Message } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { toChatMessages } from '../src/convert.js';

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
