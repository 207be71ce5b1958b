import type { SessionEvent } from '@claw/core';
import { describe, expect, it } from 'vitest';
import {
  MemorySessionLog,
  SessionLogError,
  SessionReplica,
  SessionStore,
  type LogRecord,
  type StoredLog,
} from '../src/index.js';
import { emptySnapshot } from '../src/testing/index.js';
import { user } from './fixtures.js';

const workDir = '/work/space';
const at = '2030-01-01T00:00:01.000Z';

function eventRecord(seq: number): LogRecord {
  const event: SessionEvent = {
    type: 'text_delta', task_id: 't', content: `e${seq}`, session_id: 's', seq, at,
  };
  return { seq, at, change: { type: 'event', event } };
}

describe('SessionReplica reads a stored log as the store loads it (SCALE-4)', () => {
  it('refuses a record that does not fit as session_corrupt, naming where and which record', () => {
    const stored: StoredLog = {
      snapshot: emptySnapshot('s'),
      records: [
        { seq: 1, at, change: { type: 'append', messages: [user('hi')] } },
        // Inserts after the end of a history of one message: the log is damaged.
        {
          seq: 2,
          at,
          change: {
            type: 'repair',
            inserts: [{ index: 5, message: { role: 'tool', toolCallId: 'c', content: 'x' } }],
          },
        },
      ],
      needsCompaction: false,
    };
    let error: unknown;
    try {
      new SessionReplica(stored, { workDir, location: 'the shared session s' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SessionLogError);
    // Record 1 is the snapshot: the repair is record 3.
    expect(error).toMatchObject({ code: 'session_corrupt', location: 'the shared session s', record: 3 });
    expect((error as Error).message).toContain('repair inserts at 5, but the history has 1 messages');
  });

  it('refuses records that do not follow one another as session_corrupt', () => {
    const stored: StoredLog = {
      snapshot: emptySnapshot('s'),
      records: [eventRecord(1), { ...eventRecord(2), seq: 3 }],
      needsCompaction: false,
    };
    expect(() => new SessionReplica(stored, { workDir, location: 'here' })).toThrow(
      expect.objectContaining({ code: 'session_corrupt', record: 3 }),
    );
  });

  it('keeps the newest events of a long log, as many as a store that opens it', async () => {
    const log = new MemorySessionLog();
    await log.compact('s', emptySnapshot('s'));
    const count = 10_005;
    await log.append('s', Array.from({ length: count }, (_, index) => eventRecord(index + 1)), {
      sync: false,
    });
    const stored = await log.load('s');
    if (stored === undefined) throw new Error('not stored');

    const replica = new SessionReplica(stored, { workDir, location: 'here' });
    const store = new SessionStore({ log });
    const lease = await store.open('s', { workDir });
    const kept = lease.session.storedEvents().map((event) => event.seq);
    await lease.release();
    await store.close();

    expect(kept).toHaveLength(10_000);
    expect(replica.events.map((event) => event.seq)).toEqual(kept);
    expect(replica.events[0]?.seq).toBe(count - 10_000 + 1);
    expect(replica.eventSeq).toBe(count);
  });
});
