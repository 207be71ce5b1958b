import { ClawError, type SessionEvent } from '@claw/core';
import { SessionStore, leaseLostCode } from '@claw/session-store';
import { ManualClock } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  SessionEndedError,
  SessionEventLog,
  SubscriberLaggedError,
} from '../src/index.js';
import {
  FlakyLog,
  delta,
  drain,
  nextTurn,
  scriptedSource,
  storeDown,
} from './helpers.js';

/** A log over a scripted source (`scriptedSource`), its retries on a manual clock. */
function scriptedLog(
  options: Omit<ConstructorParameters<typeof SessionEventLog>[0], 'session' | 'setTimer'> = {},
) {
  const session = scriptedSource();
  const clock = new ManualClock();
  const log = new SessionEventLog({ session, setTimer: clock.setTimer, ...options });
  /** Appends an event whose write the store refuses; resolves once the log saw the refusal. */
  const appendRefused = async (content: string, error: unknown = storeDown()): Promise<void> => {
    const { seq } = log.append(delta(content));
    session.writes.get(seq)?.reject(error);
    await nextTurn();
  };
  return { session, clock, log, appendRefused };
}

/**
 * A log whose event 1 was refused and whose first retry (`flushes[0]`) is under way, and a
 * subscriber from the start, read to its end.
 */
async function retrying() {
  const scripted = scriptedLog();
  const reading = drainSeqs(scripted.log.events({ after: 0 }));
  await scripted.appendRefused('one');
  scripted.clock.advance(100);
  expect(scripted.session.flushes).toHaveLength(1);
  return { ...scripted, reading };
}

/** `drain`, as seqs. */
async function drainSeqs(
  events: AsyncIterator<SessionEvent>,
): Promise<{ seqs: number[]; ended: unknown }> {
  const { seen, ended } = await drain(events);
  return { seqs: seen.map((event) => event.seq), ended };
}

/** Waits, a turn of the event loop at a time, until `check` holds (at most 1,000 turns). */
async function turnsUntil(check: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000; turn += 1) {
    if (check()) return;
    await nextTurn();
  }
  throw new Error(`${what} did not happen`);
}

/**
 * Reads events one by one; `pending()` says whether the next one is still awaited once the work
 * of this turn of the event loop is done.
 */
function reader(events: AsyncIterator<SessionEvent>): {
  next: () => Promise<IteratorResult<SessionEvent>>;
  pending: () => Promise<boolean>;
} {
  let waiting: { promise: Promise<IteratorResult<SessionEvent>>; settled: boolean } | undefined;
  const take = (): { promise: Promise<IteratorResult<SessionEvent>>; settled: boolean } => {
    if (waiting === undefined) {
      const next = { promise: events.next(), settled: false };
      const settle = (): void => {
        next.settled = true;
      };
      next.promise.then(settle, settle);
      waiting = next;
    }
    return waiting;
  };
  return {
    next: () => {
      const { promise } = take();
      waiting = undefined;
      return promise;
    },
    pending: async () => {
      const next = take();
      await nextTurn();
      return !next.settled;
    },
  };
}

