import { parseClientMessage } from '@claw/channel/protocol';
import { describe, expect, it } from 'vitest';
import { followUps, reopenMessage } from '../src/state/decisions.js';
import { initialState, reduce } from '../src/state/reducer.js';
import { formatCost, formatBudgets, formatTokens, formatTtft } from '../src/state/selectors.js';
import type { ConsoleState } from '../src/state/types.js';
import {
  SessionScript,
  cards,
  errorEvent,
  history,
  prompted,
  receive,
  sessionOpened,
  shown,
  startTime,
  view,
  welcome,
  withFreshSession,
} from './fixtures.js';

describe('a new session', () => {
  it('opens a panel on session_opened and its history; the request for it is answered', () => {
    const asked = reduce(receive(initialState(), welcome()), { type: 'new_session_requested' });
    expect(asked.pendingNew).toBe(1);
    const state = receive(asked, sessionOpened('ws-channel-session-1'), history('ws-channel-session-1', 0));
    expect(state.pendingNew).toBe(0);
    expect(state.panels).toEqual(['ws-channel-session-1']);
    expect(state.order).toEqual(['ws-channel-session-1']);
    const opened = view(state, 'ws-channel-session-1');
    expect(opened).toMatchObject({ status: 'open', synced: true, lastSeq: 0, role: 'controller', workdir: '/home/dev/project' });
    expect(reopenMessage(opened)).toEqual({ type: 'open', session_id: 'ws-channel-session-1', after: 0 });
  });
});

describe('text deltas (WEB-2)', () => {
  it('grow one assistant bubble until text_completed, whose text is authoritative', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'say hello');
    state = receive(state, s1.event('thinking', { turn: 1 }), s1.event('text_delta', { content: 'Hel' }));
    const first = view(state, 's1').items.at(-1);
    expect(first).toMatchObject({ kind: 'assistant', text: 'Hel', streaming: true });

    state = receive(state, s1.event('text_delta', { content: 'lo, ' }), s1.event('text_delta', { content: 'wor' }));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): say hello', 'assistant…: Hello, wor']);
    expect(view(state, 's1').items.at(-1)?.key).toBe(first?.key);

    // Deltas may have been coalesced or cut on the way: the completed text replaces them.
    state = receive(state, s1.event('text_completed', { content: 'Hello, world!' }));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): say hello', 'assistant: Hello, world!']);
    expect(view(state, 's1').streamingKey).toBeUndefined();

    state = receive(state, ...s1.complete('Hello, world!'));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): say hello', 'assistant: Hello, world!']);
    expect(view(state, 's1')).toMatchObject({ runState: 'idle', lastEnd: 'completed', lastSeq: 9 });
  });

  it('starts a new bubble for the turn after a tool call, and puts the result on its call', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'list the files');
    state = receive(
      state,
      ...s1.reply(1, ['Let me look.']),
      s1.event('tool_call', { tool_call_id: 'call-1', tool_name: 'bash', arguments: '{"command":"ls"}' }),
      s1.event('tool_result', {
        tool_call_id: 'call-1',
        tool_name: 'bash',
        result: 'exit code: 0\n--- stdout ---\nREADME.md\n--- stderr (empty) ---',
        is_error: false,
      }),
      ...s1.reply(2, ['There is ', 'one file.']),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): list the files',
      'assistant: Let me look.',
      'tool bash → ok',
      'assistant: There is one file.',
    ]);
    const tool = view(state, 's1').items[2];
    expect(tool).toMatchObject({ toolCallId: 'call-1', arguments: '{"command":"ls"}', result: { isError: false } });
  });

  it('a tool call ends the bubble even without text_completed; a later delta starts another', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('text_delta', { content: 'first' }),
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{"path":"a"}' }),
      s1.event('text_delta', { content: 'second' }),
    );
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): go', 'assistant: first', 'tool read_file', 'assistant…: second']);
  });
});

