import { describe, expect, it, vi } from 'vitest';
import { fetchListing } from '../src/session-listing.js';
import { reduce } from '../src/state/reducer.js';
import {
  canInterrupt,
  formatBudgets,
  formatBytes,
  formatCost,
  formatTokens,
  formatTtft,
  instructionsText,
  linkText,
  listStateText,
  sessionTitleText,
  taskStateText,
} from '../src/state/selectors.js';
import {
  SessionScript,
  prompted,
  receive,
  sessionOpened,
  view,
  withFreshSession,
} from './fixtures.js';

describe('session titles in the list', () => {
  it('are the first line of the first prompt: as the server lists them, or from a session begun in this page', () => {
    const s1 = new SessionScript('s1');
    let state = withFreshSession('s1');
    expect(sessionTitleText(view(state, 's1'))).toBeUndefined();
    state = prompted(state, s1, '  add a test for parse()\nit should cover empty input');
    expect(sessionTitleText(view(state, 's1'))).toBe('add a test for parse()');
    state = reduce(state, {
      type: 'listing',
      sessions: [
        { session_id: 's2', state: 'idle', last_seq: 3, updated_at: '2025-03-01T09:00:00.000Z', title: 'fix the login bug' },
        { session_id: 's3', state: 'idle', last_seq: 0, updated_at: '2025-03-01T09:00:00.000Z' },
      ],
      unreadable: [],
    });
    expect(sessionTitleText(view(state, 's2'))).toBe('fix the login bug');
    expect(sessionTitleText(view(state, 's3'))).toBeUndefined();
    // Live events keep what the listing said.
    expect(sessionTitleText(view(receive(state, s1.event('state', { state: 'running' })), 's2'))).toBe('fix the login bug');
  });
});

describe('state texts (WEB-1, WEB-4)', () => {
  it('lists an open session by its live state, others by the listing, all as disconnected when offline', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, s1.approvalRequest('r'), s1.event('state', { state: 'awaiting_approval' }));
    state = reduce(state, {
      type: 'listing',
      sessions: [
        { session_id: 's1', state: 'idle', last_seq: 1, updated_at: '2025-03-01T09:00:00.000Z' },
        { session_id: 's2', state: 'running', last_seq: 8, updated_at: '2025-03-01T09:00:00.000Z' },
      ],
      unreadable: [],
    });
    expect(listStateText(state.connection, view(state, 's1'))).toBe('awaiting approval');
    expect(listStateText(state.connection, view(state, 's2'))).toBe('running');
    expect(linkText(state.connection, view(state, 's1'))).toBe('live');
    expect(canInterrupt(state.connection, view(state, 's1'))).toBe(true);

    const offline = reduce(state, { type: 'connection', status: 'reconnecting' });
    expect(listStateText(offline.connection, view(offline, 's1'))).toBe('disconnected');
    expect(linkText(offline.connection, view(offline, 's1'))).toBe('disconnected');
    expect(canInterrupt(offline.connection, view(offline, 's1'))).toBe(false);

    const reopening = reduce(state, { type: 'open_requested', sessionId: 's1', after: s1.seq });
    expect(linkText(reopening.connection, view(reopening, 's1'))).toBe('opening');
  });

  it("shows a task's state, then how the last one ended", () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    expect(taskStateText(view(state, 's1'))).toBe('running');
    state = receive(state, s1.event('task_canceled', { reason: 'interrupted by ws-1' }));
    state = receive(state, s1.event('state', { state: 'idle' }));
    expect(taskStateText(view(state, 's1'))).toBe('canceled');
    expect(canInterrupt(state.connection, view(state, 's1'))).toBe(false);
    state = prompted(state, s1, 'again');
    expect(taskStateText(view(state, 's1'))).toBe('running');
  });
});

