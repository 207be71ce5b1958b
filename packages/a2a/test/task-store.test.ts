// The store of inbound A2A tasks (TRUST-6): finished tasks answerable for the retention window,
// then forgotten by one timer under the test's control; caps on how many (and how much) finished
// tasks are remembered, the oldest forgotten first; running tasks kept while they run.
import type { Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { ManualClock } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { InboundTaskStore, type InboundTaskClock } from '../src/task-store.js';

const state = { submitted: 1, working: 2, completed: 3, failed: 4, canceled: 5 } as const;

/** A clock the test moves; the store's timers fire only when the test moves it past them. */
class FakeClock extends ManualClock implements InboundTaskClock {}

const context = (options: { user?: string; tenant?: string } = {}): ServerCallContext =>
  new ServerCallContext({
    user: { isAuthenticated: true, userName: options.user ?? 'claw-server-token' },
    ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
  });

const task = (id: string, value: number, report = ''): Task => ({
  id,
  contextId: `context-${id}`,
  status: {
    state: value,
    message: undefined,
    timestamp: new Date(1_700_000_000_000 + Number(id.replace(/\D/g, '') || 0) * 1000).toISOString(),
  },
  artifacts: report === ''
    ? []
    : [{ artifactId: 'report', name: 'report', description: '', parts: [{ content: { $case: 'text', value: report }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] }],
  history: [],
  metadata: {},
});

const hour = 60 * 60_000;

describe('InboundTaskStore', () => {
  it('answers a finished task for the retention window, then forgets it when the timer fires', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock });
    const caller = context();
    await store.save(task('t1', state.working), caller);
    await store.save(task('t1', state.completed, 'the report'), caller);
    expect(clock.pending).toEqual([{ at: clock.time + 24 * hour, ms: 24 * hour }]);
    clock.advance(24 * hour - 1);
    expect((await store.load('t1', caller))?.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'the report' });
    expect(store.size).toEqual({ running: 0, finished: 1 });
    clock.advance(1);
    // Forgotten by the timer (memory freed), not only hidden from `load`.
    expect(store.size).toEqual({ running: 0, finished: 0 });
    expect(await store.load('t1', caller)).toBeUndefined();
    expect(clock.pending).toEqual([]);
  });

  it('keeps a running task however long it runs; its retention starts when it finishes', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, retentionMs: hour });
    const caller = context();
    await store.save(task('t1', state.submitted), caller);
    await store.save(task('t1', state.working), caller);
    expect(clock.pending).toEqual([]);
    clock.advance(30 * 24 * hour);
    expect((await store.load('t1', caller))?.status?.state).toBe(state.working);
    await store.save(task('t1', state.failed), caller);
    expect(store.size).toEqual({ running: 0, finished: 1 });
    clock.advance(hour - 1);
    expect((await store.load('t1', caller))?.status?.state).toBe(state.failed);
    clock.advance(1);
    expect(await store.load('t1', caller)).toBeUndefined();
  });

  it('sets one timer, for the oldest finished task, and moves it on as tasks expire', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, retentionMs: hour });
    const caller = context();
    const start = clock.time;
    for (const id of ['t1', 't2', 't3']) {
      await store.save(task(id, state.completed), caller);
      clock.advance(10 * 60_000);
    }
    expect(clock.pending).toEqual([{ at: start + hour, ms: hour }]);
    clock.advance(start + hour - clock.time);
    expect(await store.load('t1', caller)).toBeUndefined();
    expect(clock.pending).toEqual([{ at: start + hour + 10 * 60_000, ms: 10 * 60_000 }]);
    clock.advance(10 * 60_000);
    expect(await store.load('t2', caller)).toBeUndefined();
    expect((await store.load('t3', caller))?.id).toBe('t3');
  });

  it('does not answer an expired task even before its timer fired (a clock that jumped)', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, retentionMs: hour });
    const caller = context();
    await store.save(task('t1', state.completed), caller);
    clock.time += hour;
    expect(await store.load('t1', caller)).toBeUndefined();
    expect(store.size.finished).toBe(0);
  });

  it('caps the remembered finished tasks, forgetting the oldest first', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, maxFinished: 3 });
    const caller = context();
    for (const id of ['t1', 't2', 't3', 't4', 't5']) await store.save(task(id, state.completed), caller);
    expect(store.size).toEqual({ running: 0, finished: 3 });
    const kept = await Promise.all(['t1', 't2', 't3', 't4', 't5'].map((id) => store.load(id, caller)));
    expect(kept.map((found) => found?.id)).toEqual([undefined, undefined, 't3', 't4', 't5']);
    // Running tasks do not count against the cap (the limit on inbound tasks bounds them).
    await store.save(task('t6', state.working), caller);
    expect((await store.load('t3', caller))?.id).toBe('t3');
  });

  it('caps the memory finished tasks take, forgetting the oldest first', async () => {
    const store = new InboundTaskStore({ clock: new FakeClock(), maxFinishedBytes: 5_000 });
    const caller = context();
    const big = 'x'.repeat(2_000);
    for (const id of ['t1', 't2', 't3']) await store.save(task(id, state.completed, big), caller);
    expect((await store.load('t1', caller))).toBeUndefined();
    expect((await store.load('t2', caller))?.id).toBe('t2');
    expect((await store.load('t3', caller))?.id).toBe('t3');
  });

  it('a finished task saved again counts as finished then (it is the newest), once', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, maxFinished: 2 });
    const caller = context();
    await store.save(task('t1', state.completed), caller);
    await store.save(task('t2', state.completed), caller);
    await store.save(task('t1', state.completed, 'with its artifact'), caller);
    await store.save(task('t3', state.completed), caller);
    expect((await store.load('t1', caller))?.artifacts).toHaveLength(1);
    expect(await store.load('t2', caller)).toBeUndefined();
    expect(store.size.finished).toBe(2);
  });

  it('never arms a timer past what setTimeout keeps (about 24.8 days)', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock, retentionMs: 30 * 24 * hour });
    const caller = context();
    await store.save(task('t1', state.completed), caller);
    expect(clock.pending.map((timer) => timer.ms)).toEqual([2 ** 31 - 1]);
    clock.advance(2 ** 31 - 1);
    expect((await store.load('t1', caller))?.id).toBe('t1');
    expect(clock.pending.map((timer) => timer.ms)).toEqual([30 * 24 * hour - (2 ** 31 - 1)]);
  });

  it('returns copies: what the caller changes is not stored', async () => {
    const store = new InboundTaskStore({ clock: new FakeClock() });
    const caller = context();
    const saved = task('t1', state.working);
    await store.save(saved, caller);
    saved.contextId = 'changed after save';
    const loaded = await store.load('t1', caller);
    if (loaded === undefined) throw new Error('expected the task');
    loaded.contextId = 'changed after load';
    expect((await store.load('t1', caller))?.contextId).toBe('context-t1');
  });

  it('scopes tasks by tenant and caller, as the SDK\'s InMemoryTaskStore does', async () => {
    const store = new InboundTaskStore({ clock: new FakeClock() });
    await store.save(task('t1', state.completed), context());
    expect((await store.load('t1', context()))?.id).toBe('t1');
    expect(await store.load('t1', context({ user: 'someone else' }))).toBeUndefined();
    expect(await store.load('t1', context({ tenant: 'other' }))).toBeUndefined();
  });

  it('lists tasks newest first, filtered and paged, without artifacts unless asked', async () => {
    const store = new InboundTaskStore({ clock: new FakeClock() });
    const caller = context();
    await store.save(task('t1', state.completed, 'one'), caller);
    await store.save(task('t2', state.failed), caller);
    await store.save(task('t3', state.working), caller);
    await store.save(task('t4', state.completed, 'four'), context({ user: 'someone else' }));
    const request = {
      tenant: '',
      contextId: '',
      status: 0,
      pageSize: 2,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    };
    const first = await store.list(request, caller);
    expect(first.tasks.map((found) => found.id)).toEqual(['t3', 't2']);
    expect(first.totalSize).toBe(3);
    const second = await store.list({ ...request, pageToken: first.nextPageToken, includeArtifacts: true }, caller);
    expect(second.tasks.map((found) => found.id)).toEqual(['t1']);
    expect(second.tasks[0]?.artifacts).toHaveLength(1);
    expect(second.nextPageToken).toBe('');
    const completed = await store.list({ ...request, status: state.completed }, caller);
    expect(completed.tasks.map((found) => found.id)).toEqual(['t1']);
    await expect(store.list({ ...request, pageToken: 'bm90IGEgdG9rZW4' }, caller)).rejects.toThrow(/page token/);
  });

  it('close() stops the timer and forgets every task', async () => {
    const clock = new FakeClock();
    const store = new InboundTaskStore({ clock });
    const caller = context();
    await store.save(task('t1', state.completed), caller);
    expect(clock.pending).toHaveLength(1);
    store.close();
    expect(clock.pending).toEqual([]);
    expect(await store.load('t1', caller)).toBeUndefined();
    await store.save(task('t2', state.completed), caller);
    expect(store.size).toEqual({ running: 0, finished: 0 });
    expect(clock.pending).toEqual([]);
  });

  it('refuses a negative retention and caps below 1', () => {
    expect(() => new InboundTaskStore({ retentionMs: -1 })).toThrow(RangeError);
    expect(() => new InboundTaskStore({ maxFinished: 0 })).toThrow(RangeError);
    expect(() => new InboundTaskStore({ maxFinishedBytes: 0 })).toThrow(RangeError);
  });
});