describe('tool progress (not a session event)', () => {
  it('shows what a running call last said of its progress, until its result; other calls are left alone', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'build it');
    state = receive(state, s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'bash', arguments: '{"command":"make"}' }));
    const progress = (fields: { tool_call_id: string; progress: number; total?: number; message?: string }) => ({
      type: 'tool_progress' as const,
      session_id: 's1',
      task_id: 'task-1',
      tool_name: 'bash',
      ...fields,
    });
    state = receive(state, progress({ tool_call_id: 'c1', progress: 5000, message: 'running for 5s; last output: "cc a.c"' }));
    expect(view(state, 's1').items.at(-1)).toMatchObject({ kind: 'tool', progress: 'running for 5s; last output: "cc a.c"' });
    state = receive(state, progress({ tool_call_id: 'c1', progress: 2, total: 4, message: 'linking' }));
    expect(view(state, 's1').items.at(-1)).toMatchObject({ progress: 'linking (2 of 4)' });
    // A call this page does not have, or another session's: nothing changes.
    const before = state;
    state = receive(state, progress({ tool_call_id: 'c9', progress: 1 }), { ...progress({ tool_call_id: 'c1', progress: 3 }), session_id: 's2' });
    expect(state.sessions).toBe(before.sessions);
    state = receive(state, s1.event('tool_result', { tool_call_id: 'c1', tool_name: 'bash', result: 'exit code: 0\n--- stdout (empty) ---\n--- stderr (empty) ---', is_error: false }));
    // After its result, late progress is dropped.
    const ended = view(state, 's1');
    state = receive(state, progress({ tool_call_id: 'c1', progress: 4, total: 4 }));
    expect(view(state, 's1')).toBe(ended);
  });
});

describe('events update only their own session (WEB-1)', () => {
  it('applies a session event to its session and leaves the other panel as it was', () => {
    const s1 = new SessionScript('s1');
    const s2 = new SessionScript('s2');
    let state = withFreshSession('s2', withFreshSession('s1'));
    expect(state.panels).toEqual(['s1', 's2']);
    state = prompted(state, s1, 'one');
    const before = view(state, 's2');
    state = receive(state, ...s1.reply(1, ['for s1']));
    expect(view(state, 's2')).toBe(before);
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): one', 'assistant: for s1']);

    state = prompted(state, s2, 'two');
    state = receive(state, ...s2.reply(1, ['for s2']));
    expect(shown(view(state, 's2').items)).toEqual(['user(sent): two', 'assistant: for s2']);
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): one', 'assistant: for s1']);
  });

  it('ignores events of a session the page does not know', () => {
    const other = new SessionScript('someone-elses');
    const state = withFreshSession('s1');
    expect(receive(state, ...other.start('hi'), ...other.reply(1, ['x']))).toBe(state);
  });

  it('ignores events still on their way for a session the page has closed', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'long task');
    state = reduce(state, { type: 'close_requested', sessionId: 's1' });
    expect(state.panels).toEqual([]);
    expect(view(state, 's1')).toMatchObject({ status: 'closed', items: [], synced: false });
    expect(state.order).toEqual(['s1']);
    const closed = state;
    state = receive(state, ...s1.reply(1, ['too late']), s1.approvalRequest('r1'));
    expect(state).toBe(closed);
    // The server's confirmation changes nothing either.
    expect(view(receive(state, { type: 'session_closed', session_id: 's1', ended: false }), 's1').items).toEqual([]);
  });
});

