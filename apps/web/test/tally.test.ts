import { describe, expect, it } from 'vitest';
import { SessionScript, prompted, receive, shown, view, withFreshSession } from './fixtures.js';

/** A model call's `usage` event: the task so far has `runTokens`, costing `runUsd`. */
function usage(script: SessionScript, runTokens: number, runUsd: number, callUsd: number | null) {
  const tokens = (total: number) => ({ prompt_tokens: total, completion_tokens: 0, total_tokens: total });
  return script.event('usage', {
    call: tokens(10),
    run: tokens(runTokens),
    session: tokens(runTokens + 1000),
    cost: { call_usd: callUsd, run_usd: runUsd, session_usd: runUsd + 1, unpriced_calls: 7 },
    budgets_left: { session_tokens: 1000 },
  });
}

const notices = (items: readonly string[]) => items.filter((item) => item.startsWith('notice'));

describe('the line that ends a task in the transcript (what it did, as the terminal says it)', () => {
  it('counts the task\'s model calls, tool calls (failed ones apart), its tokens and cost, and its time', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'tidy up');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      usage(s1, 100, 0.001, 0.001),
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{"path":"a"}' }),
      s1.event('tool_call', { tool_call_id: 'c2', tool_name: 'bash', arguments: '{"command":"rm -rf /"}' }),
      s1.event('tool_result', { tool_call_id: 'c1', tool_name: 'read_file', result: 'a', is_error: false }),
      s1.event('tool_result', { tool_call_id: 'c2', tool_name: 'bash', result: 'denied', is_error: true }),
      ...s1.reply(2, ['Tidy.']),
      // The second call has no price: it is counted as unpriced, the session's count is not used.
      usage(s1, 2345, 0.001, null),
      ...s1.complete('Tidy.'),
    );
    // task_started at +10 ms … task_completed at +150 ms.
    expect(notices(shown(view(state, 's1').items))).toEqual([
      'notice(info): 2 model calls · 2 tool calls (1 failed or denied) · 2,345 tokens · cost $0.0010 + 1 unpriced · 0.1 s',
    ]);
    expect(view(state, 's1').tally).toBeUndefined();
  });

  it('names the cached part of the task\'s tokens when there was one (REAL-5)', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'again');
    const cached = (total: number, part: number) => ({
      prompt_tokens: total,
      completion_tokens: 0,
      total_tokens: total,
      cached_tokens: part,
    });
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('usage', {
        call: cached(18204, 12800),
        run: cached(18204, 12800),
        session: cached(30000, 20000),
        cost: { call_usd: 0.0042, run_usd: 0.0042, session_usd: 0.01, unpriced_calls: 0 },
        budgets_left: {},
      }),
      ...s1.complete('Done.'),
    );
    expect(notices(shown(view(state, 's1').items))).toEqual([
      'notice(info): 1 model call · 0 tool calls · 18,204 tokens (12,800 cached) · cost $0.0042 · 0.0 s',
    ]);
  });

  it('counts a compaction\'s summary call among the model calls and says how often the context was compacted (CMP-5, CMP-6)', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go on');
    const compaction = (summarised: number) => s1.event('context_compacted', {
      reason: 'threshold',
      tokens_before: 15_200,
      tokens_after: 6_100,
      pruned_results: 12,
      summarised_messages: summarised,
      ...(summarised === 0 ? {} : { summary: 'notes' }),
    });
    state = receive(
      state,
      // The summary call is announced as a model call with its purpose.
      s1.event('thinking', { turn: 1, purpose: 'summary' }),
      compaction(40),
      s1.event('thinking', { turn: 1 }),
      usage(s1, 100, 0.001, 0.001),
      // Pruning alone makes no model call.
      compaction(0),
      ...s1.reply(2, ['Done.']),
      usage(s1, 2345, 0.002, 0.001),
      ...s1.complete('Done.'),
    );
    expect(notices(shown(view(state, 's1').items))).toEqual([
      'notice(info): 3 model calls (1 to summarise) · 0 tool calls · 2,345 tokens · context compacted 2 times · cost $0.0020 · 0.1 s',
    ]);

    state = prompted(state, s1, 'once more');
    state = receive(
      state,
      s1.event('thinking', { turn: 1, purpose: 'summary' }),
      compaction(3),
      s1.event('thinking', { turn: 1 }),
      usage(s1, 50, 0.001, 0.001),
      ...s1.complete('ok'),
    );
    expect(notices(shown(view(state, 's1').items)).at(-1))
      .toBe('notice(info): 2 model calls (1 to summarise) · 0 tool calls · 50 tokens · context compacted once · cost $0.0010 · 0.1 s');
  });

  it('comes before how a task ended when it failed or was canceled; a task that did nothing is told by its error alone', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'first');
    state = receive(state, s1.event('thinking', { turn: 1 }), usage(s1, 50, 0, null), s1.event('task_failed', { error: 'the model went away', code: 'provider_error' }));
    expect(notices(shown(view(state, 's1').items))).toEqual([
      'notice(info): 1 model call · 0 tool calls · 50 tokens · cost unpriced · 0.0 s',
      'notice(error): Task failed: the model went away (provider_error)',
    ]);
    state = prompted(receive(state, s1.event('state', { state: 'idle' })), s1, 'second');
    state = receive(state, s1.event('thinking', { turn: 1 }), s1.event('task_failed', { error: 'unreachable', code: 'model_unreachable' }));
    expect(notices(shown(view(state, 's1').items)).slice(2)).toEqual(['notice(error): Task failed: unreachable (model_unreachable)']);
  });

  it('is not given for a task whose start this page did not see (its transcript was rebuilt from the history)', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'long one');
    state = receive(state, s1.event('thinking', { turn: 1 }), usage(s1, 10, 0, null));
    state = receive(state, { type: 'history', session_id: 's1', seq: s1.seq, messages: [{ role: 'user', content: 'long one' }] });
    state = receive(state, s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{}' }), ...s1.complete('done'));
    expect(notices(shown(view(state, 's1').items))).toEqual([]);
  });
});
