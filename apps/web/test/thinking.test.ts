import { describe, expect, it } from 'vitest';
import { formatTtft, thinkingSummaryText } from '../src/state/selectors.js';
import { SessionScript, history, prompted, receive, shown, startTime, view, withFreshSession } from './fixtures.js';

describe("the model's thinking (REAL-4)", () => {
  it('grows one block per model call, before its answer, that ends when the answer comes', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'fix it');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('thinking_delta', { content: 'The test ' }),
      s1.event('thinking_delta', { content: 'fails on empty input.' }),
    );
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): fix it', 'thinking…: The test fails on empty input.']);
    const block = view(state, 's1').items.at(-1);

    state = receive(state, s1.event('text_delta', { content: 'Let me ' }));
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): fix it',
      'thinking: The test fails on empty input.',
      'assistant…: Let me ',
    ]);

    // Reasoning between pieces of the answer goes on the same block, still before the answer.
    state = receive(
      state,
      s1.event('thinking_delta', { content: '\nRead parse() first.' }),
      s1.event('text_delta', { content: 'look.' }),
      s1.event('text_completed', { content: 'Let me look.' }),
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{"path":"parse.ts"}' }),
      s1.event('tool_result', { tool_call_id: 'c1', tool_name: 'read_file', result: 'export {}', is_error: false }),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): fix it',
      'thinking: The test fails on empty input.\nRead parse() first.',
      'assistant: Let me look.',
      'tool read_file → ok',
    ]);
    expect(view(state, 's1').items[1]?.key).toBe(block?.key);

    // The next model call thinks in a block of its own.
    state = receive(
      state,
      s1.event('thinking', { turn: 2 }),
      s1.event('thinking_delta', { content: 'It is empty.' }),
      s1.event('tool_call', { tool_call_id: 'c2', tool_name: 'edit_file', arguments: '{}' }),
    );
    expect(shown(view(state, 's1').items).slice(4)).toEqual(['thinking: It is empty.', 'tool edit_file']);
    expect(view(state, 's1').items.filter((item) => item.kind === 'thinking')).toHaveLength(2);
  });

  it('puts reasoning that comes after the answer began before that answer', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('text_delta', { content: 'Sure' }),
      s1.event('thinking_delta', { content: 'hmm' }),
      s1.event('text_delta', { content: '.' }),
    );
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): go', 'thinking: hmm', 'assistant…: Sure.']);
  });

  it('ends with the task or a retried call; the retried call thinks after the notice', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('thinking_delta', { content: 'first try' }),
      s1.event('model_retry', { attempt: 1, attempts: 3, delay_ms: 200, error: 'model API returned HTTP 503' }),
      s1.event('thinking_delta', { content: 'second try' }),
      s1.event('task_canceled', { reason: 'interrupted by ws-1' }),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): go',
      'thinking: first try',
      'notice(warning): Model call failed, trying again in 0.2 s (attempt 2 of 3): model API returned HTTP 503',
      'thinking: second try',
      'notice(info): Task canceled: interrupted by ws-1',
    ]);
    expect(view(state, 's1').thinkingKey).toBeUndefined();
  });

  it('is not shown twice when replayed (seq ≤ lastSeq)', () => {
    const s1 = new SessionScript('s1');
    const started = prompted(withFreshSession('s1'), s1, 'go');
    const call = s1.event('thinking', { turn: 1 });
    const first = s1.event('thinking_delta', { content: 'once' });
    const second = s1.event('thinking_delta', { content: ', more' });
    const once = receive(started, call, first, second);
    expect(shown(view(once, 's1').items)).toEqual(['user(sent): go', 'thinking…: once, more']);
    expect(receive(once, first)).toBe(once);
    expect(receive(once, call, first, second)).toBe(once);
  });

  it("is the model's first token (time to first token) and ends the wait for a silent model", () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    const at = (ms: number) => new Date(startTime + ms).toISOString();
    state = receive(state, s1.event('thinking', { turn: 1, at: at(1000) }));
    expect(view(state, 's1').waitingSince).toBeTypeOf('number');
    state = receive(state, s1.event('thinking_delta', { content: 'hm', at: at(1400) }));
    expect(view(state, 's1').waitingSince).toBeUndefined();
    state = receive(state, s1.event('text_delta', { content: 'a', at: at(9000) }));
    expect(formatTtft(view(state, 's1').figures)).toBe('400 ms');
  });

  it("shows each reply's stored reasoning from the history, folded, before that reply", () => {
    const rebuilt = receive(
      withFreshSession('s1'),
      history('s1', 12, [
        { role: 'user', content: 'what is in a.txt?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'r1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
          reasoning: 'I should read it.',
        },
        { role: 'tool', tool_call_id: 'r1', content: 'hello' },
        { role: 'assistant', content: 'It says hello.', reasoning: 'It is short.\nJust say it.' },
        { role: 'user', content: 'thanks' },
        { role: 'assistant', content: 'You are welcome.', reasoning: '' },
      ]),
    );
    expect(shown(view(rebuilt, 's1').items)).toEqual([
      'user(sent): what is in a.txt?',
      'thinking: I should read it.',
      'tool read_file → ok',
      'thinking: It is short.\nJust say it.',
      'assistant: It says hello.',
      'user(sent): thanks',
      'assistant: You are welcome.',
    ]);
  });

  it('folds to one line: characters while the model thinks, lines once it is done', () => {
    const text = `${'x'.repeat(1230)}🙂🙂\n\n`;
    expect(thinkingSummaryText({ text, streaming: true })).toBe('thinking… (1,234 characters)');
    expect(thinkingSummaryText({ text: 'a', streaming: true })).toBe('thinking… (1 character)');
    expect(thinkingSummaryText({ text: 'one\ntwo\nthree\n', streaming: false })).toBe('thought (3 lines)');
    expect(thinkingSummaryText({ text: 'one', streaming: false })).toBe('thought (1 line)');
  });
});