describe('replayed events (seq ≤ lastSeq) are not shown twice', () => {
  it('drops an event it already applied, by seq', () => {
    const s1 = new SessionScript('s1');
    const events = [...s1.start('hi'), ...s1.reply(1, ['a', 'b']), s1.approvalRequest('r1')];
    const once = receive(withFreshSession('s1'), ...events);
    expect(receive(once, ...events)).toBe(once);
    expect(shown(view(once, 's1').items)).toEqual(['user(sent): hi', 'assistant: ab', 'approval r1']);
  });

  it('reconnects with its cursor: session_opened with the pending approval, the missed events, then live', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'write notes');
    state = receive(state, ...s1.reply(1, ['I will write it.']));
    const seen = s1.seq;
    expect(view(state, 's1').lastSeq).toBe(seen);

    // The connection drops; meanwhile the task goes on and asks for an approval.
    state = reduce(state, { type: 'connection', status: 'reconnecting', detail: 'connection lost' });
    const missed = [
      s1.event('tool_call', {
        tool_call_id: 'call-1',
        tool_name: 'write_file',
        arguments: JSON.stringify({ path: 'notes.txt', content: 'hello\n' }),
      }),
      s1.approvalRequest('req-1'),
      s1.event('state', { state: 'awaiting_approval' }),
    ];
    const request = missed[1] as ReturnType<SessionScript['approvalRequest']>;

    const hello = welcome([{ session_id: 's1', state: 'awaiting_approval', last_seq: s1.seq, updated_at: '2025-03-01T09:01:00.000Z' }]);
    state = receive(state, hello);
    expect(state.connection).toBe('connected');
    const opens = followUps(state, hello);
    expect(opens).toEqual([{ type: 'open', session_id: 's1', after: seen }]);
    state = reduce(state, { type: 'open_requested', sessionId: 's1', after: seen });
    expect(view(state, 's1')).toMatchObject({ status: 'opening', synced: true });

    state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_approvals: [request] }));
    // The pending request is after the cursor: it comes with the replay, not from session_opened.
    expect(cards(state, 's1')).toEqual([]);
    expect(view(state, 's1')).toMatchObject({ status: 'open', runState: 'awaiting_approval' });

    state = receive(state, ...missed);
    // A replay that overlaps (an event sent twice) changes nothing.
    state = receive(state, ...missed);
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): write notes',
      'assistant: I will write it.',
      'tool write_file',
      'approval req-1',
    ]);

    // Live again: another client (ws-2) answers; the card says so.
    state = receive(
      state,
      s1.event('approval_resolved', { request_id: 'req-1', decision: 'allow_once', by: 'ws-2' }),
      s1.event('state', { state: 'running' }),
      s1.event('tool_result', { tool_call_id: 'call-1', tool_name: 'write_file', result: 'wrote 6 bytes to notes.txt (created)', is_error: false }),
      ...s1.reply(2, ['Done.']),
      ...s1.complete('Done.'),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): write notes',
      'assistant: I will write it.',
      'tool write_file → ok',
      'approval req-1: allow_once by ws-2',
      'assistant: Done.',
      // What the task did (this page saw it start): as the terminal says it.
      'notice(info): 2 model calls · 1 tool call · 0 tokens · cost $0.00 · 0.1 s',
    ]);
    expect(view(state, 's1')).toMatchObject({ lastSeq: s1.seq, runState: 'idle' });
  });

  it('shows a pending approval the page already has once when session_opened sends it again', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'write notes');
    const request = s1.approvalRequest('req-1');
    state = receive(state, request, s1.event('state', { state: 'awaiting_approval' }));
    state = reduce(state, { type: 'approval_answered', sessionId: 's1', requestId: 'req-1', decision: 'allow_once' });
    expect(cards(state, 's1')[0]?.answering).toBe('allow_once');

    // The answer died with the socket: the card can be answered again once it is back.
    state = reduce(state, { type: 'connection', status: 'reconnecting' });
    expect(cards(state, 's1')[0]?.answering).toBeUndefined();
    state = receive(state, welcome());
    state = reduce(state, { type: 'open_requested', sessionId: 's1', after: s1.seq });
    state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_approvals: [request] }));
    expect(cards(state, 's1')).toHaveLength(1);
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): write notes', 'approval req-1']);
  });

  it('puts back a pending approval the view lost, when it is before the cursor', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'write notes');
    const request = s1.approvalRequest('req-1');
    // The page saw the seq (e.g. a view restored without its last items) but shows no card.
    state = receive(state, s1.event('state', { state: 'awaiting_approval' }));
    state = reduce(state, { type: 'open_requested', sessionId: 's1', after: s1.seq });
    state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_approvals: [request] }));
    expect(cards(state, 's1').map((card) => card.requestId)).toEqual(['req-1']);
  });
});

