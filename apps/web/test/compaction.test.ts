import { describe, expect, it } from 'vitest';
import { compactCommandText, isCompactCommand, parseComposerInput } from '../src/commands.js';
import { waitingSinceAfter } from '../src/state/model-wait.js';
import { reduce } from '../src/state/reducer.js';
import { compactionText, formatCost, formatTokens } from '../src/state/selectors.js';
import {
  SessionScript,
  errorEvent,
  type EventFields,
  history,
  prompted,
  receive,
  shown,
  view,
  withFreshSession,
} from './fixtures.js';

type Script = SessionScript;

/** A compaction as the runtime reports it: 15,200 → 6,100 tokens, 12 results pruned, 40 summarised. */
function compacted(script: Script, fields: Partial<EventFields<'context_compacted'>> = {}) {
  return script.event('context_compacted', {
    reason: 'threshold',
    tokens_before: 15_200,
    tokens_after: 6_100,
    pruned_results: 12,
    summarised_messages: 40,
    summary: 'The user wants the parser fixed; parse.ts was read.',
    ...fields,
  });
}

/** The usage of one model call of the task: `runTokens` so far, priced at `runUsd`. */
function usage(script: Script, runTokens: number, runUsd: number) {
  const tokens = (total: number) => ({ prompt_tokens: total, completion_tokens: 0, total_tokens: total });
  return script.event('usage', {
    call: tokens(runTokens),
    run: tokens(runTokens),
    session: tokens(runTokens + 10_000),
    cost: { call_usd: runUsd, run_usd: runUsd, session_usd: runUsd + 0.01, unpriced_calls: 0 },
    budgets_left: {},
  });
}

const divider =
  'compaction: context compacted (threshold): 15,200 → 6,100 tokens · 12 old tool results pruned · 40 messages summarised' +
  ' [summary: The user wants the parser fixed; parse.ts was read.]';

describe('the divider where the conversation was compacted (CMP-5)', () => {
  it('comes with a live context_compacted, in the turn, before what the call it was made for writes', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'fix the parser');
    const read = [
      s1.event('thinking', { turn: 1 }),
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{"path":"parse.ts"}' }),
      s1.event('tool_result', { tool_call_id: 'c1', tool_name: 'read_file', result: 'export {}', is_error: false }),
    ];
    const event = compacted(s1);
    state = receive(state, ...read, event, ...s1.reply(2, ['Fixed', '.']));
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): fix the parser',
      'tool read_file → ok',
      divider,
      'assistant: Fixed.',
    ]);
    expect(view(state, 's1').items[2]).toMatchObject({ kind: 'compaction', key: `e${event.seq}` });
  });

  it('after a call the context overflowed, ends what that call began: the retried call writes below it', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go on');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('thinking_delta', { content: 'Long context.' }),
      compacted(s1, { reason: 'overflow', pruned_results: 0, summarised_messages: 1, tokens_before: 1_000, tokens_after: 1 }),
      s1.event('thinking_delta', { content: 'Shorter now.' }),
      s1.event('text_delta', { content: 'Done.' }),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): go on',
      'thinking: Long context.',
      'compaction: context compacted (overflow): 1,000 → 1 tokens · 1 message summarised [summary: The user wants the parser fixed; parse.ts was read.]',
      'thinking: Shorter now.',
      'assistant…: Done.',
    ]);
  });

  it('names messages whose summary failed as left out, and keeps the error', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, compacted(s1, { summary: undefined, error: 'the model returned no text', pruned_results: 1 }));
    expect(shown(view(state, 's1').items).at(-1)).toBe(
      'compaction: context compacted (threshold): 15,200 → 6,100 tokens · 1 old tool result pruned · 40 messages left out' +
      ' [error: the model returned no text]',
    );
  });

  it('is not added again when replayed (seq ≤ lastSeq)', () => {
    const s1 = new SessionScript('s1');
    const started = prompted(withFreshSession('s1'), s1, 'go');
    const event = compacted(s1);
    const once = receive(started, event);
    expect(shown(view(once, 's1').items)).toEqual(['user(sent): go', divider]);
    expect(receive(once, event)).toBe(once);
    expect(receive(once, event, event)).toBe(once);
  });

  it('after a reload, stands before message up_to of the history, with the summary', () => {
    const messages = [
      { role: 'user' as const, content: 'fix the parser' },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{}' }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: 'export {}' },
      { role: 'assistant' as const, content: 'Fixed.' },
      { role: 'user' as const, content: 'now the tests' },
      { role: 'assistant' as const, content: 'They pass.', reasoning: 'Run them.' },
    ];
    const rebuilt = receive(withFreshSession('s1'), history('s1', 30, messages, { up_to: 3, summary: 'Parser fixed.' }));
    expect(shown(view(rebuilt, 's1').items)).toEqual([
      'user(sent): fix the parser',
      'tool read_file → ok',
      'compaction: context compacted: the model sees the conversation above only as a summary, and your messages in it [summary: Parser fixed.]',
      'assistant: Fixed.',
      'user(sent): now the tests',
      'thinking: Run them.',
      'assistant: They pass.',
    ]);
    expect(view(rebuilt, 's1').items[2]).toEqual({ kind: 'compaction', key: 'h30-compaction', summary: 'Parser fixed.' });

    // Before the reasoning of the message at up_to; at the end when up_to is past the last one.
    const beforeThinking = receive(withFreshSession('s1'), history('s1', 30, messages, { up_to: 5 }));
    expect(shown(view(beforeThinking, 's1').items).slice(4, 6)).toEqual([
      'compaction: context compacted: the model no longer sees the conversation above, only your messages in it',
      'thinking: Run them.',
    ]);
    const atEnd = receive(withFreshSession('s1'), history('s1', 30, messages, { up_to: 6, summary: 'All.' }));
    expect(shown(view(atEnd, 's1').items).at(-1)).toMatch(/^compaction: .* \[summary: All\.\]$/);
    const never = receive(withFreshSession('s1'), history('s1', 30, messages));
    expect(view(never, 's1').items.some((item) => item.kind === 'compaction')).toBe(false);
  });
});

