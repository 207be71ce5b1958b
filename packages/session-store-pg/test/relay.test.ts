import { sleep, type SessionEvent, type TaskToolProgress } from '@claw/core';
import { SessionLogError, type LogRecord, type RelayRequest } from '@claw/session-store';
import {
  recordingHandler as sharedRecordingHandler,
  type RecordingHandlerOptions,
} from '@claw/session-store/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keptAfterCompaction, progressChannel, progressEveryMs, type PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { ManualTimers, closeLogs, emptySnapshot, openLog, sharedCluster } from './fixtures.js';

const at = (seq: number) => new Date(Date.UTC(2030, 0, 1) + seq * 1000).toISOString();

function message(seq: number, content: string): LogRecord {
  const change = { type: 'append' as const, messages: [{ role: 'user' as const, content }] };
  return { seq, at: at(seq), change, encoded: JSON.stringify(change) };
}

function eventRecord(sessionId: string, seq: number, content: string): LogRecord {
  const event: SessionEvent = { type: 'text_delta', task_id: 'task-1', content, session_id: sessionId, seq, at: at(seq) };
  return { seq, at: at(seq), change: { type: 'event', event } };
}

/** Records as a reader gets them back: `encoded` is a writer's shortcut, not part of the data. */
function plain(records: readonly LogRecord[]) {
  return records.map(({ seq, at: time, change }) => ({ seq, at: time, change }));
}

function prompt(content: string, by = 'client-on-b'): RelayRequest {
  return { kind: 'prompt', content, by };
}

/**
 * How long a test waits for what happens in the background (a NOTIFY, a poll, a reply): long
 * enough for a busy machine; each wait ends as soon as its check passes.
 */
const soon = { timeout: 15_000, interval: 10 };

/** Counts the wake-ups of one `watch`. */
function wakeCounter() {
  const counter = { count: 0, wake: () => void (counter.count += 1) };
  return counter;
}

/** Waits for the LISTEN connection: its first connection wakes every waiter (onConnected). */
async function untilListening(counter: { count: number }): Promise<void> {
  await vi.waitFor(() => expect(counter.count).toBeGreaterThanOrEqual(1), soon);
  counter.count = 0;
}

async function inboxRows(log: PgSessionLog, id: string) {
  const rows = await log.pool.query<{ id: string; payload: RelayRequest; taken: boolean }>(
    'SELECT id, payload, taken_at IS NOT NULL AS taken FROM claw_inbox WHERE session_id = $1 ORDER BY id',
    [id],
  );
  return rows.rows;
}

