// The soak's checks, checked: a clean session passes, and each defect the soak looks for, seeded
// into an otherwise clean one, is caught by the check that names it. Prints one JSON object
// ({ok, cases: [{name, expected, caught, violations}]}) and exits 1 when a case is not as expected.
//
//   node bench/soak/self-check.mjs
import { canonical } from './client.mjs';
import { check, neverStartedText, startedText } from './check.mjs';

const at = '2026-01-01T00:00:00.000Z';
const session = 'soak-c00';

/** The events of one clean task: a read, a marked bash call, an answer. */
function cleanEvents() {
  const list = [];
  const add = (body) => list.push({ ...body, session_id: session, seq: list.length + 1, at });
  add({ type: 'task_started', task_id: 'task-1', content: '[soak c00t1a1] go' });
  add({ type: 'state', state: 'running', task_id: 'task-1' });
  add({ type: 'tool_call', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-0', tool_name: 'read_file', arguments: '{"path":"file-0.txt"}' });
  add({ type: 'tool_call', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-1', tool_name: 'bash', arguments: '{"command":"echo ran >> markers/c00t1a1-s0-1"}' });
  add({ type: 'approval_request', task_id: 'task-1', request_id: 'r1', tool_name: 'bash', risk: 'dangerous', reason: 'bash', arguments: '{"command":"echo ran >> markers/c00t1a1-s0-1"}' });
  add({ type: 'approval_resolved', task_id: 'task-1', request_id: 'r1', decision: 'allow_once', by: 'c00' });
  add({ type: 'tool_result', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-0', tool_name: 'read_file', result: 'text', is_error: false });
  add({ type: 'tool_result', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-1', tool_name: 'bash', result: 'exit code: 0\n--- stdout (empty) ---', is_error: false });
  add({ type: 'task_completed', task_id: 'task-1', content: 'done' });
  add({ type: 'state', state: 'idle' });
  return list;
}

const history = [
  { role: 'user', content: '[soak c00t1a1] go' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c00t1a1-s0-0', name: 'read_file', arguments: '{"path":"file-0.txt"}' }, { id: 'c00t1a1-s0-1', name: 'bash', arguments: '{"command":"echo ran >> markers/c00t1a1-s0-1"}' }] },
  { role: 'tool', tool_call_id: 'c00t1a1-s0-0', content: 'text' },
  { role: 'tool', tool_call_id: 'c00t1a1-s0-1', content: 'exit code: 0' },
  { role: 'assistant', content: 'done' },
];

/** A clean run of the task, which each case changes a little. */
function scenario(change = () => undefined) {
  const events = cleanEvents();
  const state = {
    events,
    markers: new Map([['c00t1a1-s0-1', 1]]),
    journal: new Set(['c00t1a1-s0-0', 'c00t1a1-s0-1']),
    final: { state: 'idle', lastSeq: events.length, pendingApprovals: 0, history: structuredClone(history) },
    client: { name: 'c00', role: 'controller', sessionId: session, anomalies: [], received: undefined },
    storeComplete: true,
  };
  change(state);
  const stored = new Map();
  for (const event of state.events) {
    stored.set(event.seq, [...(stored.get(event.seq) ?? []), event]);
  }
  state.client.received ??= new Map(state.events.map((event) => [event.seq, canonical(event)]));
  return check({
    sessions: [{
      sessionId: session,
      stored,
      storeComplete: state.storeComplete,
      journalStarted: state.journal,
      final: state.final,
    }],
    clients: [state.client],
    markers: state.markers,
  });
}

const bash = (events) => events.find((event) => event.tool_call_id === 'c00t1a1-s0-1' && event.type === 'tool_result');

const cases = [
  { name: 'a clean session', expected: [], change: () => undefined },
  {
    name: 'a call asked again after a takeover (`-resumed`) that ran once',
    expected: [],
    change: (state) => {
      const result = bash(state.events);
      Object.assign(result, { result: neverStartedText, is_error: true });
      const end = state.events.findIndex((event) => event.type === 'task_completed');
      const command = '{"command":"echo ran >> markers/c00t1a1-s0-1"}';
      state.events.splice(end, 0,
        { type: 'tool_call', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-1-resumed', tool_name: 'bash', arguments: command },
        { type: 'approval_request', task_id: 'task-1', request_id: 'r2', tool_name: 'bash', risk: 'dangerous', reason: 'bash', arguments: command },
        { type: 'approval_resolved', task_id: 'task-1', request_id: 'r2', decision: 'allow_once', by: 'c00' },
        { type: 'tool_result', task_id: 'task-1', tool_call_id: 'c00t1a1-s0-1-resumed', tool_name: 'bash', result: 'exit code: 0', is_error: false, session_id: session, at });
      state.events.forEach((event, index) => {
        Object.assign(event, { session_id: session, at, seq: index + 1 });
      });
      state.final.lastSeq = state.events.length;
      state.journal.delete('c00t1a1-s0-1');
      state.journal.add('c00t1a1-s0-1-resumed');
    },
  },
  {
    name: 'a gap in the store',
    expected: ['gapless'],
    change: (state) => {
      state.events.splice(5, 1);
    },
  },
  {
    name: 'a seq committed as two events',
    expected: ['unique'],
    change: (state) => state.events.push({ ...state.events[1], state: 'awaiting_approval' }),
  },
  {
    name: 'a client given another event than the store has',
    expected: ['unique'],
    change: (state) => {
      state.client.received = new Map(state.events.map((event) => [event.seq, canonical(event)]));
      state.client.received.set(2, canonical({ ...state.events[1], state: 'idle' }));
    },
  },
  {
    name: 'a client that saw a gap',
    expected: ['gapless'],
    change: (state) => state.client.anomalies.push({ kind: 'gap', detail: 'seq 5 after 3', at, instance: 'A', connection: 1 }),
  },
  {
    name: 'a tool call without a result',
    expected: ['paired'],
    change: (state) => {
      state.events = state.events.filter((event) => !(event.type === 'tool_result' && event.tool_call_id === 'c00t1a1-s0-0'));
      state.events.forEach((event, index) => Object.assign(event, { seq: index + 1 }));
      state.final.lastSeq = state.events.length;
    },
  },
  {
    name: 'a tool call with two results',
    expected: ['paired'],
    change: (state) => {
      state.events.splice(8, 0, { ...bash(state.events), result: startedText, is_error: true });
      state.events.forEach((event, index) => Object.assign(event, { seq: index + 1 }));
      state.final.lastSeq = state.events.length;
    },
  },
  {
    name: 'a task that never ended',
    expected: ['ended'],
    change: (state) => {
      state.events = state.events.filter((event) => event.type !== 'task_completed');
      state.events.forEach((event, index) => Object.assign(event, { seq: index + 1 }));
      state.final.lastSeq = state.events.length;
    },
  },
  {
    name: 'a tool that ran twice',
    expected: ['once'],
    change: (state) => state.markers.set('c00t1a1-s0-1', 2),
  },
  {
    name: 'a tool reported as never started that ran',
    expected: ['once'],
    change: (state) => {
      Object.assign(bash(state.events), { result: neverStartedText, is_error: true });
    },
  },
  {
    name: 'a tool that ran without its start in the journal',
    expected: ['once'],
    change: (state) => state.journal.delete('c00t1a1-s0-1'),
  },
  {
    name: 'a denied tool that ran',
    expected: ['once'],
    change: (state) => {
      state.events.find((event) => event.type === 'approval_resolved').decision = 'deny';
      Object.assign(bash(state.events), { result: 'Error: permission denied', is_error: true });
    },
  },
  {
    name: 'a session a fresh instance cannot open',
    expected: ['readable'],
    change: (state) => {
      state.final = { error: 'session_corrupt: damaged' };
    },
  },
  {
    name: 'the file store: events a compaction folded away before any client got them',
    expected: [],
    change: (state) => {
      // seq 1-4 (the start, the calls) known to no source; the history says what happened.
      state.storeComplete = false;
      state.events.splice(0, 4);
    },
  },
  {
    name: 'the file store: a result without its call where every seq before it is known',
    expected: ['paired'],
    change: (state) => {
      state.storeComplete = false;
      state.events.splice(2, 1);
      state.events.forEach((event, index) => Object.assign(event, { seq: index + 1 }));
      state.final.lastSeq = state.events.length;
    },
  },
  {
    name: 'a marker no call names, in the events or the history',
    expected: ['once'],
    change: (state) => state.markers.set('c00t9a1-s0-0', 1),
  },
  {
    name: 'the complete store (PostgreSQL): the same events missing',
    expected: ['gapless'],
    change: (state) => state.events.splice(0, 4),
  },
  {
    name: 'a history with an unanswered tool call',
    expected: ['readable'],
    change: (state) => {
      state.final.history.splice(3, 1);
    },
  },
];

const results = cases.map(({ name, expected, change }) => {
  const { violations } = scenario(change);
  const fired = [...new Set(violations.map((violation) => violation.check))].sort();
  const caught = expected.length === 0
    ? violations.length === 0
    : expected.every((name) => fired.includes(name));
  return { name, expected, caught, violations };
});
const ok = results.every((result) => result.caught);
process.stdout.write(`${JSON.stringify({ ok, cases: results }, null, 2)}\n`);
process.exit(ok ? 0 : 1);
