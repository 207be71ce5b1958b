import { ClawError, eventJson, type SessionEvent } from '@claw/core';
import { leaseLostCode } from '@claw/session-store';
import { describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  SessionEventLog,
  SubscriberLaggedError,
} from '../src/index.js';
import { delta, heldEventSource, nextTurn } from './helpers.js';

const event = (seq: number): SessionEvent => ({
  type: 'text_delta', task_id: 't', content: `e${seq}`, session_id: 's', seq, at: new Date(0).toISOString(),
});

describe('SessionEventLog and a session this process may lose (SCALE-2)', () => {
  it('never delivers what it numbered after the lease was lost; subscribers end with lease_lost', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const got of log.events({ after: 0 })) seen.push(got.seq);
    })();
    log.append(delta('stored'));
    session.settle();
    log.append(delta('lost'));
    log.append(delta('lost too'));
    const lost = new ClawError('taken over', { code: leaseLostCode });
    session.settle(new ClawError('could not store', { code: 'session_write_failed', cause: lost }));
    await expect(reading).rejects.toBe(lost);
    expect(seen).toEqual([1]);
  });

  it('a write that fails for another reason holds the event until a later write stores it (D1: a crash could take it back)', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const events = log.events({ after: 0 });
    log.append(delta('one'));
    session.settle(new ClawError('disk full', { code: 'session_write_failed' }));
    await nextTurn();
    expect(log.lastSeq).toBe(0);
    // Writes are stored in order: the next one that succeeds stored the first too.
    log.append(delta('two'));
    session.settle();
    expect((await events.next()).value).toMatchObject({ seq: 1, content: 'one' });
    expect((await events.next()).value).toMatchObject({ seq: 2, content: 'two' });
  });
});

describe('SessionEventLog.ingest: events another process numbered (SCALE-4)', () => {
  it('delivers them in order, ignores ones it has, and after a gap ends subscribers behind it with lagged', async () => {
    const log = new SessionEventLog({
      session: { id: 's', lastEventSeq: () => 0, storedEvents: () => [], appendEvent: () => { throw new Error('remote'); } },
    });
    const early = log.events({ after: 0 });
    log.ingest(event(1));
    log.ingest(event(2));
    log.ingest(event(1));
    expect((await early.next()).value).toMatchObject({ seq: 1 });
    expect(log.lastSeq).toBe(2);
    log.ingest(event(5));
    // Event 2 is no longer kept: the subscriber at 1 cannot go on from where it was.
    await expect(early.next()).rejects.toBeInstanceOf(SubscriberLaggedError);
    expect(log.lastSeq).toBe(5);
    expect(log.cursorError(1)).toMatchObject({ code: 'cursor_expired', oldestSeq: 5 });
    const later = log.events({ after: 4 });
    expect((await later.next()).value).toMatchObject({ seq: 5 });
  });
});

describe('SessionEventLog retention and batches of writes (RT-3, RT-4)', () => {
  it('a batch larger than the retention does not cost a subscriber that keeps up its events', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session, retention: { maxEvents: 3 } });
    const events = log.events({ after: 0 });
    for (let index = 1; index <= 10; index += 1) log.append(delta(`d${index}`));
    // The ten are stored at once (one write): the subscriber has read none of them yet.
    session.settle();
    const seen: number[] = [];
    for (let index = 0; index < 10; index += 1) seen.push(((await events.next()).value as SessionEvent).seq);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Once read, only the retention is kept for replay.
    expect(log.oldestSeq).toBe(8);
    expect(() => log.events({ after: 6 })).toThrow(CursorExpiredError);
  });

  it('a subscriber waiting for its next event is not lagged by a batch larger than its bound (LIFE-2b)', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session, subscriberBound: { maxEvents: 5 } });
    const events = log.events({ after: 0 });
    // It waits: the ten come in one write, each settling in a microtask of its own before it runs.
    const first = events.next();
    for (let index = 1; index <= 10; index += 1) log.append(delta(`d${index}`));
    session.settle();
    const seen = [((await first).value as SessionEvent).seq];
    await nextTurn();
    for (let index = 1; index < 10; index += 1) seen.push(((await events.next()).value as SessionEvent).seq);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a subscriber past its own bound does not hold events beyond the retention', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({
      session,
      retention: { maxEvents: 3 },
      subscriberBound: { maxEvents: 5 },
    });
    const stuck = log.events({ after: 0 });
    for (let index = 1; index <= 10; index += 1) log.append(delta(`d${index}`));
    session.settle();
    // The bounds are checked once the turn's writes settled.
    await nextTurn();
    await expect(stuck.next()).rejects.toBeInstanceOf(SubscriberLaggedError);
    log.append(delta('next'));
    session.settle();
    await Promise.resolve();
    expect(log.oldestSeq).toBe(9);
  });
});

describe('SessionEventLog and the JSON of the events it keeps', () => {
  // `eventJson` gives the kept text while it is kept; a changed event shows when it was let go.
  const textOf = (event: SessionEvent): unknown => (JSON.parse(eventJson(event)) as { content: unknown }).content;
  const change = (event: SessionEvent): void => {
    (event as { content: string }).content = 'changed';
  };

  it('keeps an event\'s JSON until every subscriber took the event, then lets it go', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const first = log.events({ after: 0 });
    const second = log.events({ after: 0 });
    const event = log.append(delta('one'));
    session.settle();
    expect((await first.next()).value).toBe(event);
    expect((await second.next()).value).toBe(event);
    expect(textOf(event)).toBe('one');
    change(event);
    log.append(delta('two'));
    session.settle();
    // The first asked for the next event: it took the first one. The second has not yet.
    expect((await first.next()).value).toMatchObject({ seq: 2 });
    expect(textOf(event)).toBe('one');
    expect((await second.next()).value).toMatchObject({ seq: 2 });
    expect(textOf(event)).toBe('changed');
  });

  it('lets it go at once when nobody follows the session; a replay encodes it again', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const event = log.append(delta('alone'));
    expect(textOf(event)).toBe('alone');
    change(event);
    session.settle();
    await nextTurn();
    expect(textOf(event)).toBe('changed');
    const replay = log.events({ after: 0 });
    expect((await replay.next()).value).toBe(event);
  });
});