describe('SessionEventLog: an event whose write failed is delivered only once stored (RT-3, RT-4)', () => {
  it('holds it, and the events after it, until a later write stores it; then delivers them in order', async () => {
    const { session, clock, log } = scriptedLog();
    const read = reader(log.events({ after: 0 }));
    log.append(delta('one'));
    session.writes.get(1)?.resolve();
    expect((await read.next()).value).toMatchObject({ seq: 1 });

    log.append(delta('two'));
    log.append(delta('three'));
    session.writes.get(2)?.reject(storeDown());
    await nextTurn();
    // Not stored: a crash now would let the next owner number 2 again, for another event.
    expect(await read.pending()).toBe(true);
    expect(log.lastSeq).toBe(1);
    // The run goes on: numbering is not held up.
    expect(log.append(delta('four')).seq).toBe(4);
    expect(log.assignedSeq).toBe(4);

    // The next write is stored, and stores the whole session with it (event 2 included).
    session.writes.get(3)?.resolve();
    expect((await read.next()).value).toMatchObject({ seq: 2, content: 'two' });
    expect((await read.next()).value).toMatchObject({ seq: 3 });
    await nextTurn();
    expect(await read.pending()).toBe(true);
    session.writes.get(4)?.resolve();
    expect((await read.next()).value).toMatchObject({ seq: 4 });
    // Stored by a write: the retry that was due is let go.
    expect(clock.pending).toEqual([]);
    expect(session.flushes).toHaveLength(0);
    log.close();
  });

  it('stores it again through flush, with a growing delay, until that works; then delivers it', async () => {
    const told: Array<{ error: unknown; what: string }> = [];
    const { session, clock, log, appendRefused } = scriptedLog({
      onError: (error, what) => told.push({ error, what }),
    });
    const read = reader(log.events({ after: 0 }));
    await appendRefused('one');
    expect(await read.pending()).toBe(true);
    expect(clock.pending.map((timer) => timer.ms)).toEqual([100]);

    clock.advance(100);
    expect(session.flushes).toHaveLength(1);
    const stillDown = storeDown();
    session.flushes[0]?.reject(stillDown);
    await nextTurn();
    expect(await read.pending()).toBe(true);
    expect(told).toEqual([{ error: stillDown, what: expect.stringMatching(/storing the events of session "s"/) as string }]);
    // Each try waits twice as long as the one before.
    expect(clock.pending.map((timer) => timer.ms)).toEqual([200]);

    clock.advance(200);
    expect(session.flushes).toHaveLength(2);
    session.flushes[1]?.resolve();
    expect((await read.next()).value).toMatchObject({ seq: 1, content: 'one' });
    expect(clock.pending).toEqual([]);

    // A later failure starts again from the first delay.
    await appendRefused('two');
    expect(clock.pending.map((timer) => timer.ms)).toEqual([100]);
    log.close();
  });

  it('the delay stops growing at its bound', async () => {
    const { session, clock, log, appendRefused } = scriptedLog();
    await appendRefused('one');
    const delays: number[] = [];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const [timer] = clock.pending;
      if (timer === undefined) throw new Error('no retry is due');
      delays.push(timer.ms);
      clock.advance(timer.ms);
      session.flushes.at(-1)?.reject(storeDown());
      await nextTurn();
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
    log.close();
    expect(clock.pending).toEqual([]);
  });

  it('closed with a reason before it was stored: subscribers end with it, never seeing the unstored event', async () => {
    const { session, clock, log, appendRefused } = scriptedLog();
    const reading = drainSeqs(log.events({ after: 0 }));
    log.append(delta('stored'));
    session.writes.get(1)?.resolve();
    await appendRefused('never stored');

    log.close(new ClawError('the database cannot be reached', { code: 'store_unavailable' }));
    const { seqs, ended } = await reading;
    expect(seqs).toEqual([1]);
    expect(ended).toBeInstanceOf(SessionEndedError);
    expect(ended).toMatchObject({ code: 'store_unavailable', sessionId: 's' });
    // Nothing is tried any more: the session is no longer this log's to store.
    expect(clock.pending).toEqual([]);
    expect(log.lastSeq).toBe(1);
    // A later subscriber gets what was stored, then the same end.
    expect(await drainSeqs(log.events({ after: 0 }))).toEqual({ seqs: [1], ended });
  });

  it('closed without a reason while an event is not stored: subscribers still end with store_unavailable, not silently', async () => {
    const { log, appendRefused } = scriptedLog();
    const reading = drainSeqs(log.events({ after: 0 }));
    await appendRefused('never stored', new ClawError('disk full', { code: 'session_write_failed' }));
    log.close();
    const { seqs, ended } = await reading;
    expect(seqs).toEqual([]);
    expect(ended).toBeInstanceOf(SessionEndedError);
    expect(ended).toMatchObject({ code: 'store_unavailable' });
    expect((ended as Error).message).toMatch(/disk full.*Reopen/s);
    expect(log.ended).toBe(ended);
  });

  it('closed while a later write is under way: it may still store the held event, which is then delivered', async () => {
    const { session, clock, log } = scriptedLog();
    const reading = drainSeqs(log.events({ after: 0 }));
    log.append(delta('one'));
    log.append(delta('two'));
    session.writes.get(1)?.reject(storeDown());
    await nextTurn();
    log.close(new Error('the last client left'));
    expect(clock.pending).toEqual([]);
    session.writes.get(2)?.resolve();
    const { seqs, ended } = await reading;
    expect(seqs).toEqual([1, 2]);
    expect(ended).toMatchObject({ code: 'session_dropped' });
  });

  it('closed while a retry is under way: the close waits for it, and what it stored is delivered', async () => {
    const { session, log, reading } = await retrying();
    log.close(new Error('the last client left'));
    session.flushes[0]?.resolve();
    expect(await reading).toEqual({ seqs: [1], ended: expect.objectContaining({ code: 'session_dropped' }) as unknown });
  });

  it('a retry refused because the session is lost ends subscribers with lease_lost, as a write does', async () => {
    const { session, clock, log, reading } = await retrying();
    const lost = new ClawError('taken over by instance b', { code: leaseLostCode });
    session.flushes[0]?.reject(new ClawError('could not store', { code: 'session_write_failed', cause: lost }));
    expect(await reading).toEqual({ seqs: [], ended: lost });
    expect(log.ended).toBe(lost);
    expect(clock.pending).toEqual([]);
  });

  it('held events beyond the retention are let go from memory; once stored, subscribers behind them start over', async () => {
    const { session, log, appendRefused } = scriptedLog({ retention: { maxEvents: 3 } });
    const behind = log.events({ after: 0 });
    await appendRefused('one');
    for (let index = 2; index <= 5; index += 1) log.append(delta(`d${index}`));
    // Stored at last, with the events after it.
    for (let seq = 2; seq <= 5; seq += 1) session.writes.get(seq)?.resolve();
    // Those it had to let go cannot be replayed from memory: the subscriber behind them ends,
    // and comes back through a snapshot (its cursor has expired).
    await expect(behind.next()).rejects.toBeInstanceOf(SubscriberLaggedError);
    expect(log.lastSeq).toBe(5);
    expect(log.cursorError(0)).toBeInstanceOf(CursorExpiredError);
    const after = log.events({ after: 5 });
    log.append(delta('six'));
    session.writes.get(6)?.resolve();
    expect((await after.next()).value).toMatchObject({ seq: 6 });
    log.close();
  });
});