async function listenBackends(log: PgSessionLog): Promise<number[]> {
  const rows = await log.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE application_name LIKE 'claw % listen' AND datname = current_database() ORDER BY pid`,
  );
  return rows.rows.map((row) => row.pid);
}

/** Terminates the one LISTEN connection of the database and waits until its backend is gone. */
async function killListener(log: PgSessionLog): Promise<number> {
  const [pid, ...others] = await listenBackends(log);
  expect(pid).toBeDefined();
  expect(others).toEqual([]);
  const terminated = await log.pool.query<{ done: boolean }>(
    `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
     WHERE application_name LIKE 'claw % listen' AND datname = current_database()`,
  );
  expect(terminated.rows).toEqual([{ done: true }]);
  await vi.waitFor(async () => expect(await listenBackends(log)).not.toContain(pid), soon);
  return pid as number;
}

/**
 * Records the requests a server handled: each handled for 20 ms, long enough for an overlapping
 * second one (a request claimed by a NOTIFY or a poll while another runs) to show in maxActive.
 */
function recordingHandler(options: Omit<RecordingHandlerOptions, 'holdMs'> = {}) {
  return sharedRecordingHandler({ ...options, holdMs: 20 });
}

// A test may wait for several things in turn, each up to `soon`.
describe.skipIf(!postgresAvailable())('PgSessionLog relay between instances (SCALE-4)', { timeout: 60_000 }, () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('relays a running tool\'s progress to the other instances: one report a call a second, long messages shortened, nothing else taken for one', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    const heard: TaskToolProgress[] = [];
    const ofOther: TaskToolProgress[] = [];
    const stop = b.onProgress('s', (progress) => heard.push(progress));
    b.onProgress('t', (progress) => ofOther.push(progress));
    const counter = wakeCounter();
    b.watch('s', counter.wake);
    await untilListening(counter);
    const byCall = () => [...heard].sort((x, y) => x.toolCallId.localeCompare(y.toolCallId));

    const report = { taskId: 'task-1', toolCallId: 'c1', toolName: 'bash', progress: 5000, message: 'running for 5s; last output: "PASS"' };
    a.publishProgress('s', report);
    // The same call again within a second: left out. Another call: sent.
    a.publishProgress('s', { ...report, progress: 6000 });
    const counted = { taskId: 'task-1', toolCallId: 'c2', toolName: 'mcp_fs_scan', progress: 1, total: 4 };
    a.publishProgress('s', counted);
    a.publishProgress('s', { ...report, toolCallId: 'c3', message: `${'é'.repeat(9000)}end` });
    // Not progress: a payload of another shape, or not JSON, on the same channel.
    await a.pool.query('SELECT pg_notify($1, $2)', [progressChannel, 'not json']);
    await a.pool.query('SELECT pg_notify($1, $2)', [progressChannel, JSON.stringify(['s', 'task-1', 'c9', 'bash', 'five'])]);
    await vi.waitFor(() => expect(heard).toHaveLength(3), soon);
    const [first, second, long] = byCall();
    expect(first).toEqual(report);
    expect(second).toEqual(counted);
    expect(long).toMatchObject({ toolCallId: 'c3', progress: 5000 });
    expect(long?.message?.startsWith('éé')).toBe(true);
    expect(long?.message?.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(long?.message ?? '')).toBeLessThan(8000);

    // A second later the call's next report goes out.
    await sleep(progressEveryMs + 50);
    a.publishProgress('s', { ...report, progress: 7000 });
    await vi.waitFor(() => expect(heard).toHaveLength(4), soon);
    expect(heard[3]).toEqual({ ...report, progress: 7000 });
    expect(heard.map((progress) => progress.progress)).not.toContain(6000);

    // Unsubscribed: no more for it; the other session's listener still hears its own.
    stop();
    a.publishProgress('s', { ...report, toolCallId: 'c4' });
    a.publishProgress('t', { ...report, toolCallId: 'c5' });
    await vi.waitFor(() => expect(ofOther).toHaveLength(1), soon);
    expect(ofOther[0]).toMatchObject({ toolCallId: 'c5' });
    expect(heard).toHaveLength(4);
    // Never stored.
    const stored = await a.pool.query('SELECT count(*)::int AS n FROM claw_changes');
    expect(stored.rows[0]).toEqual({ n: 0 });
  });

  it('reads records by seq, in order with their changes, at most limit of them, and nothing new as empty', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    await a.compact('s', emptySnapshot('s'));
    const records = [
      message(1, 'one'),
      eventRecord('s', 2, 'a delta'),
      { seq: 3, at: at(3), change: { type: 'usage', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 }, costUsd: 0.5 } },
      { seq: 4, at: at(4), change: { type: 'tool_started', call: { id: 'c1', name: 'bash', arguments: '{"command":"ls"}' } } },
      message(5, '日本語 ✓'),
    ] satisfies LogRecord[];
    await a.append('s', records.slice(0, 2), { sync: false });
    await a.append('s', records.slice(2), { sync: true });

    const all = await b.readSince('s', 0);
    expect(plain(all.records)).toEqual(plain(records));
    expect(all.oldestSeq).toBe(1);

    const firstTwo = await b.readSince('s', 0, { limit: 2 });
    expect(firstTwo.records.map((record) => record.seq)).toEqual([1, 2]);
    expect(firstTwo.oldestSeq).toBe(1);
    const nextTwo = await b.readSince('s', 2, { limit: 2 });
    expect(plain(nextTwo.records)).toEqual(plain(records.slice(2, 4)));
    expect(nextTwo.oldestSeq).toBe(3);

    expect(await b.readSince('s', 5)).toEqual({ records: [], oldestSeq: 6 });
    expect(await b.readSince('s', 9)).toEqual({ records: [], oldestSeq: 10 });
    expect(await b.readSince('unknown', 0)).toEqual({ records: [], oldestSeq: 1 });

    // A record appended later is read from where the reader stopped.
    await a.append('s', [message(6, 'six')], { sync: false });
    const later = await b.readSince('s', 5);
    expect(plain(later.records)).toEqual(plain([message(6, 'six')]));
    expect(later.oldestSeq).toBe(6);
  });

  it('refuses a change that is not JSON alike whether a load or a reader reads it, naming its seq', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    await a.compact('s', emptySnapshot('s'));
    await a.append('s', [1, 2, 3, 4].map((seq) => message(seq, `m${seq}`)), { sync: true });
    await a.pool.query('UPDATE claw_changes SET change = $1 WHERE session_id = $2 AND seq = 3', ['{"type": "app', 's']);

    const refusals = await Promise.all([
      b.load('s'),
      b.readSince('s', 0),
      b.readSince('s', 2),
      b.readSince('s', 2, { limit: 1 }),
    ].map((read) => read.then(() => new Error('read'), (error: unknown) => error)));
    const location = b.location('s');
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(SessionLogError);
      expect(refusal).toMatchObject({ code: 'session_corrupt', location, record: 3 });
      expect((refusal as Error).message).toBe((refusals[0] as Error).message);
    }
    expect((refusals[0] as Error).message).toContain('a change (seq 3) that is not JSON');
    // The rows before it are read.
    expect(plain((await b.readSince('s', 0, { limit: 2 })).records)).toEqual(plain([message(1, 'm1'), message(2, 'm2')]));
  });

  it('tells a reader far behind a compaction that records are gone, and serves one within the kept window', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', compactAfterRecords: 10_000 });
    const b = await openLog(url, { instanceId: 'b' });
    expect(keptAfterCompaction).toBe(1000);
    const total = keptAfterCompaction + 500;
    await a.compact('s', emptySnapshot('s'));
    const records = Array.from({ length: total }, (_, index) => message(index + 1, `m${index + 1}`));
    await a.append('s', records, { sync: false });
    await a.compact('s', { ...emptySnapshot('s'), seq: total, updatedAt: at(total) });
    const after = [message(total + 1, 'after 1'), message(total + 2, 'after 2')];
    await a.append('s', after, { sync: false });

    // The first record kept is the 1000th before the snapshot.
    const firstKept = total - keptAfterCompaction + 1;
    const fromStart = await b.readSince('s', 0, { limit: 3 });
    expect(fromStart.oldestSeq).toBe(firstKept);
    expect(fromStart.oldestSeq).toBeGreaterThan(1);
    expect(fromStart.records.map((record) => record.seq)).toEqual([firstKept, firstKept + 1, firstKept + 2]);
    const justBefore = await b.readSince('s', firstKept - 2, { limit: 1 });
    expect(justBefore.oldestSeq).toBe(firstKept);
    expect(justBefore.oldestSeq).toBeGreaterThan(firstKept - 2 + 1);

    // Within the kept window: nothing is missing.
    const within = await b.readSince('s', firstKept + 99, { limit: 5 });
    expect(within.oldestSeq).toBe(firstKept + 100);
    expect(plain(within.records)).toEqual(plain(records.slice(firstKept + 99, firstKept + 104)));
    const atTheEnd = await b.readSince('s', total - 1);
    expect(plain(atTheEnd.records)).toEqual(plain([records[total - 1] as LogRecord, ...after]));
    expect(atTheEnd.oldestSeq).toBe(total);

    // A load still starts at the snapshot: the kept records are for readers only.
    const loaded = await b.load('s');
    expect(loaded?.snapshot.seq).toBe(total);
    expect(plain(loaded?.records ?? [])).toEqual(plain(after));

    // A session whose records all went into its snapshot: nothing is kept after seq 0.
    await a.compact('t', { ...emptySnapshot('t'), seq: 5 });
    expect(await b.readSince('t', 0)).toEqual({ records: [], oldestSeq: 6 });
    expect(await b.readSince('t', 5)).toEqual({ records: [], oldestSeq: 6 });
  });

  it('wakes a watcher on another instance\'s commit without waiting for a poll, until it unsubscribes', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    // No poll can wake it during this test: every wake-up is a notification.
    const b = await openLog(url, { instanceId: 'b', pollMs: 60_000 });
    await a.compact('s', emptySnapshot('s'));
    await a.compact('other', emptySnapshot('other'));
    const onS = wakeCounter();
    const onOther = wakeCounter();
    const unwatchS = b.watch('s', onS.wake);
    const unwatchOther = b.watch('other', onOther.wake);
    await untilListening(onS);
    await vi.waitFor(() => expect(onOther.count).toBeGreaterThanOrEqual(1), soon);
    onOther.count = 0;

    await a.append('s', [message(1, 'one')], { sync: false });
    await vi.waitFor(() => expect(onS.count).toBeGreaterThanOrEqual(1), soon);
    expect((await b.readSince('s', 0)).records.map((record) => record.seq)).toEqual([1]);
    // One notification wakes the watchers of its session only (both are woken by the same one).
    expect(onOther.count).toBe(0);

    onS.count = 0;
    await a.append('other', [message(1, 'elsewhere')], { sync: false });
    await vi.waitFor(() => expect(onOther.count).toBeGreaterThanOrEqual(1), soon);
    expect(onS.count).toBe(0);

    // Unsubscribed: the next commit to "s" reaches the other watcher of "s" only.
    const stillOnS = wakeCounter();
    const unwatchStill = b.watch('s', stillOnS.wake);
    unwatchS();
    await a.append('s', [message(2, 'two')], { sync: false });
    await vi.waitFor(() => expect(stillOnS.count).toBeGreaterThanOrEqual(1), soon);
    expect(onS.count).toBe(0);
    unwatchStill();
    unwatchOther();
  });

  it('wakes a watcher when the owner gives its lease up', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b', pollMs: 60_000 });
    await a.compact('s', emptySnapshot('s'));
    const lease = await a.acquire('s');
    const watcher = wakeCounter();
    const unwatch = b.watch('s', watcher.wake);
    await untilListening(watcher);
    expect(await b.ownerOf('s')).toEqual({ instance: 'a', live: true });
    await lease.release();
    await vi.waitFor(() => expect(watcher.count).toBeGreaterThanOrEqual(1), soon);
    expect(await b.ownerOf('s')).toBeUndefined();
    unwatch();
  });

  it('reconnects a killed LISTEN connection, wakes every watcher then, and is woken by commits again', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b', pollMs: 60_000 });
    await a.compact('s', emptySnapshot('s'));
    const watcher = wakeCounter();
    const other = wakeCounter();
    const unwatch = b.watch('s', watcher.wake);
    const unwatchOther = b.watch('t', other.wake);
    await untilListening(watcher);
    other.count = 0;
    const killed = await killListener(a);

    // Nothing was committed: the reconnection alone wakes every watcher.
    await vi.waitFor(() => expect(watcher.count).toBe(1), soon);
    await vi.waitFor(() => expect(other.count).toBe(1), soon);
    const reconnected = await listenBackends(a);
    expect(reconnected).toHaveLength(1);
    expect(reconnected[0]).not.toBe(killed);

    // Woken by a commit after the reconnection.
    watcher.count = 0;
    await a.append('s', [message(1, 'after')], { sync: false });
    await vi.waitFor(() => expect(watcher.count).toBeGreaterThanOrEqual(1), soon);
    expect((await b.readSince('s', 0)).records.map((record) => record.seq)).toEqual([1]);

    // A commit while the listener is down: its notification is lost, the reader is not.
    watcher.count = 0;
    await killListener(a);
    await a.append('s', [message(2, 'while down')], { sync: false });
    await vi.waitFor(() => expect(watcher.count).toBeGreaterThanOrEqual(1), soon);
    expect((await b.readSince('s', 1)).records.map((record) => record.seq)).toEqual([2]);
    unwatch();
    unwatchOther();
  });

  it('serves the requests of another instance one at a time, oldest first, each reply to its sender', async () => {
    const url = await freshDatabase();
    // A short poll: the backstop keeps trying to drain the inbox while a request is handled.
    const a = await openLog(url, { instanceId: 'a', pollMs: 50 });
    const b = await openLog(url, { instanceId: 'b' });
    const lease = await a.acquire('s');
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const handler = recordingHandler({ gate });
    const stop = a.serve('s', handler.handle);

    const first = b.send('s', prompt('r1'), { timeoutMs: 10_000 });
    await vi.waitFor(() => expect(handler.seen).toEqual(['r1']), soon);
    // r2 then r3, each in the inbox before the next is sent: their order is known.
    const second = b.send('s', prompt('r2'), { timeoutMs: 10_000 });
    await vi.waitFor(async () => expect((await inboxRows(a, 's')).map((row) => row.payload)).toHaveLength(2), soon);
    const third = b.send('s', prompt('r3'), { timeoutMs: 10_000 });
    await vi.waitFor(async () => expect((await inboxRows(a, 's')).map((row) => row.payload)).toHaveLength(3), soon);
    // Give the notifications and a few polls of A their chance to take r2 while r1 is handled.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(handler.seen).toEqual(['r1']);
    expect((await inboxRows(a, 's')).map((row) => [(row.payload as { content: string }).content, row.taken]))
      .toEqual([['r1', true], ['r2', false], ['r3', false]]);

    openGate();
    expect(await Promise.all([first, second, third])).toEqual([
      { ok: true, taskId: 'task-r1' },
      { ok: true, taskId: 'task-r2' },
      { ok: true, taskId: 'task-r3' },
    ]);
    expect(handler.seen).toEqual(['r1', 'r2', 'r3']);
    expect(handler.state.maxActive).toBe(1);
    // Each sender took its reply away.
    await vi.waitFor(async () => expect(await inboxRows(a, 's')).toEqual([]), soon);

    // Three sent together: each handled once, never two at once, each reply to its own sender.
    const together = await Promise.all(['t1', 't2', 't3'].map((content) => b.send('s', prompt(content), { timeoutMs: 10_000 })));
    expect(together).toEqual([
      { ok: true, taskId: 'task-t1' },
      { ok: true, taskId: 'task-t2' },
      { ok: true, taskId: 'task-t3' },
    ]);
    expect(handler.seen.slice(3).sort()).toEqual(['t1', 't2', 't3']);
    expect(handler.state.maxActive).toBe(1);
    stop();
    await lease.release();
  });

  it('replies internal_error for a handler that throws, and takes nothing once stopped', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', pollMs: 50 });
    const b = await openLog(url, { instanceId: 'b' });
    const lease = await a.acquire('s');
    const handler = recordingHandler({ fail: 'boom' });
    const stop = a.serve('s', handler.handle);

    expect(await b.send('s', prompt('boom'), { timeoutMs: 10_000 }))
      .toEqual({ ok: false, code: 'internal_error', message: 'boom failed' });
    // The server goes on serving.
    expect(await b.send('s', prompt('fine'), { timeoutMs: 10_000 })).toEqual({ ok: true, taskId: 'task-fine' });

    stop();
    const late = await b.send('s', prompt('late'), { timeoutMs: 300 }).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(SessionLogError);
    expect(late).toMatchObject({ code: 'session_owner_unreachable' });
    expect(handler.seen).toEqual(['boom', 'fine']);
    expect(await inboxRows(a, 's')).toEqual([]);
    await lease.release();
  });

  it('withdraws a request nobody took in time, so that a server started later never acts on it', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', pollMs: 50 });
    const b = await openLog(url, { instanceId: 'b' });
    const lease = await a.acquire('s');

    const error = await b.send('s', prompt('too late'), { timeoutMs: 200 }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(SessionLogError);
    expect(error).toMatchObject({ code: 'session_owner_unreachable', location: b.location('s') });
    expect((error as Error).message).toMatch(/did not take a prompt within 200 ms; it was withdrawn/);
    expect(await inboxRows(a, 's')).toEqual([]);

    const handler = recordingHandler();
    const stop = a.serve('s', handler.handle);
    // Served oldest first: had the withdrawn one been left, it would have come before this one.
    expect(await b.send('s', prompt('in time'), { timeoutMs: 10_000 })).toEqual({ ok: true, taskId: 'task-in time' });
    expect(handler.seen).toEqual(['in time']);
    stop();
    await lease.release();
  });

  it('serves a request sent before the owner started serving, once it starts', async () => {
    const url = await freshDatabase();
    // No poll, and A listens already: only serve's start can take the request.
    const a = await openLog(url, { instanceId: 'a', pollMs: 60_000 });
    const b = await openLog(url, { instanceId: 'b' });
    const lease = await a.acquire('s');
    const onA = wakeCounter();
    const unwatch = a.watch('s', onA.wake);
    await untilListening(onA);
    const early = b.send('s', { kind: 'interrupt', reason: 'stop it', by: 'client-on-b' }, { timeoutMs: 10_000 });
    await vi.waitFor(async () => expect(await inboxRows(a, 's')).toHaveLength(1), soon);
    expect((await inboxRows(a, 's'))[0]).toMatchObject({
      payload: { kind: 'interrupt', reason: 'stop it', by: 'client-on-b' },
      taken: false,
    });

    const received: RelayRequest[] = [];
    const stop = a.serve('s', async (request) => {
      received.push(request);
      return { ok: true };
    });
    expect(await early).toEqual({ ok: true });
    expect(received).toEqual([{ kind: 'interrupt', reason: 'stop it', by: 'client-on-b' }]);
    stop();
    unwatch();
    await lease.release();
  });

  it('takes each request once, by the lease holder, when two instances serve the same session', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', pollMs: 50 });
    const c = await openLog(url, { instanceId: 'c', pollMs: 50 });
    const b = await openLog(url, { instanceId: 'b' });
    const lease = await a.acquire('s');
    const onA = recordingHandler();
    const onC = recordingHandler();
    const stopA = a.serve('s', onA.handle);
    const stopC = c.serve('s', onC.handle);
    const contents = Array.from({ length: 8 }, (_, index) => `r${index}`);
    const replies = await Promise.all(contents.map((content) => b.send('s', prompt(content), { timeoutMs: 10_000 })));
    expect(replies).toEqual(contents.map((content) => ({ ok: true, taskId: `task-${content}` })));
    expect(onA.seen.sort()).toEqual(contents);
    expect(onC.seen).toEqual([]);
    stopA();
    stopC();
    await lease.release();
  });

  it('fences the inbox claim by the lease epoch in SQL: a lapsed or taken-over owner claims nothing, its successor does (LIFE-2)', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    // Manual timers: A never renews, so it does not learn of the takeover on its own.
    const a = await openLog(url, { instanceId: 'a', pollMs: 50, setTimer: timers.setTimer });
    const b = await openLog(url, { instanceId: 'b', pollMs: 50, setTimer: timers.setTimer });
    const sender = await openLog(url, { instanceId: 'sender' });
    await a.acquire('s');
    await a.compact('s', emptySnapshot('s'));
    await a.pool.query('UPDATE claw_sessions SET lease_until = now() - interval \'1 ms\' WHERE id = $1', ['s']);

    // What A's claims of the inbox returned, once settled: the rows each took.
    const query = vi.spyOn(a.pool, 'query');
    const claimsOfA = async (): Promise<unknown[]> => {
      const claims: Array<Promise<{ rows: unknown[] }>> = [];
      query.mock.calls.forEach((call, index) => {
        const text = typeof call[0] === 'string' ? call[0] : (call[0] as { text?: string }).text ?? '';
        if (/UPDATE claw_inbox/.test(text) && /taken_at = now\(\)/.test(text)) {
          claims.push(query.mock.results[index]?.value as Promise<{ rows: unknown[] }>);
        }
      });
      const settled = await Promise.allSettled(claims);
      return settled.map((result) => (result.status === 'fulfilled' ? result.value.rows : 'failed'));
    };
    const expectNothingClaimed = async (atLeast: number) => {
      await vi.waitFor(
        async () => expect((await claimsOfA()).length).toBeGreaterThanOrEqual(atLeast),
        soon,
      );
      const claims = await claimsOfA();
      expect(claims).toEqual(claims.map(() => []));
      return claims.length;
    };
    const onA = recordingHandler();
    const onB = recordingHandler();
    const stopA = a.serve('s', onA.handle);
    const sent = sender.send('s', prompt('r1'), { timeoutMs: 10_000 });
    try {
      // A's lease lapsed (nobody took it over yet): its claims take nothing.
      const whileLapsed = await expectNothingClaimed(1);

      // B takes the session over; A does not know yet and keeps trying.
      const leaseB = await b.acquire('s');
      expect(leaseB).toMatchObject({ epoch: 2, tookOver: true });
      expect(a.leaseOf('s')).toMatchObject({ epoch: 1, lost: false });
      await expectNothingClaimed(whileLapsed + 2);
      expect(onA.seen).toEqual([]);
      expect((await inboxRows(a, 's')).map((row) => row.taken)).toEqual([false]);

      // The owner of the current epoch takes it.
      const stopB = b.serve('s', onB.handle);
      expect(await sent).toEqual({ ok: true, taskId: 'task-r1' });
      expect(onB.seen).toEqual(['r1']);
      expect(onA.seen).toEqual([]);
      stopB();
      await leaseB.release();
    } finally {
      stopA();
      query.mockRestore();
    }
  });

  it('lets go of replies nobody read (their sender stopped) after ten minutes, and keeps the rest', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', pollMs: 5 });
    const insert = (age: string, taken: boolean) => a.pool.query<{ id: string }>(
      `INSERT INTO claw_inbox (session_id, kind, payload, from_instance, taken_at, reply)
       VALUES ('s', 'prompt', '{}', 'gone', ${taken ? `now() - interval '${age}'` : 'NULL'}, ${taken ? '\'{"ok":true}\'' : 'NULL'})
       RETURNING id`,
    );
    const old = (await insert('11 minutes', true)).rows[0]?.id;
    const recent = (await insert('1 minute', true)).rows[0]?.id;
    const stop = a.serve('s', () => Promise.resolve({ ok: true }));
    // The sweep runs every 60 polls (here 5 ms apart).
    await vi.waitFor(async () => {
      const rows = await a.pool.query<{ id: string }>('SELECT id FROM claw_inbox ORDER BY id');
      expect(rows.rows.map((row) => row.id)).toEqual([recent]);
    }, { ...soon, interval: 50 });
    expect(old).toBeDefined();
    stop();
  });

  it('looks at the inbox once per poll for all the sessions it serves, and serves a request whose wake-up was lost', async () => {
    const url = await freshDatabase();
    // Manual timers: no lease renewal runs a query while the polls are counted.
    const a = await openLog(url, { instanceId: 'a', pollMs: 1000, setTimer: new ManualTimers().setTimer });
    const ids = ['s1', 's2', 's3', 's4', 's5'];
    // Each served by its owner: the one holding its lease.
    for (const id of ids) await a.acquire(id);
    // Listening before serving: its first connection wakes every server (a drain each).
    const listening = wakeCounter();
    const unwatch = a.watch('other', listening.wake);
    await untilListening(listening);
    const query = vi.spyOn(a.pool, 'query');
    // Until the queries issued so far have their answers and those answers issued no more (a
    // claim's answer leads to a handler and its reply): however slow the database answers.
    const settled = async () => {
      let seen = -1;
      while (seen !== query.mock.calls.length) {
        seen = query.mock.calls.length;
        await Promise.allSettled(query.mock.results.map((result) => result.value as unknown));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const handled: string[] = [];
      const stops = ids.map((id) => a.serve(id, (request) => {
        handled.push(`${id} ${request.kind}`);
        return Promise.resolve({ ok: true });
      }));
      await settled();
      const issued: number[] = [];
      for (let poll = 0; poll < 3; poll += 1) {
        const before = query.mock.calls.length;
        vi.advanceTimersByTime(1000);
        issued.push(query.mock.calls.length - before);
        await settled();
      }
      expect(issued).toEqual([1, 1, 1]);

      // A request without its NOTIFY (a lost wake-up): the next poll finds it.
      await a.pool.query(
        `INSERT INTO claw_inbox (session_id, kind, payload, from_instance)
         VALUES ('s4', 'watching', '{"kind": "watching", "by": "b"}', 'b')`,
      );
      await settled();
      expect(handled).toEqual([]);
      vi.advanceTimersByTime(1000);
      await settled();
      expect(handled).toEqual(['s4 watching']);
      for (const stop of stops) stop();
      const before = query.mock.calls.length;
      vi.advanceTimersByTime(5000);
      expect(query.mock.calls.length).toBe(before);
    } finally {
      vi.useRealTimers();
      query.mockRestore();
      unwatch();
    }
  });

  it('sends a request, replies and gives a lease up each with its wake-up in the same statement', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    await a.compact('s', emptySnapshot('s'));
    const lease = await a.acquire('s');
    const watcher = wakeCounter();
    const unwatch = b.watch('s', watcher.wake);
    await untilListening(watcher);
    const onA = vi.spyOn(a.pool, 'query');
    const onB = vi.spyOn(b.pool, 'query');
    const stop = a.serve('s', () => Promise.resolve({ ok: true }));
    expect(await b.send('s', prompt('hello'), { timeoutMs: 10_000 })).toEqual({ ok: true });
    stop();
    watcher.count = 0;
    await lease.release();
    await vi.waitFor(() => expect(watcher.count).toBeGreaterThanOrEqual(1), soon);
    unwatch();

    const notifying = (spy: typeof onA) => spy.mock.calls
      .map(([text]) => (typeof text === 'string' ? text : ''))
      .filter((text) => text.includes('pg_notify'))
      .map((text) => text.replace(/\s+/g, ' ').match(/^(WITH \w+ AS \( ?)?(\w+ \w+ \w+)/)?.[2]);
    expect(notifying(onB)).toEqual(['INSERT INTO claw_inbox']);
    expect(notifying(onA)).toEqual(['UPDATE claw_inbox SET', 'DELETE FROM claw_sessions']);
    onA.mockRestore();
    onB.mockRestore();
  });

  it('names the owner of a session, live while its lease runs and not once it lapsed', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    // Manual timers: no renewal extends the lease this test lets lapse.
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer });
    const b = await openLog(url, { instanceId: 'b' });
    expect(await b.ownerOf('s')).toBeUndefined();
    await a.compact('s', emptySnapshot('s'));
    expect(await b.ownerOf('s')).toBeUndefined();

    const lease = await a.acquire('s');
    expect(await b.ownerOf('s')).toEqual({ instance: 'a', live: true });
    expect(await a.ownerOf('s')).toEqual({ instance: 'a', live: true });
    await a.pool.query('UPDATE claw_sessions SET lease_until = now() - interval \'1 ms\' WHERE id = $1', ['s']);
    expect(await b.ownerOf('s')).toEqual({ instance: 'a', live: false });

    // Taken over: the new owner is named.
    const taken = await b.acquire('s');
    expect(await a.ownerOf('s')).toEqual({ instance: 'b', live: true });
    await taken.release();
    expect(await a.ownerOf('s')).toBeUndefined();
    await lease.release();
  });
});
