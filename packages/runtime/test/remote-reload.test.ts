import type { SessionEvent } from '@claw/core';
import { newSessionSnapshot, type LogRecord, type SessionSnapshot } from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import { CursorExpiredError, SubscriberLaggedError } from '../src/index.js';
import { HeldRelay, cleanUp, followSession, nextTurn, tempWorkspace } from './helpers.js';

// A process that does not own a session follows its records (SCALE-4). When the records it has
// not read were compacted away, it reads the session afresh from the snapshot. Its clients must
// then learn at once where the events they missed went (RT-4): never wait for a next event that
// an idle session may never have.

const opened: Array<{ close: () => Promise<void> }> = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((closable) => closable.close()));
  await cleanUp();
});

const at = (seq: number): string => new Date(Date.UTC(2030, 0, 1) + seq * 1000).toISOString();

/** Record `seq` holding event `eventSeq`. */
function eventRecord(seq: number, eventSeq: number): LogRecord {
  const event: SessionEvent = {
    type: 'text_delta', task_id: 't1', content: `e${eventSeq}`, session_id: 's', seq: eventSeq, at: at(seq),
  };
  return { seq, at: at(seq), change: { type: 'event', event } };
}

/** Record `seq` appending a message: a change that is no event. */
function messageRecord(seq: number): LogRecord {
  return { seq, at: at(seq), change: { type: 'append', messages: [{ role: 'user', content: `m${seq}` }] } };
}

/** The snapshot of session `s` after record `seq` and event `eventSeq`. */
function snapshotAt(workDir: string, seq: number, eventSeq: number): SessionSnapshot {
  return { ...newSessionSnapshot({ id: 's', workDir, now: at(0) }), seq, eventSeq };
}

/**
 * Session `s`, owned by another instance that stored `records` after an empty snapshot, and a
 * follower of it that read them all.
 */
async function followed(options: { keptAfterCompaction: number; records: LogRecord[] }) {
  const workDir = await tempWorkspace();
  const relay = new HeldRelay({ keptAfterCompaction: options.keptAfterCompaction });
  const owner = relay.instance('owner');
  const lease = await owner.acquire('s');
  opened.push({ close: () => lease.release() });
  await owner.compact('s', snapshotAt(workDir, 0, 0));
  await owner.append('s', options.records, { sync: true });
  const remote = await followSession(relay, workDir);
  opened.push(remote);
  return { workDir, relay, owner, remote };
}

describe('RemoteSession reading a session afresh after a compaction (RT-4, SCALE-4)', () => {
  it('ends its subscribers behind the snapshot with lagged at once, even when no event follows', async () => {
    const { workDir, relay, owner, remote } = await followed({
      keptAfterCompaction: 1,
      records: [eventRecord(1, 1), eventRecord(2, 2)],
    });
    expect(remote.events.lastSeq).toBe(2);
    const client = remote.events.events({ after: 0 });
    expect((await client.next()).value).toMatchObject({ seq: 1 });
    expect((await client.next()).value).toMatchObject({ seq: 2 });
    // Settled as soon as it ends (unhandled otherwise until the test looks).
    const waiting = client.next().catch((error: unknown) => error);

    // The follower reads nothing while the owner writes two more events and compacts: the one
    // record kept before the snapshot is not the next one the follower needs.
    relay.held = true;
    await owner.append('s', [eventRecord(3, 3), eventRecord(4, 4)], { sync: true });
    await owner.compact('s', snapshotAt(workDir, 4, 4));
    expect((await owner.readSince('s', 2)).oldestSeq).toBeGreaterThan(3);
    const reloaded = relay.nextLoad();
    relay.held = false;
    await reloaded;
    await nextTurn();

    // Nothing more is written, yet the follower is at the snapshot's last event, and the client
    // waiting after event 2 is told it missed events: it does not wait for a next one.
    expect(remote.events.lastSeq).toBe(4);
    expect(remote.view().seq).toBe(4);
    const ended = await waiting;
    expect(ended).toBeInstanceOf(SubscriberLaggedError);
    expect(ended).toMatchObject({ code: 'lagged', lastSeq: 2 });
    // Back from its cursor: refused, never a silent jump over events 3 and 4.
    expect(() => remote.events.events({ after: 2 })).toThrow(CursorExpiredError);
    expect(remote.cursorError(2)).toMatchObject({ code: 'cursor_expired', cursor: 2, oldestSeq: 5, lastSeq: 4 });

    // From the new end (a snapshot's seq), the client goes on with the next events.
    expect(remote.cursorError(4)).toBeUndefined();
    const again = remote.events.events({ after: remote.view().seq });
    await owner.append('s', [eventRecord(5, 5)], { sync: true });
    expect((await again.next()).value).toMatchObject({ seq: 5, content: 'e5' });
  });

  it('ends them with lagged when the events it loads start past theirs', async () => {
    const { workDir, relay, owner, remote } = await followed({
      keptAfterCompaction: 0,
      records: [eventRecord(1, 1), eventRecord(2, 2)],
    });
    const client = remote.events.events({ after: 2 });
    const waiting = client.next().catch((error: unknown) => error);
    relay.held = true;
    await owner.append('s', [eventRecord(3, 3)], { sync: true });
    await owner.compact('s', snapshotAt(workDir, 3, 3));
    await owner.append('s', [eventRecord(4, 4)], { sync: true });
    const reloaded = relay.nextLoad();
    relay.held = false;
    await reloaded;
    await nextTurn();

    expect(remote.events.lastSeq).toBe(4);
    const ended = await waiting;
    expect(ended).toBeInstanceOf(SubscriberLaggedError);
    expect(ended).toMatchObject({ code: 'lagged', lastSeq: 2 });
    expect(remote.cursorError(2)).toBeInstanceOf(CursorExpiredError);
    expect(remote.cursorError(3)).toBeUndefined();
  });

  it('goes on without ending anyone when the snapshot lost no event of theirs', async () => {
    const { workDir, relay, owner, remote } = await followed({
      keptAfterCompaction: 0,
      records: [eventRecord(1, 1), eventRecord(2, 2)],
    });
    const client = remote.events.events({ after: 2 });
    const waiting = client.next();
    // Only a message (no event) went into the snapshot without the follower reading it.
    relay.held = true;
    await owner.append('s', [messageRecord(3)], { sync: true });
    await owner.compact('s', snapshotAt(workDir, 3, 2));
    expect((await owner.readSince('s', 2)).oldestSeq).toBe(4);
    const reloaded = relay.nextLoad();
    relay.held = false;
    await reloaded;
    await nextTurn();

    expect(remote.events.lastSeq).toBe(2);
    expect(remote.cursorError(0)).toBeUndefined();
    await owner.append('s', [eventRecord(4, 3)], { sync: true });
    expect((await waiting).value).toMatchObject({ seq: 3, content: 'e3' });
  });
});