describe('figures as text (WEB-4)', () => {
  it('formats tokens, cost and time to first token', () => {
    expect(formatTokens({})).toBe('—');
    expect(formatTokens({ sessionTokens: 1234567 })).toBe('1,234,567');
    expect(formatCost({})).toBe('—');
    expect(formatCost({ sessionCostUsd: 1.5, unpricedCalls: 0 })).toBe('$1.50');
    expect(formatCost({ sessionCostUsd: 0.0042, unpricedCalls: 0 })).toBe('$0.0042');
    expect(formatCost({ sessionCostUsd: 0, unpricedCalls: 2 })).toBe('unpriced');
    expect(formatCost({ sessionCostUsd: 0.25, unpricedCalls: 1 })).toBe('$0.25 + 1 unpriced');
    expect(formatTtft({})).toBe('—');
    expect(formatTtft({ ttftMs: 999.6 })).toBe('1000 ms');
    expect(formatTtft({ ttftMs: 30_500 })).toBe('30.50 s');
  });

  it('names the cached part of the session\'s tokens when there is one (REAL-5)', () => {
    expect(formatTokens({ sessionTokens: 18204, sessionCachedTokens: 12800 })).toBe('18,204 (12,800 cached)');
    expect(formatTokens({ sessionTokens: 18204, sessionCachedTokens: 12800, runTokens: 2500 })).toBe(
      '18,204 (12,800 cached) (last task 2,500)',
    );
    expect(formatTokens({ sessionTokens: 18204, sessionCachedTokens: 0, runTokens: 2500 })).toBe('18,204 (last task 2,500)');
    expect(formatTokens({ sessionCachedTokens: 5 })).toBe('—');
  });

  it('lists the budgets that have a limit', () => {
    expect(formatBudgets({})).toBe('—');
    expect(formatBudgets({ budgetsLeft: {} })).toBe('no limits');
    expect(formatBudgets({ budgetsLeft: { run_tokens: 5000.7, session_cost_usd: 0.5, subagents: 2 } })).toBe(
      'task tokens 5,000 · session $0.50 · subagents 2',
    );
  });
});

describe('the session listing (GET /api/sessions)', () => {
  const listed = { session_id: 's9', state: 'idle', last_seq: 3, updated_at: '2025-03-01T09:00:00.000Z' };

  it('asks with the token as a Bearer header and returns the sessions', async () => {
    const fetcher = vi.fn(async (_url: string | URL | Request, _init?: RequestInit) =>
      new Response(JSON.stringify({ sessions: [listed] }), { headers: { 'content-type': 'application/json' } }),
    );
    expect(await fetchListing('tok', fetcher)).toEqual({ sessions: [listed], unreadable: [] });
    const [url, init] = fetcher.mock.calls[0] ?? [];
    expect(url).toBe('/api/sessions');
    const headers = new Headers(init?.headers);
    expect(headers.get('authorization')).toBe('Bearer tok');
    expect(headers.get('accept')).toBe('application/json');
  });

  it('names the stored sessions the server cannot read', async () => {
    const unreadable = [{ session_id: 'broken', reason: 'the session file is corrupt at line 1' }];
    const body = JSON.stringify({ sessions: [listed], unreadable_sessions: unreadable });
    expect(await fetchListing('tok', async () => new Response(body))).toEqual({ sessions: [listed], unreadable });
  });

  it('is undefined when refused, malformed or unreachable', async () => {
    const answer = (body: string, status = 200) => async () => new Response(body, { status });
    expect(await fetchListing('tok', answer('{"error":"unauthorized"}', 401))).toBeUndefined();
    expect(await fetchListing('tok', answer('not json'))).toBeUndefined();
    expect(await fetchListing('tok', answer(JSON.stringify({ sessions: [{ ...listed, state: 'asleep' }] })))).toBeUndefined();
    expect(await fetchListing('tok', () => Promise.reject(new TypeError('Failed to fetch')))).toBeUndefined();
  });
});

describe('the project instructions line (REAL-2)', () => {
  it('names each file the model is given, in order, with its size, and marks a cut one', () => {
    expect(instructionsText([
      { path: 'AGENTS.md', bytes: 1229 },
      { path: 'sub/AGENTS.md', bytes: 300, truncated: false },
    ])).toBe('instructions: AGENTS.md (1.2 KB), sub/AGENTS.md (300 B)');
    expect(instructionsText([
      { path: '~/.config/claw/AGENTS.md', bytes: 0 },
      { path: 'AGENTS.md', bytes: 40_000, truncated: true },
    ])).toBe('instructions: ~/.config/claw/AGENTS.md (0 B), AGENTS.md (39 KB) (cut)');
  });

  it('is nothing when there are none', () => {
    expect(instructionsText(undefined)).toBeUndefined();
    expect(instructionsText([])).toBeUndefined();
  });

  it('sizes files as people read them', () => {
    expect([0, 1023, 1024, 10_188, 10_240, 32 * 1024, 1_572_864].map(formatBytes)).toEqual([
      '0 B', '1023 B', '1.0 KB', '9.9 KB', '10 KB', '32 KB', '1.5 MB',
    ]);
  });

  it("is the session's, as session_opened says it each time it is opened", () => {
    const files = [{ path: 'AGENTS.md', bytes: 300 }];
    let state = receive(withFreshSession('s1'), sessionOpened('s1', { instructions: files }));
    expect(instructionsText(view(state, 's1').instructions)).toBe('instructions: AGENTS.md (300 B)');
    state = receive(state, sessionOpened('s1'));
    expect(instructionsText(view(state, 's1').instructions)).toBeUndefined();
  });
});
