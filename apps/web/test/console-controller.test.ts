import { parseClientMessage } from '@claw/channel/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsoleController } from '../src/console-controller.js';
import { saveSessions } from '../src/persistence.js';
import { tokenKey } from '../src/token.js';
import { socketFactory, type FakeSocket } from './fake-socket.js';
import {
  SessionScript,
  cards,
  errorEvent,
  history,
  prompted,
  receive,
  sessionOpened,
  shown,
  view,
  welcome,
  withFreshSession,
} from './fixtures.js';
import { MemoryStorage } from './storage.js';

const location = { protocol: 'http:', host: '127.0.0.1:8081' };

function controller(storage = new MemoryStorage()) {
  const factory = socketFactory();
  const page = new ConsoleController({ storage, location, createSocket: factory.create });
  return { page, storage, ...factory };
}

/** Opens the socket and lets the server welcome it. */
function welcomed(socket: FakeSocket, sessions: Parameters<typeof welcome>[0] = []): void {
  socket.open();
  socket.receive(welcome(sessions));
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('the console controller', () => {
  it('says there is no token instead of connecting without one', () => {
    const { page, sockets } = controller();
    page.start(undefined);
    expect(sockets).toHaveLength(0);
    expect(page.getState()).toMatchObject({ connection: 'disconnected', connectionDetail: 'no token' });
  });

  it('creates a session only once connected, and shows it when the server opened it', () => {
    const { page, last } = controller();
    page.start('tok');
    expect(last().url).toBe('ws://127.0.0.1:8081/ws');
    page.newSession();
    expect(page.getState().pendingNew).toBe(0);
    welcomed(last());
    page.newSession();
    expect(last().messages.slice(1)).toEqual([{ type: 'open' }]);
    expect(page.getState().pendingNew).toBe(1);
    last().receive(sessionOpened('ws-channel-session-1'));
    last().receive(history('ws-channel-session-1', 0));
    expect(page.getState().panels).toEqual(['ws-channel-session-1']);
    expect(page.getState().pendingNew).toBe(0);
  });

  it('sends prompts, answers and interrupts for their session; the card waits for the server', () => {
    const { page, last } = controller();
    const listener = vi.fn();
    page.subscribe(listener);
    page.start('tok');
    welcomed(last());
    last().receive(sessionOpened('s1'));
    last().receive(history('s1', 0));
    expect(page.prompt('s1', '   ')).toBe(false);
    expect(page.prompt('s1', 'write notes')).toBe(true);
    const s1 = new SessionScript('s1');
    for (const event of s1.start('write notes')) last().receive(event);
    last().receive(s1.approvalRequest('req-1'));
    page.answer('s1', 'req-1', 'deny');
    page.interrupt('s1');
    expect(last().messages.slice(1)).toEqual([
      { type: 'prompt', session_id: 's1', content: 'write notes' },
      { type: 'approval_response', session_id: 's1', request_id: 'req-1', decision: 'deny' },
      { type: 'interrupt', session_id: 's1' },
    ]);
    const state = page.getState();
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): write notes', 'approval req-1']);
    expect(cards(state, 's1')[0]).toMatchObject({ answering: 'deny' });
    expect(cards(state, 's1')[0]?.resolution).toBeUndefined();
    expect(listener).toHaveBeenCalled();
  });

  it('sends /compact typed in the message box as a compact message, with what to keep; other text as a prompt (CMP-5)', () => {
    const { page, last } = controller();
    page.start('tok');
    expect(page.submit('s1', '/compact')).toBe(false);
    welcomed(last());
    last().receive(sessionOpened('s1'));
    last().receive(history('s1', 0));
    expect(page.submit('s1', '  /compact  keep the API \n')).toBe(true);
    expect(last().messages.at(-1)).toEqual({ type: 'compact', session_id: 's1', focus: 'keep the API' });
    expect(shown(view(page.getState(), 's1').items)).toEqual(['user(pending): /compact keep the API']);
    const message = 'session "s1" is running a task (task-1); compact it once that ends, or interrupt it';
    last().receive(errorEvent({ code: 'session_busy', message, session_id: 's1' }));
    expect(view(page.getState(), 's1').items.at(-1)).toMatchObject({ status: 'failed', error: message });

    expect(page.submit('s1', '/compact')).toBe(true);
    expect(page.submit('s1', '/compaction please')).toBe(true);
    expect(page.submit('s1', '   ')).toBe(false);
    expect(last().messages.slice(1)).toEqual([
      { type: 'compact', session_id: 's1', focus: 'keep the API' },
      { type: 'compact', session_id: 's1' },
      { type: 'prompt', session_id: 's1', content: '/compaction please' },
    ]);
    // Each one the server accepts: its task starts with the command.
    const s1 = new SessionScript('s1');
    for (const event of s1.start('/compact')) last().receive(event);
    expect(shown(view(page.getState(), 's1').items).slice(1)).toEqual([
      'user(sent): /compact',
      'user(pending): /compaction please',
    ]);
    for (const sent of last().messages) expect(parseClientMessage(JSON.stringify(sent)).ok).toBe(true);
  });

  it('closes a session at once: what is still on its way for it is ignored', () => {
    const { page, last } = controller();
    page.start('tok');
    welcomed(last());
    last().receive(sessionOpened('s1'));
    last().receive(history('s1', 0));
    page.closeSession('s1');
    expect(last().messages.at(-1)).toEqual({ type: 'close', session_id: 's1' });
    const s1 = new SessionScript('s1');
    for (const event of s1.start('late')) last().receive(event);
    expect(page.getState().panels).toEqual([]);
    expect(view(page.getState(), 's1').items).toEqual([]);
  });

  it('after a reload, reopens its sessions with their cursors; a pending approval shows once', () => {
    // What the page had saved before the reload.
    const s1 = new SessionScript('s1');
    let before = prompted(withFreshSession('s1'), s1, 'write notes');
    const request = s1.approvalRequest('req-1');
    before = receive(before, request, s1.event('state', { state: 'awaiting_approval' }));
    const storage = new MemoryStorage();
    saveSessions(storage, before, new Map());
    const cursor = s1.seq;

    const { page, last } = controller(storage);
    expect(page.getState().panels).toEqual(['s1']);
    expect(view(page.getState(), 's1').status).toBe('opening');
    page.start('tok');
    welcomed(last(), [{ session_id: 's1', state: 'awaiting_approval', last_seq: cursor, updated_at: '2025-03-01T09:00:00.000Z' }]);
    expect(last().messages).toEqual([
      { type: 'hello', token: 'tok', protocol: 1 },
      { type: 'open', session_id: 's1', after: cursor },
    ]);

    last().receive(sessionOpened('s1', { state: 'awaiting_approval', last_seq: cursor, pending_approvals: [request] }));
    last().receive(s1.event('approval_resolved', { request_id: 'req-1', decision: 'allow_once', by: 'ws-9' }));
    const state = page.getState();
    expect(view(state, 's1').status).toBe('open');
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): write notes', 'approval req-1: allow_once by ws-9']);
  });

  it('answers cursor_expired with an open without cursor, and the history rebuilds the panel', () => {
    const s1 = new SessionScript('s1');
    const storage = new MemoryStorage();
    let before = prompted(withFreshSession('s1'), s1, 'first');
    before = receive(before, ...s1.reply(1, ['one']), ...s1.complete('one'));
    saveSessions(storage, before, new Map());

    const { page, last } = controller(storage);
    page.start('tok');
    welcomed(last());
    expect(last().messages.at(-1)).toEqual({ type: 'open', session_id: 's1', after: s1.seq });
    last().receive(errorEvent({ code: 'cursor_expired', message: 'expired', session_id: 's1', oldest_seq: 30 }));
    expect(last().messages.at(-1)).toEqual({ type: 'open', session_id: 's1' });
    expect(view(page.getState(), 's1')).toMatchObject({ status: 'opening', synced: false });

    last().receive(sessionOpened('s1', { last_seq: 42 }));
    last().receive(history('s1', 42, [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: 'two' },
    ]));
    const state = page.getState();
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): first', 'assistant: one', 'user(sent): second', 'assistant: two']);
    expect(view(state, 's1')).toMatchObject({ status: 'open', synced: true, lastSeq: 42 });
    expect(state.notice).toBeUndefined();
  });

  it('reconnects after a dropped socket and reopens with the cursor it reached', () => {
    const { page, sockets, last } = controller();
    page.start('tok');
    welcomed(last());
    last().receive(sessionOpened('s1'));
    last().receive(history('s1', 0));
    const s1 = new SessionScript('s1');
    for (const event of [...s1.start('hi'), ...s1.reply(1, ['hel'])]) last().receive(event);
    last().drop(1006);
    expect(page.getState().connection).toBe('reconnecting');

    vi.advanceTimersByTime(10_000);
    expect(sockets).toHaveLength(2);
    welcomed(last());
    expect(last().messages).toEqual([
      { type: 'hello', token: 'tok', protocol: 1 },
      { type: 'open', session_id: 's1', after: s1.seq },
    ]);
    expect(page.getState().connection).toBe('connected');
  });

  it('forgets a refused token and stops', () => {
    const storage = new MemoryStorage();
    storage.setItem(tokenKey, 'wrong');
    const { page, sockets, last } = controller(storage);
    page.start('wrong');
    last().open();
    last().receive(errorEvent({ code: 'unauthorized', message: 'unauthorized: the token is wrong' }));
    last().drop(4001, 'unauthorized');
    expect(page.getState().connection).toBe('unauthorized');
    expect(storage.getItem(tokenKey)).toBeNull();
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });

  it('saves the open sessions shortly after a change, and at once on flush', () => {
    const { page, storage, last } = controller();
    page.start('tok');
    welcomed(last());
    last().receive(sessionOpened('s1'));
    last().receive(history('s1', 0));
    expect(storage.getItem('claw.console.open')).toBeNull();
    vi.advanceTimersByTime(250);
    expect(JSON.parse(storage.getItem('claw.console.open') ?? 'null')).toEqual([{ id: 's1', lastSeq: 0 }]);

    const s1 = new SessionScript('s1');
    for (const event of s1.start('hi')) last().receive(event);
    page.flush();
    expect(JSON.parse(storage.getItem('claw.console.open') ?? 'null')).toEqual([{ id: 's1', lastSeq: 2 }]);
    const saved = JSON.parse(storage.getItem('claw.console.view.s1') ?? 'null') as { lastSeq: number };
    expect(saved.lastSeq).toBe(2);
  });

  it("refreshes the session list from the server's listing while connected", async () => {
    const fetcher = vi.fn(async (_url: string, _init?: RequestInit) =>
      new Response(JSON.stringify({
        sessions: [{ session_id: 'elsewhere', state: 'running', last_seq: 9, updated_at: '2025-03-01T09:00:00.000Z' }],
      })),
    );
    vi.stubGlobal('fetch', fetcher);
    const { page, last } = controller();
    page.start('tok');
    await vi.advanceTimersByTimeAsync(5000);
    // Not connected yet: no request.
    expect(fetcher).not.toHaveBeenCalled();
    welcomed(last());
    await vi.advanceTimersByTimeAsync(5000);
    expect(fetcher).toHaveBeenCalledTimes(1);
    const [url, init] = fetcher.mock.calls[0] ?? [];
    expect(url).toBe('/api/sessions');
    expect(new Headers(init?.headers).get('authorization')).toBe('Bearer tok');
    expect(view(page.getState(), 'elsewhere')).toMatchObject({ status: 'closed', listing: { state: 'running', lastSeq: 9 } });
    expect(page.getState().order).toEqual(['elsewhere']);
  });
});