describe('/compact from the page (CMP-5)', () => {
  it('shows the command until its task starts, then the divider and the line that ends the task', () => {
    const s1 = new SessionScript('s1');
    let state = reduce(withFreshSession('s1'), { type: 'prompt_sent', sessionId: 's1', content: '/compact keep the API' });
    expect(shown(view(state, 's1').items)).toEqual(['user(pending): /compact keep the API']);
    state = receive(
      state,
      ...s1.start('/compact keep the API'),
      s1.event('thinking', { turn: 1, purpose: 'summary' }),
      compacted(s1, { reason: 'manual' }),
      usage(s1, 2_345, 0.0012),
      ...s1.complete('context compacted: 15,200 → 6,100 tokens (12 old tool results pruned, 40 messages summarised)'),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): /compact keep the API',
      divider.replace('(threshold)', '(manual)'),
      // task_started +10 ms … task_completed +60 ms.
      'notice(info): 1 model call (1 to summarise) · 0 tool calls · 2,345 tokens · context compacted once · cost $0.0012 · 0.1 s',
    ]);
    // The summary call's tokens and cost are the session's, like any call's.
    expect(formatTokens(view(state, 's1').figures)).toBe('12,345 (last task 2,345)');
    expect(formatCost(view(state, 's1').figures)).toBe('$0.01');
    expect(view(state, 's1')).toMatchObject({ lastEnd: 'completed', runState: 'idle' });
    expect(view(state, 's1').compactTaskId).toBeUndefined();
  });

  it('that had nothing to compact says so, in the task\'s words', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, '/compact');
    state = receive(state, ...s1.complete('nothing to compact: the conversation has 2 messages'));
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): /compact',
      'notice(info): Nothing to compact: the conversation has 2 messages',
    ]);
    // A prompt's end is its answer: its words are not said again.
    state = prompted(state, s1, 'hello');
    state = receive(state, ...s1.complete('Hi.'));
    expect(shown(view(state, 's1').items).slice(2)).toEqual(['user(sent): hello']);
  });

  it('refused (session_busy, not_supported), marks the command not sent', () => {
    for (const code of ['session_busy', 'not_supported']) {
      let state = reduce(withFreshSession('s1'), { type: 'prompt_sent', sessionId: 's1', content: '/compact' });
      const message = `session "s1" cannot be compacted now (${code})`;
      state = receive(state, errorEvent({ code, message, session_id: 's1' }));
      expect(view(state, 's1').items).toEqual([
        { kind: 'user', key: 'local1', text: '/compact', status: 'failed', error: message },
      ]);
    }
  });

  it('reads /compact alone or with what to keep; anything else is a prompt, as typed', () => {
    expect(parseComposerInput('/compact')).toEqual({ type: 'compact' });
    expect(parseComposerInput('  /compact  \n')).toEqual({ type: 'compact' });
    expect(parseComposerInput('/compact keep the API ')).toEqual({ type: 'compact', focus: 'keep the API' });
    expect(parseComposerInput('/compact\nthe API\nand the tests')).toEqual({ type: 'compact', focus: 'the API\nand the tests' });
    for (const text of ['/compaction', 'please /compact', '/Compact', ' compact it ']) {
      expect(parseComposerInput(text)).toEqual({ type: 'prompt', content: text });
    }
    expect(compactCommandText(undefined)).toBe('/compact');
    expect(compactCommandText('keep the API')).toBe('/compact keep the API');
    expect(isCompactCommand('/compact keep the API')).toBe(true);
    expect(isCompactCommand('/compacted')).toBe(false);
  });
});

describe('the divider\'s line', () => {
  it('names what was pruned and summarised, only when there was some', () => {
    const figures = { reason: 'manual' as const, tokensBefore: 1_000, tokensAfter: 900, prunedResults: 0, summarisedMessages: 0 };
    expect(compactionText({ figures })).toBe('context compacted (manual): 1,000 → 900 tokens');
    expect(compactionText({ figures: { ...figures, prunedResults: 1 } }))
      .toBe('context compacted (manual): 1,000 → 900 tokens · 1 old tool result pruned');
    expect(compactionText({ figures: { ...figures, summarisedMessages: 2 }, error: 'timeout' }))
      .toBe('context compacted (manual): 1,000 → 900 tokens · 2 messages left out');
  });

  it('lets the wait for a silent model start again after an overflow compaction, not before a call', () => {
    const s1 = new SessionScript('s1');
    const event = compacted(s1, { reason: 'overflow' });
    expect(waitingSinceAfter(1_000, event, 5_000)).toBe(5_000);
    expect(waitingSinceAfter(undefined, compacted(s1), 5_000)).toBeUndefined();
  });
});