const workDir = '/virtual/workspace';

describe('SessionEventLog over a stored session whose store fails, then comes back (RT-3)', () => {
  it('never delivers an event the store does not have; delivers it once a retry stored it', async () => {
    const log = new FlakyLog();
    const store = new SessionStore({ log });
    const lease = await store.open('s', { workDir: workDir });
    const clock = new ManualClock();
    const events = new SessionEventLog({ session: lease.session, setTimer: clock.setTimer });
    const read = reader(events.events({ after: 0 }));
    events.append(delta('one'));
    expect((await read.next()).value).toMatchObject({ seq: 1 });

    log.down = true;
    events.append(delta('two'));
    await turnsUntil(() => log.refused === 1, 'the refused write');
    expect(await read.pending()).toBe(true);
    // What the next owner would read: event 2 is not there, and would be numbered again.
    expect((await log.load('s'))?.snapshot.eventSeq).toBe(1);
    expect((await log.load('s'))?.records.map((record) => record.change.type)).toEqual([]);

    // Still down at the first retry: held.
    clock.advance(100);
    await turnsUntil(() => log.refused === 2, 'the refused retry');
    expect(await read.pending()).toBe(true);

    log.down = false;
    clock.advance(200);
    expect((await read.next()).value).toMatchObject({ seq: 2, content: 'two' });
    expect((await log.load('s'))?.snapshot.eventSeq).toBe(2);
    events.append(delta('three'));
    expect((await read.next()).value).toMatchObject({ seq: 3 });
    expect(clock.pending).toEqual([]);

    events.close();
    await lease.release();
    await store.close();
    // Opened again (another process): its events go on after the ones delivered.
    const again = await new SessionStore({ log }).open('s', { workDir: workDir });
    expect(again.session.lastEventSeq()).toBe(3);
    await again.release();
  });

  it('a retry never stores again a session deleted meanwhile', async () => {
    const log = new FlakyLog();
    const store = new SessionStore({ log });
    const lease = await store.open('s', { workDir });
    const clock = new ManualClock();
    const told: unknown[] = [];
    const events = new SessionEventLog({
      session: lease.session,
      setTimer: clock.setTimer,
      onError: (error) => told.push(error),
    });
    const reading = drainSeqs(events.events({ after: 0 }));
    events.append(delta('one'));
    await turnsUntil(() => (events.lastSeq === 1), 'the first event');
    log.down = true;
    events.append(delta('two'));
    await turnsUntil(() => log.refused === 1, 'the refused write');
    await store.delete('s');
    log.down = false;
    clock.advance(100);
    await turnsUntil(() => told.length === 1 || events.lastSeq === 2, 'the retry');
    // Stored again, it would be back, under a lock this process no longer holds.
    expect(await log.load('s')).toBeUndefined();
    expect(told[0]).toMatchObject({ code: 'session_deleted' });
    events.close();
    expect(await reading).toEqual({ seqs: [1], ended: expect.objectContaining({ code: 'store_unavailable' }) as unknown });
    await store.close();
  });
});
