import { describe, expect, it, vi } from 'vitest';
import { restoreSessions, saveSessions } from '../src/persistence.js';
import { followUps } from '../src/state/decisions.js';
import { initialState, reduce } from '../src/state/reducer.js';
import type { ConsoleState, SessionView } from '../src/state/types.js';
import { takeToken, tokenFromHash, tokenKey } from '../src/token.js';
import {
  SessionScript,
  cards,
  prompted,
  receive,
  sessionOpened,
  shown,
  view,
  welcome,
  withFreshSession,
} from './fixtures.js';
import { MemoryStorage } from './storage.js';

/** Two open sessions: s1 waits for an approval the page answered, s2 is mid-stream. */
function twoSessions(): { state: ConsoleState; s1: SessionScript; s2: SessionScript } {
  const s1 = new SessionScript('s1');
  const s2 = new SessionScript('s2');
  let state = withFreshSession('s2', withFreshSession('s1'));
  state = prompted(state, s1, 'write notes');
  const request = s1.approvalRequest('req-1');
  state = receive(state, request, s1.event('state', { state: 'awaiting_approval' }));
  state = reduce(state, { type: 'approval_answered', sessionId: 's1', requestId: 'req-1', decision: 'allow_once' });
  // A reopen's pending approvals are kept on the view until its history came.
  state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_approvals: [request] }));
  state = prompted(state, s2, 'explain');
  state = receive(state, s2.event('thinking', { turn: 1 }), s2.event('text_delta', { content: 'It is ' }));
  return { state, s1, s2 };
}

describe('persistence (WEB-5: a reload loses nothing)', () => {
  it('restores the open sessions as they were, opening again, answers in flight cleared', () => {
    const { state, s1, s2 } = twoSessions();
    expect(view(state, 's1').openPending).toHaveLength(1);
    const storage = new MemoryStorage();
    saveSessions(storage, state, new Map());

    const restored = restoreSessions(storage);
    expect(restored.map((one) => one.id)).toEqual(['s1', 's2']);
    const [first, second] = restored as [SessionView, SessionView];
    expect(first).toMatchObject({ status: 'opening', synced: true, resync: false, lastSeq: s1.seq, openPending: [] });
    expect(shown(first.items)).toEqual(['user(sent): write notes', 'approval req-1']);
    expect(cards(initialState(restored), 's1')[0]?.answering).toBeUndefined();
    expect(second).toMatchObject({ status: 'opening', synced: true, lastSeq: s2.seq });
    expect(shown(second.items)).toEqual(['user(sent): explain', 'assistant…: It is ']);

    // The reloaded page asks each session only for what follows its view.
    let page = initialState(restored);
    expect(page.panels).toEqual(['s1', 's2']);
    const hello = welcome();
    page = receive(page, hello);
    expect(followUps(page, hello)).toEqual([
      { type: 'open', session_id: 's1', after: s1.seq },
      { type: 'open', session_id: 's2', after: s2.seq },
    ]);
    // …and the stream goes on in the same bubble.
    page = reduce(page, { type: 'open_requested', sessionId: 's2', after: s2.seq });
    page = receive(
      page,
      sessionOpened('s2', { state: 'running', last_seq: s2.seq }),
      s2.event('text_delta', { content: 'simple.' }),
      s2.event('text_completed', { content: 'It is simple.' }),
    );
    expect(shown(view(page, 's2').items)).toEqual(['user(sent): explain', 'assistant: It is simple.']);
  });

  it('keeps only the open sessions, and writes a view only when it changed', () => {
    const { state } = twoSessions();
    const storage = new MemoryStorage();
    const written = new Map<string, SessionView>();
    saveSessions(storage, state, written);
    expect([...storage.values.keys()].sort()).toEqual(['claw.console.open', 'claw.console.view.s1', 'claw.console.view.s2']);

    storage.writes.length = 0;
    saveSessions(storage, state, written);
    expect(storage.writes).toEqual(['claw.console.open']);

    const closed = reduce(state, { type: 'close_requested', sessionId: 's1' });
    saveSessions(storage, closed, written);
    expect([...storage.values.keys()].sort()).toEqual(['claw.console.open', 'claw.console.view.s2']);
    expect(JSON.parse(storage.getItem('claw.console.open') ?? '')).toEqual([{ id: 's2', lastSeq: view(state, 's2').lastSeq }]);
    expect([...written.keys()]).toEqual(['s2']);
    expect(restoreSessions(storage).map((one) => one.id)).toEqual(['s2']);
  });

  it('drops a view over the quota instead of throwing: that session reopens from its history', () => {
    const s1 = new SessionScript('s1');
    let state = withFreshSession('s1');
    state = prompted(state, s1, 'big');
    state = receive(state, ...s1.reply(1, ['x'.repeat(2000)]));
    const storage = new MemoryStorage(1000);
    expect(() => saveSessions(storage, state, new Map())).not.toThrow();
    expect(storage.getItem('claw.console.view.s1')).toBeNull();
    expect(JSON.parse(storage.getItem('claw.console.open') ?? '')).toEqual([{ id: 's1', lastSeq: s1.seq }]);

    const restored = restoreSessions(storage);
    expect(restored).toHaveLength(1);
    expect(restored[0]).toMatchObject({ id: 's1', status: 'opening', synced: false, items: [], lastSeq: 0 });
    const page = receive(initialState(restored), welcome());
    expect(followUps(page, welcome())).toEqual([{ type: 'open', session_id: 's1' }]);
  });

  it('removes an older copy of a view that no longer fits', () => {
    const s1 = new SessionScript('s1');
    let state = withFreshSession('s1');
    const storage = new MemoryStorage(3000);
    const written = new Map<string, SessionView>();
    saveSessions(storage, state, written);
    expect(storage.getItem('claw.console.view.s1')).not.toBeNull();

    state = prompted(state, s1, 'big');
    state = receive(state, ...s1.reply(1, ['y'.repeat(4000)]));
    saveSessions(storage, state, written);
    // A stale view would claim to be complete at an older seq.
    expect(storage.getItem('claw.console.view.s1')).toBeNull();
    expect(restoreSessions(storage)[0]).toMatchObject({ synced: false, lastSeq: 0 });
  });

  it('restores nothing from what does not parse, and an empty view when only the view is broken', () => {
    const storage = new MemoryStorage();
    storage.setItem('claw.console.open', '{not json');
    expect(restoreSessions(storage)).toEqual([]);
    storage.setItem('claw.console.open', JSON.stringify([{ id: 's1', lastSeq: 4 }, { id: 7 }, 'x']));
    storage.setItem('claw.console.view.s1', JSON.stringify({ id: 'another', lastSeq: 4, items: [] }));
    const restored = restoreSessions(storage);
    expect(restored).toHaveLength(1);
    expect(restored[0]).toMatchObject({ id: 's1', status: 'opening', synced: false, items: [] });
  });
});