describe('approval cards (WEB-3)', () => {
  function awaiting(): { state: ConsoleState; s1: SessionScript } {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'clean up');
    state = receive(
      state,
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'bash', arguments: '{"command":"rm -r build"}' }),
      s1.approvalRequest('req-7', { tool_name: 'bash', risk: 'dangerous', reason: 'bash can run any command', arguments: '{"command":"rm -r build"}' }),
      s1.event('state', { state: 'awaiting_approval' }),
    );
    return { state, s1 };
  }

  it('shows the request: tool, risk, reason and arguments', () => {
    const { state } = awaiting();
    expect(cards(state, 's1')).toEqual([
      {
        kind: 'approval',
        key: 'a-req-7',
        requestId: 'req-7',
        seq: 4,
        toolName: 'bash',
        risk: 'dangerous',
        reason: 'bash can run any command',
        arguments: '{"command":"rm -r build"}',
      },
    ]);
    expect(view(state, 's1').runState).toBe('awaiting_approval');
  });

  it('turns into the decision and who made it when answered elsewhere', () => {
    const { state, s1 } = awaiting();
    const next = receive(state, s1.event('approval_resolved', { request_id: 'req-7', decision: 'deny', by: 'ws-4' }));
    expect(cards(next, 's1')[0]).toMatchObject({ resolution: { decision: 'deny', by: 'ws-4' }, answering: undefined });
  });

  it("the page's answer waits for the server: only approval_resolved resolves the card", () => {
    const { state, s1 } = awaiting();
    let next = reduce(state, { type: 'approval_answered', sessionId: 's1', requestId: 'req-7', decision: 'allow_session' });
    expect(cards(next, 's1')[0]).toMatchObject({ answering: 'allow_session' });
    expect(cards(next, 's1')[0]?.resolution).toBeUndefined();
    next = receive(next, s1.event('approval_resolved', { request_id: 'req-7', decision: 'allow_session', by: 'ws-1' }));
    expect(cards(next, 's1')[0]).toMatchObject({ resolution: { decision: 'allow_session', by: 'ws-1' }, answering: undefined });
  });

  it('an answer that came too late shows the error on its card', () => {
    const { state } = awaiting();
    let next = reduce(state, { type: 'approval_answered', sessionId: 's1', requestId: 'req-7', decision: 'allow_once' });
    next = receive(next, errorEvent({ code: 'approval_not_pending', message: 'approval req-7 is not pending', session_id: 's1', request_id: 'req-7' }));
    expect(cards(next, 's1')[0]).toMatchObject({ answering: undefined, error: 'approval req-7 is not pending' });
    expect(view(next, 's1').error).toBeUndefined();
  });
});

