// The checks of the soak, once the load and the chaos are over. Pure functions of what was
// gathered: the events each session has in its store (the truth), what each client received,
// the marker files the tools wrote, and each session as a fresh instance reads it.
//
// A violation is {check, session, detail}. The checks (LIFE-3):
//   gapless     the session's events are seq 1…N, each once (store), and every client received
//               them in order without a gap or a repeat after its cursor;
//   unique      a seq never stands for two different events: not in the store, not between what
//               a client received and what the store has;
//   paired      every tool call has exactly one result, every result a call; the history a fresh
//               instance reads has every assistant tool call answered;
//   once        no tool ran twice (a marker file has at most one line); a call reported as run
//               (bash exit code 0) ran once, one reported as never started or denied did not
//               run, and no tool ran without its start in the store's journal (SES-8);
//   ended       every task ended: completed, or failed (with a code and an error) or canceled
//               (with a reason), exactly once;
//   readable    a fresh instance opens every session: idle, no pending approval, its last seq
//               the store's last one, its history paired.
import { canonical } from './client.mjs';

const terminal = new Set(['task_completed', 'task_failed', 'task_canceled']);

/** The repair texts (SES-7/8) as the model and clients see them. */
export const neverStartedText = 'tool call never started';
export const startedText = 'tool call started, outcome unknown';