describe('the token (WEB-5, SEC-2)', () => {
  it('is taken from the fragment, stored, and removed from the address', () => {
    const storage = new MemoryStorage();
    const replace = vi.fn<(url: string) => void>();
    const token = takeToken({ hash: '#token=c2VjcmV0LXRva2Vu%2B%2F', pathname: '/', search: '?view=2' }, storage, replace);
    expect(token).toBe('c2VjcmV0LXRva2Vu+/');
    expect(storage.getItem(tokenKey)).toBe('c2VjcmV0LXRva2Vu+/');
    expect(replace).toHaveBeenCalledTimes(1);
    expect(replace).toHaveBeenCalledWith('/?view=2');
  });

  it('without one in the fragment, is the stored one (a reload); the address is left alone', () => {
    const storage = new MemoryStorage();
    storage.setItem(tokenKey, 'kept');
    const replace = vi.fn<(url: string) => void>();
    expect(takeToken({ hash: '', pathname: '/', search: '' }, storage, replace)).toBe('kept');
    expect(takeToken({ hash: '#token=', pathname: '/', search: '' }, storage, replace)).toBe('kept');
    expect(replace).not.toHaveBeenCalled();
    expect(takeToken({ hash: '', pathname: '/', search: '' }, new MemoryStorage(), replace)).toBeUndefined();
  });

  it('a new token in the fragment replaces the stored one', () => {
    const storage = new MemoryStorage();
    storage.setItem(tokenKey, 'old');
    expect(takeToken({ hash: '#token=new', pathname: '/', search: '' }, storage, () => undefined)).toBe('new');
    expect(storage.getItem(tokenKey)).toBe('new');
  });

  it('leaves the other fragment parameters in the address; a storage that refuses still gives the token', () => {
    const replace = vi.fn<(url: string) => void>();
    const refusing = {
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(takeToken({ hash: '#a=1&token=abc&b=2', pathname: '/', search: '' }, refusing, replace)).toBe('abc');
    expect(replace).toHaveBeenCalledWith('/#a=1&b=2');
  });

  it('is read among other fragment parameters', () => {
    expect(tokenFromHash('#a=1&token=abc&b=2')).toBe('abc');
    expect(tokenFromHash('token=abc')).toBe('abc');
    expect(tokenFromHash('#tokens=abc')).toBeUndefined();
    expect(tokenFromHash('')).toBeUndefined();
  });
});