describe('cursor_expired', () => {
  it('reopens without a cursor; the history rebuilds the transcript with the pending approvals after it', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'old prompt');
    state = receive(state, ...s1.reply(1, ['old answer']), ...s1.complete('old answer'));
    const cursor = s1.seq;

    state = reduce(state, { type: 'connection', status: 'reconnecting' });
    state = receive(state, welcome());
    state = reduce(state, { type: 'open_requested', sessionId: 's1', after: cursor });
    const expired = errorEvent({
      code: 'cursor_expired',
      message: `events after seq ${cursor} are no longer kept`,
      session_id: 's1',
      oldest_seq: 40,
    });
    state = receive(state, expired);
    expect(view(state, 's1')).toMatchObject({ resync: true, synced: false });
    // The transcript stays until the history replaces it (no flash of an empty panel).
    expect(view(state, 's1').items).toHaveLength(2);
    expect(state.notice).toBeUndefined();

    const opens = followUps(state, expired);
    expect(opens).toEqual([{ type: 'open', session_id: 's1' }]);
    expect(reopenMessage(view(state, 's1'))).toEqual({ type: 'open', session_id: 's1' });
    state = reduce(state, { type: 'open_requested', sessionId: 's1' });

    s1.seq = 57;
    const pending = s1.approvalRequest('req-9', { arguments: '{"path":"b.txt","content":"b"}' });
    state = receive(
      state,
      sessionOpened('s1', { state: 'awaiting_approval', last_seq: 58, pending_approvals: [pending] }),
    );
    // Without a base, the pending request waits for the history.
    expect(cards(state, 's1')).toEqual([]);
    state = receive(
      state,
      history('s1', 58, [
        { role: 'system', content: 'You are claw.' },
        { role: 'user', content: 'old prompt' },
        { role: 'assistant', content: 'old answer' },
        { role: 'user', content: 'write a and b' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'w1', name: 'write_file', arguments: '{"path":"a.txt","content":"a"}' },
            { id: 'w2', name: 'write_file', arguments: '{"path":"b.txt","content":"b"}' },
          ],
        },
        { role: 'tool', tool_call_id: 'w1', content: 'wrote 1 byte to a.txt (created)' },
      ]),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): old prompt',
      'assistant: old answer',
      'user(sent): write a and b',
      'tool write_file → ok',
      'tool write_file',
      'approval req-9',
    ]);
    expect(view(state, 's1')).toMatchObject({ lastSeq: 58, synced: true, resync: false, status: 'open' });
    expect(reopenMessage(view(state, 's1'))).toEqual({ type: 'open', session_id: 's1', after: 58 });

    // Live events continue after the history's seq.
    s1.seq = 58;
    state = receive(state, s1.event('approval_resolved', { request_id: 'req-9', decision: 'allow_once', by: 'ws-1' }));
    expect(cards(state, 's1')).toHaveLength(1);
    expect(cards(state, 's1')[0]?.resolution).toEqual({ decision: 'allow_once', by: 'ws-1' });
  });

  it('asks for nothing for a session the page closed meanwhile', () => {
    let state = reduce(withFreshSession('s1'), { type: 'close_requested', sessionId: 's1' });
    const expired = errorEvent({ code: 'cursor_expired', message: 'expired', session_id: 's1', oldest_seq: 3 });
    state = receive(state, expired);
    expect(followUps(state, expired)).toEqual([]);
    expect(state.notice).toBe('s1: expired');
  });
});

describe('the end of a session\'s events here (lease_lost, store_unavailable, session_dropped)', () => {
  it.each(['lease_lost', 'store_unavailable', 'session_dropped'])('%s: says why and reopens the session without a cursor', (code) => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'a prompt');
    state = receive(state, ...s1.reply(1, ['part of an answer']));
    const ended = errorEvent({ code, message: 'session "s1" was let go by this process', session_id: 's1' });
    state = receive(state, ended);
    expect(view(state, 's1')).toMatchObject({ resync: true, synced: false });
    expect(state.notice).toBe('s1: session "s1" was let go by this process (opening it again)');
    expect(followUps(state, ended)).toEqual([{ type: 'open', session_id: 's1' }]);
  });

  it('asks for nothing for a session the page closed meanwhile', () => {
    let state = reduce(withFreshSession('s1'), { type: 'close_requested', sessionId: 's1' });
    const ended = errorEvent({ code: 'lease_lost', message: 'lost', session_id: 's1' });
    state = receive(state, ended);
    expect(followUps(state, ended)).toEqual([]);
  });
});

