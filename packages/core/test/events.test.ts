import { describe, expect, it } from 'vitest';
import { parseClientMessage, serverEventSchema } from '../src/index.js';

describe('parseClientMessage (CH-1)', () => {
  it('accepts every client message type', () => {
    expect(parseClientMessage('{"type":"prompt","content":"read README"}')).toEqual({
      ok: true,
      message: { type: 'prompt', content: 'read README' },
    });
    for (const type of ['interrupt', 'close', 'ping']) {
      expect(parseClientMessage(JSON.stringify({ type }))).toEqual({ ok: true, message: { type } });
    }
    expect(parseClientMessage('{"type":"approval_response","request_id":"r1","decision":"allow_session"}')).toEqual({
      ok: true,
      message: { type: 'approval_response', request_id: 'r1', decision: 'allow_session' },
    });
  });

  it('explains what is wrong instead of throwing', () => {
    const error = (line: string, maxBytes?: number) => {
      const result = parseClientMessage(line, maxBytes === undefined ? {} : { maxBytes });
      if (result.ok) throw new Error('expected a failure');
      return result.error;
    };
    expect(error('not json')).toMatch(/invalid JSON/);
    expect(error('{"type":"dance"}')).toMatch(/unknown message type "dance": expected one of prompt, interrupt/);
    expect(error('{"content":"x"}')).toMatch(/unknown message type undefined/);
    expect(error('{"type":"prompt"}')).toMatch(/invalid prompt message.*content/s);
    expect(error('{"type":"prompt","content":"   "}')).toMatch(/invalid prompt message/);
    expect(error('{"type":"approval_response","request_id":"r1","decision":"maybe"}')).toMatch(/decision/);
    expect(error(`{"type":"prompt","content":"${'é'.repeat(40)}"}`, 64)).toMatch(/too large: \d+ bytes, the limit is 64/);
  });
});

describe('serverEventSchema (CH-2)', () => {
  it('accepts an approval request and rejects an unknown risk', () => {
    const event = { type: 'approval_request', request_id: 'r1', tool_name: 'bash', risk: 'dangerous', reason: 'runs a command' };
    expect(serverEventSchema.parse(event)).toEqual(event);
    expect(serverEventSchema.safeParse({ ...event, risk: 'spicy' }).success).toBe(false);
  });
});
