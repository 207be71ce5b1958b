import { describe, expect, it } from 'vitest';
import { eventJson, forgetEventJson } from '../src/index.js';

describe('eventJson', () => {
  it('encodes an event once and gives the same text after, until the encoding is let go', () => {
    const event = { type: 'text_delta', content: 'one', seq: 1 };
    expect(eventJson(event)).toBe('{"type":"text_delta","content":"one","seq":1}');
    // Events never change once numbered; a change here shows which text is given out.
    event.content = 'two';
    expect(eventJson(event)).toBe('{"type":"text_delta","content":"one","seq":1}');
    forgetEventJson(event);
    expect(eventJson(event)).toBe('{"type":"text_delta","content":"two","seq":1}');
  });

  it('forgetting an event that was never encoded does nothing', () => {
    const event = { type: 'thinking', seq: 2 };
    forgetEventJson(event);
    expect(eventJson(event)).toBe('{"type":"thinking","seq":2}');
  });
});