describe('welcome after a reconnect', () => {
  it('reopens each panel, with after: lastSeq only when the view is synced', () => {
    const s1 = new SessionScript('s1');
    let state = withFreshSession('s1');
    state = prompted(state, s1, 'hi');
    state = receive(state, ...s1.reply(1, ['hello']));
    // s2 was being opened from the list: its history never came.
    state = reduce(state, { type: 'open_requested', sessionId: 's2' });
    // s3 is only listed.
    state = reduce(state, {
      type: 'listing',
      sessions: [{ session_id: 's3', state: 'running', last_seq: 4, updated_at: '2025-03-01T09:00:00.000Z' }],
      unreadable: [],
    });
    expect(state.panels).toEqual(['s1', 's2']);

    state = reduce(state, { type: 'connection', status: 'reconnecting' });
    const hello = welcome();
    state = receive(state, hello);
    expect(followUps(state, hello)).toEqual([
      { type: 'open', session_id: 's1', after: s1.seq },
      { type: 'open', session_id: 's2' },
    ]);
  });

  it('sends nothing after other events', () => {
    const state = withFreshSession('s1');
    expect(followUps(state, { type: 'pong' })).toEqual([]);
    expect(followUps(state, errorEvent({ code: 'session_busy', message: 'busy', session_id: 's1' }))).toEqual([]);
  });

  it('a reopen without cursor drops the claim of being synced until the history comes', () => {
    let state = withFreshSession('s1');
    state = reduce(state, { type: 'open_requested', sessionId: 's1' });
    expect(view(state, 's1')).toMatchObject({ status: 'opening', synced: false });
    expect(reopenMessage(view(state, 's1'))).toEqual({ type: 'open', session_id: 's1' });
  });
});

describe('prompts', () => {
  it("the page's prompt is pending until task_started confirms it", () => {
    const s1 = new SessionScript('s1');
    let state = reduce(withFreshSession('s1'), { type: 'prompt_sent', sessionId: 's1', content: 'run the tests' });
    expect(shown(view(state, 's1').items)).toEqual(['user(pending): run the tests']);
    state = receive(state, ...s1.start('run the tests'));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): run the tests']);
    expect(view(state, 's1').runState).toBe('running');
  });

  it('is confirmed as the server read it (the protocol trims prompts)', () => {
    const typed = '  run the tests\n';
    const parsed = parseClientMessage(JSON.stringify({ type: 'prompt', session_id: 's1', content: typed }));
    if (!parsed.ok || parsed.message.type !== 'prompt') throw new Error('the prompt did not parse');
    const s1 = new SessionScript('s1');
    let state = reduce(withFreshSession('s1'), { type: 'prompt_sent', sessionId: 's1', content: typed });
    state = receive(state, ...s1.start(parsed.message.content));
    expect(view(state, 's1').items).toHaveLength(1);
    expect(view(state, 's1').items[0]).toMatchObject({ kind: 'user', status: 'sent', text: 'run the tests' });
  });

  it('a refused prompt (session_busy) marks the pending prompt failed', () => {
    const s1 = new SessionScript('s1');
    // Another client's prompt runs: it shows as theirs.
    let state = receive(withFreshSession('s1'), ...s1.start('their prompt'));
    state = reduce(state, { type: 'prompt_sent', sessionId: 's1', content: 'mine' });
    const message = 'session "s1" is already running a task (task-1); wait for it to end, or interrupt it';
    state = receive(state, errorEvent({ code: 'session_busy', message, session_id: 's1' }));
    expect(view(state, 's1').items).toEqual([
      { kind: 'user', key: 'e1', text: 'their prompt', status: 'sent' },
      { kind: 'user', key: 'local1', text: 'mine', status: 'failed', error: message },
    ]);
    expect(view(state, 's1').error).toBeUndefined();
    expect(state.panels).toEqual(['s1']);
  });

  it('another error of an open session is shown on its panel', () => {
    const state = receive(withFreshSession('s1'), errorEvent({ code: 'not_running', message: 'session "s1" has no running task', session_id: 's1' }));
    expect(view(state, 's1').error).toBe('session "s1" has no running task');
  });

  it('an open that fails closes its panel and says why', () => {
    let state = receive(initialState(), welcome());
    state = reduce(state, { type: 'open_requested', sessionId: '../etc' });
    state = receive(state, errorEvent({ code: 'invalid_session_id', message: 'invalid session id', session_id: '../etc' }));
    expect(state.panels).toEqual([]);
    expect(state.notice).toBe('../etc: invalid session id');
  });

  it('a prompt for a session that is not open is not added', () => {
    const state = receive(initialState(), welcome());
    expect(reduce(state, { type: 'prompt_sent', sessionId: 'nope', content: 'x' })).toBe(state);
  });
});