/** The call id a marked bash command writes: `echo ran >> markers/<id>`. */
export function markerIdOf(argumentsJson) {
  try {
    const command = JSON.parse(argumentsJson)?.command;
    return typeof command === 'string' ? /markers\/([A-Za-z0-9_-]+)/.exec(command)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Everything the checks need of one session.
 * @typedef {object} SessionFacts
 * @property {string} sessionId
 * @property {Map<number, object[]>} stored every event the store committed, by seq (more than
 *   one: the seq was committed twice)
 * @property {boolean} storeComplete whether `stored` is every event the session ever had (the
 *   PostgreSQL audit), or only what could be gathered (the file store: clients and the file)
 * @property {Set<string> | undefined} journalStarted call ids whose start the store recorded
 * @property {object | undefined} final the session as a fresh instance read it:
 *   {error?, state, lastSeq, pendingApprovals, history}
 */

/**
 * @param {object} input
 * @param {SessionFacts[]} input.sessions
 * @param {import('./client.mjs').SoakClient[]} input.clients
 * @param {Map<string, number>} input.markers call id → lines in its marker file
 * @param {string[]} [input.unreadable] sessions the fresh instance's welcome named unreadable
 * @returns {{violations: object[], counts: object}}
 */
export function check({ sessions, clients, markers, unreadable = [] }) {
  const violations = [];
  const fail = (checkName, session, detail) => {
    violations.push({ check: checkName, session, detail });
  };
  const counts = {
    sessions: sessions.length,
    events: 0,
    tasks: 0,
    completed: 0,
    failed: 0,
    canceled: 0,
    failedCodes: {},
    toolCalls: 0,
    toolResults: 0,
    bashCalls: 0,
    bashRan: 0,
    startedOutcomeUnknown: 0,
    neverStarted: 0,
    approvalsDenied: 0,
    markers: markers.size,
    markerLines: [...markers.values()].reduce((sum, lines) => sum + lines, 0),
    clientEventsReceived: 0,
    clientEventsChecked: 0,
    cursorExpired: 0,
    cursorBeyondEnd: 0,
    cursorTooOld: 0,
    /** Pairings not checked: the partner may be in a seq no source knows (file store). */
    unverifiable: 0,
  };
  for (const name of unreadable) fail('readable', name, 'the fresh instance\'s welcome lists it as unreadable');
  /** Every call id some session has a tool_call for. */
  const knownCalls = new Map();
  /** The marker files some session's bash calls name. */
  const markersSeen = new Set();

  for (const facts of sessions) {
    const id = facts.sessionId;
    const seqs = [...facts.stored.keys()].sort((a, b) => a - b);
    const last = seqs.at(-1) ?? 0;
    counts.events += seqs.length;
    // gapless and unique in the store.
    // One violation per session and kind, with the seqs and the first example in full.
    const twice = [];
    const differing = [];
    for (const [seq, events] of facts.stored) {
      const distinct = new Set(events.map(canonical));
      if (distinct.size > 1) differing.push({ seq, distinct: [...distinct] });
      else if (events.length > 1) twice.push(seq);
    }
    if (differing.length > 0) {
      const [first] = differing;
      const where = facts.storeComplete ? 'the store committed' : 'clients and the session file hold';
      fail('unique', id, `for seq ${ranges(differing.map((one) => one.seq))} ${where} two or more different events; seq ${first.seq}: ${first.distinct.map((text) => text.slice(0, 250)).join(' | ')}`);
    }
    if (twice.length > 0) fail('unique', id, `seq ${ranges(twice)} committed more than once`);
    if (facts.storeComplete) {
      const missing = [];
      for (let seq = 1; seq <= last; seq += 1) if (!facts.stored.has(seq)) missing.push(seq);
      if (missing.length > 0) fail('gapless', id, `the store has no event for seq ${ranges(missing)} (of 1…${last})${facts.explainMissing?.(missing) ?? ''}`);
    }
    // The events the other checks read: the store's, and where the store has none for a seq,
    // what clients received for it (so that one missing row is one violation, not a cascade).
    const fromClients = new Map();
    if (facts.storeComplete) {
      for (const client of clients) {
        if (client.sessionId !== id) continue;
        for (const [seq, text] of client.received) {
          if (facts.stored.has(seq) || fromClients.has(seq)) continue;
          fromClients.set(seq, JSON.parse(text));
        }
      }
    }
    const events = [...seqs.map((seq) => facts.stored.get(seq)[0]), ...fromClients.values()]
      .sort((a, b) => a.seq - b.seq);
    // A store that is not complete (the file store: what clients received and what the file
    // still holds) may know nothing of some seqs: events a compaction folded into a snapshot
    // before any client got them (a client then gets cursor_expired and the history, RT-4). A
    // partner (call, result, start, end) that may be in such a seq is not looked for; the
    // history a fresh instance reads is still checked whole (readable, paired).
    const knownUpTo = Math.max(last, facts.final?.lastSeq ?? 0);
    const unknownSeqs = facts.storeComplete
      ? []
      : unknownIn(new Set(events.map((event) => event.seq)), knownUpTo);
    const mayHide = (from, to) => unknownSeqs.some((seq) => seq > from && seq < to);
    const unverifiable = () => {
      counts.unverifiable += 1;
    };

    // paired: tool calls and results in the events.
    const calls = new Map();
    const results = new Map();
    for (const event of events) {
      if (event.type === 'tool_call') {
        counts.toolCalls += 1;
        if (calls.has(event.tool_call_id)) fail('paired', id, `tool call ${event.tool_call_id} announced twice (seq ${calls.get(event.tool_call_id).seq} and ${event.seq})`);
        else calls.set(event.tool_call_id, event);
        knownCalls.set(event.tool_call_id, { session: id, event });
      } else if (event.type === 'tool_result') {
        counts.toolResults += 1;
        const list = results.get(event.tool_call_id) ?? [];
        list.push(event);
        results.set(event.tool_call_id, list);
        if (calls.has(event.tool_call_id)) continue;
        if (mayHide(0, event.seq)) unverifiable();
        else fail('paired', id, `tool result of ${event.tool_call_id} (seq ${event.seq}) without a tool call before it`);
      }
    }
    for (const [callId, call] of calls) {
      const got = results.get(callId) ?? [];
      if (got.length === 0 && mayHide(call.seq, Infinity)) unverifiable();
      else if (got.length === 0) fail('paired', id, `tool call ${callId} (seq ${call.seq}, ${call.tool_name}) has no result`);
      else if (got.length > 1) fail('paired', id, `tool call ${callId} has ${got.length} results (seqs ${got.map((event) => event.seq).join(', ')})`);
      else if (got[0].task_id !== call.task_id) fail('paired', id, `tool call ${callId} of ${call.task_id} got its result in ${got[0].task_id}`);
    }

    // ended: every task_started has one terminal event of its task after it.
    const tasks = new Map();
    for (const event of events) {
      if (event.type === 'task_started') {
        counts.tasks += 1;
        if (tasks.has(event.task_id)) fail('ended', id, `task id ${event.task_id} started twice (seq ${tasks.get(event.task_id).started.seq} and ${event.seq})`);
        tasks.set(event.task_id, { started: event, ends: [] });
      } else if (terminal.has(event.type)) {
        const task = tasks.get(event.task_id);
        if (task === undefined && mayHide(0, event.seq)) unverifiable();
        else if (task === undefined) fail('ended', id, `${event.type} of ${event.task_id} (seq ${event.seq}) without its task_started`);
        else task.ends.push(event);
      }
    }
    for (const [taskId, task] of tasks) {
      if (task.ends.length === 0) {
        if (mayHide(task.started.seq, Infinity)) {
          unverifiable();
          continue;
        }
        fail('ended', id, `task ${taskId} (started at seq ${task.started.seq}, "${task.started.content.slice(0, 40)}") never ended`);
        continue;
      }
      if (task.ends.length > 1) fail('ended', id, `task ${taskId} ended ${task.ends.length} times (${task.ends.map((event) => `${event.type}@${event.seq}`).join(', ')})`);
      const end = task.ends[0];
      if (end.type === 'task_completed') counts.completed += 1;
      else if (end.type === 'task_failed') {
        counts.failed += 1;
        counts.failedCodes[end.code] = (counts.failedCodes[end.code] ?? 0) + 1;
        if (!end.code || !end.error) fail('ended', id, `task ${taskId} failed without a code or an error: ${JSON.stringify(end)}`);
      } else {
        counts.canceled += 1;
        if (!end.reason) fail('ended', id, `task ${taskId} was canceled without a reason (seq ${end.seq})`);
      }
    }

    // once: what the results say against the marker files. A marker file is named by the call
    // id in the command (`markers/<id>`); a call that waited for an answer when its task was
    // interrupted is asked again after the takeover as `<id>-resumed`, with the same command, so
    // one marker file stands for a group of calls: it must have as many lines as the group's
    // calls that ran (exit code 0: ran; never started or denied: did not; anything else: may
    // have), and never more than the group's calls whose start the journal recorded.
    const deniedCalls = new Set();
    const askedFor = new Map();
    for (const event of events) {
      if (event.type === 'approval_request') {
        // The call asked about: the latest call of the task with that tool and arguments.
        const call = [...calls.values()].filter((one) => one.task_id === event.task_id &&
          one.seq < event.seq && one.tool_name === event.tool_name &&
          one.arguments === event.arguments).at(-1);
        if (call !== undefined) askedFor.set(event.request_id, call.tool_call_id);
      }
      if (event.type === 'approval_resolved' && event.decision === 'deny') {
        counts.approvalsDenied += 1;
        const callId = askedFor.get(event.request_id);
        if (callId !== undefined) deniedCalls.add(callId);
      }
    }
    const groups = new Map();
    for (const [callId, call] of calls) {
      if (call.tool_name !== 'bash') continue;
      counts.bashCalls += 1;
      const marker = markerIdOf(call.arguments) ?? callId;
      const group = groups.get(marker) ?? [];
      group.push(call);
      groups.set(marker, group);
      const text = results.get(callId)?.[0]?.result ?? '';
      if (text.startsWith(startedText)) counts.startedOutcomeUnknown += 1;
      if (text.startsWith(neverStartedText)) counts.neverStarted += 1;
    }
    for (const [marker, group] of groups) {
      markersSeen.add(marker);
      const lines = markers.get(marker) ?? 0;
      if (lines > 0) counts.bashRan += 1;
      let ran = 0;
      let maybe = 0;
      const said = [];
      for (const call of group) {
        const text = results.get(call.tool_call_id)?.[0]?.result;
        if (text === undefined) {
          maybe += 1;
          said.push(`${call.tool_call_id}: no result`);
        } else if (/^exit code: 0\b/.test(text)) {
          ran += 1;
          said.push(`${call.tool_call_id}: exit code 0`);
        } else if (text.startsWith(neverStartedText) || deniedCalls.has(call.tool_call_id)) {
          said.push(`${call.tool_call_id}: ${deniedCalls.has(call.tool_call_id) ? 'denied' : 'never started'}`);
        } else {
          maybe += 1;
          said.push(`${call.tool_call_id}: ${text.split('\n')[0].slice(0, 80)}`);
        }
      }
      if (lines < ran || lines > ran + maybe) {
        fail('once', id, `marker ${marker} has ${lines} line(s), but the session says ${said.join('; ')}`);
      }
      if (facts.journalStarted !== undefined) {
        const started = group.filter((call) => facts.journalStarted.has(call.tool_call_id)).length;
        if (lines > started) fail('once', id, `marker ${marker} has ${lines} line(s), but the store recorded the start (SES-8 intent) of ${started} of its calls (${group.map((call) => call.tool_call_id).join(', ')})`);
      }
    }

    // readable: the session as a fresh instance reads it.
    const final = facts.final;
    if (final === undefined) fail('readable', id, 'not read by the fresh instance');
    else if (final.error !== undefined) fail('readable', id, `the fresh instance could not open it: ${final.error}`);
    else {
      if (final.state !== 'idle') fail('readable', id, `a fresh instance finds it ${final.state}, not idle`);
      if (final.pendingApprovals > 0) fail('readable', id, `a fresh instance finds ${final.pendingApprovals} pending approval(s)`);
      if (facts.storeComplete && final.lastSeq !== last) fail('readable', id, `a fresh instance says last_seq ${final.lastSeq}, the store's events end at ${last}`);
      if (!facts.storeComplete && final.lastSeq < last) fail('readable', id, `a fresh instance says last_seq ${final.lastSeq}, but clients received events up to ${last}`);
      // Its bash calls name their markers too (the events of some may be gone: file store).
      for (const message of final.history) {
        for (const call of message.tool_calls ?? []) {
          const marker = call.name === 'bash' ? markerIdOf(call.arguments) : undefined;
          if (marker !== undefined) markersSeen.add(marker);
        }
      }
      const unpaired = unpairedCalls(final.history);
      if (unpaired.length > 0) fail('readable', id, `its history has ${unpaired.length} unanswered tool call(s): ${unpaired.slice(0, 5).join(', ')}`);
      const doubled = doubleAnswered(final.history);
      if (doubled.length > 0) fail('paired', id, `its history answers tool call(s) more than once: ${doubled.slice(0, 5).join(', ')}`);
    }
  }

  // A marker of a call no session recorded (neither in its events nor in its history): a tool
  // ran that the store knows nothing of.
  for (const [callId, lines] of markers) {
    if (lines > 1) fail('once', knownCalls.get(callId)?.session ?? '?', `${callId}: its marker has ${lines} lines: the command ran ${lines} times`);
    if (!markersSeen.has(callId)) fail('once', '?', `${callId}: its marker has ${lines} line(s), but no session has a bash call that names it`);
  }

  // What each client received, against the store.
  const bySession = new Map(sessions.map((facts) => [facts.sessionId, facts]));
  for (const client of clients) {
    const facts = bySession.get(client.sessionId);
    const byKind = new Map();
    for (const anomaly of client.anomalies) {
      if (anomaly.kind === 'cursor_expired') {
        // Allowed (RT-4: refused, never a silent jump); counted by why: a cursor beyond the
        // session's end (the server took events back) or one older than what is kept.
        counts.cursorExpired += 1;
        if (/beyond the last event/.test(anomaly.detail)) counts.cursorBeyondEnd += 1;
        else counts.cursorTooOld += 1;
        continue;
      }
      byKind.set(anomaly.kind, [...(byKind.get(anomaly.kind) ?? []), anomaly]);
    }
    // One violation per client and kind: the first occurrence in full, and how many more.
    for (const [kind, list] of byKind) {
      const checkName = kind === 'seq_reused' || kind === 'rolled_back' ? 'unique' : 'gapless';
      const [first] = list;
      const more = list.length > 1 ? ` (and ${list.length - 1} more ${kind} on this client)` : '';
      fail(checkName, client.sessionId, `${client.role} ${client.name} (connection ${first.connection} to ${first.instance}, ${first.at}): ${kind}: ${first.detail}${more}`);
    }
    counts.clientEventsReceived += client.received.size;
    if (facts === undefined) continue;
    const mismatched = [];
    const unknown = [];
    for (const [seq, text] of client.received) {
      const stored = facts.stored.get(seq);
      if (stored === undefined) {
        if (facts.storeComplete) unknown.push(seq);
        continue;
      }
      counts.clientEventsChecked += 1;
      if (stored.some((event) => canonical(event) === text)) continue;
      mismatched.push({ seq, got: text, stored: canonical(stored[0]) });
    }
    if (unknown.length > 0) fail('unique', client.sessionId, `${client.role} ${client.name} received seq ${ranges(unknown)}, which no change row of the store holds`);
    for (const { seq, got, stored } of mismatched.slice(0, 2)) {
      fail('unique', client.sessionId, `${client.role} ${client.name} received seq ${seq} as ${got.slice(0, 250)}, the store has ${stored.slice(0, 250)}`);
    }
    if (mismatched.length > 2) {
      const more = ranges(mismatched.slice(2).map((one) => one.seq));
      fail('unique', client.sessionId, `${client.role} ${client.name}: seq ${more} received as other events than the store has too`);
    }
  }
  return { violations, counts };
}

/** The seqs from 1 to `last` that `known` does not hold, in order. */
function unknownIn(known, last) {
  const unknown = [];
  for (let seq = 1; seq <= last; seq += 1) if (!known.has(seq)) unknown.push(seq);
  return unknown;
}

/** Tool calls of a wire history with no tool message answering them. */
export function unpairedCalls(history) {
  const answered = new Set(history.filter((message) => message.role === 'tool').map((message) => message.tool_call_id));
  return history
    .filter((message) => message.role === 'assistant')
    .flatMap((message) => (message.tool_calls ?? []).map((call) => call.id))
    .filter((callId) => !answered.has(callId));
}

function doubleAnswered(history) {
  const seen = new Map();
  for (const message of history) {
    if (message.role === 'tool') seen.set(message.tool_call_id, (seen.get(message.tool_call_id) ?? 0) + 1);
  }
  return [...seen].filter(([, count]) => count > 1).map(([callId]) => callId);
}

/** `3-5, 9` for [3, 4, 5, 9]. */
export function ranges(numbers) {
  const sorted = [...numbers].sort((a, b) => a - b);
  const parts = [];
  let start = sorted[0];
  let previous = sorted[0];
  for (const value of sorted.slice(1)) {
    if (value === previous + 1) {
      previous = value;
      continue;
    }
    parts.push(start === previous ? `${start}` : `${start}-${previous}`);
    start = value;
    previous = value;
  }
  if (start !== undefined) parts.push(start === previous ? `${start}` : `${start}-${previous}`);
  return parts.length > 12 ? `${parts.slice(0, 12).join(', ')}, … (${sorted.length} in all)` : parts.join(', ');
}