describe('task ends', () => {
  it('a canceled task ends the stream and says why', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'long');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('text_delta', { content: 'work' }),
      s1.event('task_canceled', { reason: 'interrupted by ws-1' }),
    );
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): long', 'assistant: work', 'notice(info): Task canceled: interrupted by ws-1']);
    expect(view(state, 's1')).toMatchObject({ lastEnd: 'canceled', streamingKey: undefined });
  });

  it('a retried model call is a warning notice that ends the bubble; the answer after it starts another', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('model_retry', { attempt: 1, attempts: 3, delay_ms: 200, error: 'model API returned HTTP 503' }),
      s1.event('text_delta', { content: 'back' }),
    );
    expect(shown(view(state, 's1').items)).toEqual([
      'user(sent): x',
      'notice(warning): Model call failed, trying again in 0.2 s (attempt 2 of 3): model API returned HTTP 503',
      'assistant…: back',
    ]);
    expect(view(state, 's1').runState).toBe('running');
  });

  it('keeps the sessions the server cannot read as welcome and each listing name them, and forgets them once gone', () => {
    const broken = { session_id: 'broken', reason: 'The session file /w/.claw/sessions/broken.jsonl is corrupt at line 1' };
    let state = receive(initialState(), { ...welcome(), unreadable_sessions: [broken] });
    expect(state.unreadable).toEqual([broken]);
    expect(state.order).not.toContain('broken');
    state = reduce(state, { type: 'listing', sessions: [], unreadable: [] });
    expect(state.unreadable).toEqual([]);
    state = reduce(state, { type: 'listing', sessions: [], unreadable: [broken] });
    expect(state.unreadable).toEqual([broken]);
    expect(receive(state, welcome()).unreadable).toEqual([]);
  });

  it('a failed task is an error notice', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    state = receive(state, s1.event('task_failed', { error: 'the model is unreachable', code: 'provider_unavailable' }));
    expect(shown(view(state, 's1').items).at(-1)).toBe('notice(error): Task failed: the model is unreachable (provider_unavailable)');
    expect(view(state, 's1').lastEnd).toBe('failed');
  });
});

describe('connection status', () => {
  it('an unauthorized error makes the connection unauthorized', () => {
    const state = receive(initialState(), errorEvent({ code: 'unauthorized', message: 'unauthorized: the token is wrong' }));
    expect(state.connection).toBe('unauthorized');
    expect(state.connectionDetail).toBe('unauthorized: the token is wrong');
  });

  it('welcome connects, names the server and lists its sessions (new ones first)', () => {
    let state = withFreshSession('mine');
    state = reduce(state, { type: 'connection', status: 'reconnecting', detail: 'lost' });
    expect(state.connection).toBe('reconnecting');
    state = receive(
      state,
      welcome([
        { session_id: 'mine', state: 'running', last_seq: 12, updated_at: '2025-03-01T09:00:00.000Z' },
        { session_id: 'theirs', state: 'idle', last_seq: 3, updated_at: '2025-03-01T08:00:00.000Z' },
      ]),
    );
    expect(state).toMatchObject({ connection: 'connected', connectionDetail: undefined, server: { name: 'claw-server', version: '0.1.0' } });
    expect(state.order).toEqual(['theirs', 'mine']);
    expect(view(state, 'theirs')).toMatchObject({ status: 'closed', listing: { state: 'idle', lastSeq: 3 } });
    expect(view(state, 'mine').listing).toMatchObject({ state: 'running', lastSeq: 12 });
  });

  it('a lost connection forgets the new sessions asked for', () => {
    let state = reduce(receive(initialState(), welcome()), { type: 'new_session_requested' });
    state = reduce(state, { type: 'connection', status: 'reconnecting' });
    expect(state.pendingNew).toBe(0);
  });
});

describe('figures (WEB-4)', () => {
  it('usage gives tokens, cost and budgets left', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    state = receive(
      state,
      s1.event('usage', {
        call: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
        run: { prompt_tokens: 2000, completion_tokens: 500, total_tokens: 2500 },
        session: { prompt_tokens: 9000, completion_tokens: 3345, total_tokens: 12345 },
        cost: { call_usd: 0.002, run_usd: 0.004, session_usd: 0.0213, unpriced_calls: 0 },
        budgets_left: { session_tokens: 187655, tool_time_ms: 118400 },
      }),
    );
    const figures = view(state, 's1').figures;
    expect(figures).toEqual({
      sessionTokens: 12345,
      runTokens: 2500,
      sessionCostUsd: 0.0213,
      unpricedCalls: 0,
      budgetsLeft: { session_tokens: 187655, tool_time_ms: 118400 },
    });
    expect(formatTokens(figures)).toBe('12,345 (last task 2,500)');
    expect(formatCost(figures)).toBe('$0.02');
    expect(formatBudgets(figures)).toBe('session tokens 187,655 · tool time 118 s');
  });

  it('usage with cached prompt tokens names them with the tokens (REAL-5)', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    const usage = (cached: number | undefined) => {
      const tokens = { prompt_tokens: 15000, completion_tokens: 3204, total_tokens: 18204 };
      const withCache = cached === undefined ? tokens : { ...tokens, cached_tokens: cached };
      return s1.event('usage', {
        call: withCache,
        run: { prompt_tokens: 2000, completion_tokens: 500, total_tokens: 2500 },
        session: withCache,
        cost: { call_usd: 0.002, run_usd: 0.004, session_usd: 0.0213, unpriced_calls: 0 },
        budgets_left: {},
      });
    };
    state = receive(state, usage(12800));
    expect(view(state, 's1').figures.sessionCachedTokens).toBe(12800);
    expect(formatTokens(view(state, 's1').figures)).toBe('18,204 (12,800 cached) (last task 2,500)');
    // A server that says nothing of its cache: nothing is named.
    state = receive(state, usage(undefined));
    expect(formatTokens(view(state, 's1').figures)).toBe('18,204 (last task 2,500)');
  });

  it('time to first token runs from thinking to the first text_delta of the turn', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'x');
    const at = (ms: number) => new Date(startTime + ms).toISOString();
    state = receive(
      state,
      s1.event('thinking', { turn: 1, at: at(1000) }),
      s1.event('text_delta', { content: 'a', at: at(1850) }),
      s1.event('text_delta', { content: 'b', at: at(4000) }),
    );
    expect(view(state, 's1').figures.ttftMs).toBe(850);
    expect(formatTtft(view(state, 's1').figures)).toBe('850 ms');

    // A tool call without text, then the next turn: its own first token counts.
    state = receive(
      state,
      s1.event('text_completed', { content: 'ab', at: at(4100) }),
      s1.event('thinking', { turn: 2, at: at(5000) }),
      s1.event('tool_call', { tool_call_id: 'c', tool_name: 'read_file', arguments: '{}', at: at(5200) }),
      s1.event('tool_result', { tool_call_id: 'c', tool_name: 'read_file', result: 'x', is_error: false, at: at(5300) }),
      s1.event('thinking', { turn: 3, at: at(6000) }),
      s1.event('text_delta', { content: 'c', at: at(7250) }),
    );
    expect(view(state, 's1').figures.ttftMs).toBe(1250);
    expect(formatTtft(view(state, 's1').figures)).toBe('1.25 s');
  });
});
