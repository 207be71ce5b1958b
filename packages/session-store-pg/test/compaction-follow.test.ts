import type { SessionEventBody } from '@claw/core';
import {
  SessionLogError,
  SessionReplica,
  SessionStore,
  newSessionSnapshot,
  type AppendResult,
  type LogRecord,
  type PersistentSession,
  type SessionLog,
  type SessionLogLock,
  type SessionPage,
  type SessionRelay,
  type SessionSnapshot,
  type StoredLog,
} from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import type { PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, openLog, sharedCluster } from './fixtures.js';

// An instance that does not own a session follows it by reading its change rows by seq
// (SCALE-4). A compaction replaces the rows with a snapshot: whatever went into the snapshot
// without ever being a row never reaches the followers. These tests follow a session from a
// second instance through its owner's compactions.

const workDir = '/shared/workspace';

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

const delta = (content: string): SessionEventBody => ({ type: 'text_delta', task_id: 't1', content });

/**
 * What an instance that does not own the session does to follow it (the runtime's remote
 * session): a replica from a load, brought up to date from the rows read by seq. When rows it has
 * not read are gone (the relay's `oldestSeq` is beyond the next one, or a row does not follow the
 * one before), it is told (`told`) and starts again from a load. `events` are the seqs of the
 * events it got, each once.
 */
class Follower {
  readonly events: number[] = [];
  told = 0;
  private replica: SessionReplica;

  private constructor(
    private readonly log: PgSessionLog,
    private readonly id: string,
    stored: StoredLog,
  ) {
    this.replica = this.replicaOf(stored);
  }

  /**
   * Starts from a load, or with `fromStart` from the session as it was before its first change
   * (one that began following it then and has read nothing since).
   */
  static async start(
    log: PgSessionLog,
    id: string,
    options: { fromStart?: boolean } = {},
  ): Promise<Follower> {
    const snapshot = newSessionSnapshot({ id, workDir, now: new Date(0).toISOString() });
    const empty = { snapshot, records: [], needsCompaction: false };
    const stored = options.fromStart === true ? undefined : await log.load(id);
    return new Follower(log, id, stored ?? empty);
  }

  /** The seq of the last event the session it read numbered (got or not). */
  get eventSeq(): number {
    return this.replica.eventSeq;
  }

  /** Reads until there is nothing new. */
  async catchUp(): Promise<void> {
    for (;;) {
      const { records, oldestSeq } = await this.log.readSince(this.id, this.replica.seq, { limit: 7 });
      if (oldestSeq > this.replica.seq + 1) {
        await this.reload();
        continue;
      }
      if (records.length === 0) return;
      try {
        for (const record of records) {
          const event = this.replica.apply(record);
          if (event !== undefined) this.got(event.seq);
        }
      } catch {
        // A record that does not follow the one before: what is between is gone too.
        await this.reload();
      }
    }
  }

  private async reload(): Promise<void> {
    this.told += 1;
    const stored = await this.log.load(this.id);
    if (stored !== undefined) this.replica = this.replicaOf(stored);
  }

  private replicaOf(stored: StoredLog): SessionReplica {
    const replica = new SessionReplica(stored, { workDir, location: this.log.location(this.id) });
    for (const event of replica.events) this.got(event.seq);
    return replica;
  }

  private got(seq: number): void {
    if (seq > (this.events.at(-1) ?? 0)) this.events.push(seq);
  }
}

async function snapshotSeq(log: PgSessionLog, id: string): Promise<number> {
  const rows = await log.pool.query<{ seq: string }>('SELECT seq FROM claw_snapshots WHERE session_id = $1', [id]);
  return Number(rows.rows[0]?.seq ?? -1);
}

async function changeSeqs(log: PgSessionLog, id: string): Promise<number[]> {
  const rows = await log.pool.query<{ seq: string }>(
    'SELECT seq FROM claw_changes WHERE session_id = $1 ORDER BY seq',
    [id],
  );
  return rows.rows.map((row) => Number(row.seq));
}

/**
 * A PostgreSQL log whose next append, with `failNextAppend`, commits and then rejects as a write
 * whose connection dropped before the answer: the owner cannot tell it from one that failed.
 */
class CommitsThenFails implements SessionLog {
  failNextAppend = false;

  constructor(private readonly log: PgSessionLog) {}

  location(id: string): string {
    return this.log.location(id);
  }

  acquire(id: string): Promise<SessionLogLock> {
    return this.log.acquire(id);
  }

  load(id: string): Promise<StoredLog | undefined> {
    return this.log.load(id);
  }

  async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    const result = await this.log.append(id, records, options);
    if (!this.failNextAppend) return result;
    this.failNextAppend = false;
    throw new SessionLogError(`Could not write to ${this.location(id)}: Connection terminated.`, {
      code: 'session_write_failed',
      location: this.location(id),
    });
  }

  compact(id: string, snapshot: SessionSnapshot, options?: { records?: readonly LogRecord[] }): Promise<void> {
    return this.log.compact(id, snapshot, options);
  }

  remove(id: string): Promise<void> {
    return this.log.remove(id);
  }

  list(options?: { limit?: number; after?: string }): Promise<SessionPage> {
    return this.log.list(options);
  }

  relayParts(): SessionRelay {
    return this.log.relayParts();
  }
}

/** One turn of a task as the runtime stores it: events in a tick, an intent, a message. */
async function turn(session: PersistentSession, index: number): Promise<void> {
  const id = `c${index}`;
  const toolCall = { id, name: 'read_file', arguments: '{"path":"a.ts"}' };
  const streamed = [1, 2, 3].map((part) => session.appendEvent(delta(`turn ${index}, part ${part}`)));
  await Promise.all(streamed.map((entry) => entry.written));
  await session.append({ role: 'assistant', content: '', toolCalls: [toolCall] });
  await session.toolStarted(toolCall, { readOnly: true });
  const finished = session.toolFinished(id);
  const result = session.appendEvent({
    type: 'tool_result', task_id: 't1', tool_call_id: id, tool_name: 'read_file', result: 'ok', is_error: false,
  });
  await Promise.all([finished, result.written]);
  await session.append({ role: 'tool', toolCallId: id, content: 'ok' });
}

/**
 * After a failed write of session `s` (its rows end at `stored`; the failed change is the next):
 * the next write stores the whole session (the failed one may have been half stored) with the
 * failed write's change and its own as rows, the one after appends a row again, and the follower
 * gets each change once, one after the other, and every event (the turn's four, then three).
 */
async function expectEveryChangeAfterFailure(options: {
  log: PgSessionLog;
  session: PersistentSession;
  following: Follower;
  stored: number;
}): Promise<void> {
  const { log, session, following, stored } = options;
  await session.appendEvent(delta('with the snapshot')).written;
  await session.flush();
  expect(await snapshotSeq(log, 's')).toBe(stored + 2);
  await session.appendEvent(delta('a row again')).written;
  await session.flush();
  await following.catchUp();

  expect(await changeSeqs(log, 's')).toEqual(range(1, stored + 3));
  expect(following.told).toBe(0);
  expect(following.eventSeq).toBe(7);
  expect(following.events).toEqual(range(1, 7));
}

describe.skipIf(!postgresAvailable())('following a session through its compactions (SCALE-4)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('a second instance gets every event, in order and without a gap, however often the owner compacts', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a', compactAfterRecords: 5 });
    const b = await openLog(url, { instanceId: 'b' });
    const owner = new SessionStore({ log: a });
    const { session } = await owner.open('s', { workDir });
    const following = await Follower.start(b, 's');
    const snapshots = new Set<number>();
    for (let index = 0; index < 12; index += 1) {
      await turn(session, index);
      await session.flush();
      snapshots.add(await snapshotSeq(a, 's'));
      await following.catchUp();
    }
    // One that began with the session and reads only now: every row it needs is still kept.
    const late = await Follower.start(b, 's', { fromStart: true });
    await late.catchUp();

    const events = session.lastEventSeq();
    expect(events).toBe(48);
    // The owner compacted many times along the way.
    expect(snapshots.size).toBeGreaterThan(5);
    expect(following.events).toEqual(range(1, events));
    expect(following.told).toBe(0);
    expect(late.events).toEqual(range(1, events));
    expect(late.told).toBe(0);
    await owner.close();
  });

  it('after a failed write, the snapshot putting it right stores its changes as rows: a follower gets every event', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    const owner = new SessionStore({ log: a });
    const { session } = await owner.open('s', { workDir });
    const following = await Follower.start(b, 's');
    await turn(session, 0);
    await following.catchUp();
    expect(following.events).toEqual(range(1, 4));
    const stored = (await changeSeqs(a, 's')).at(-1) ?? 0;

    // The database refuses the next change rows: the write fails, nothing of it is stored.
    await a.pool.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'no space left on device'; END $$`);
    await a.pool.query('CREATE TRIGGER refuse BEFORE INSERT ON claw_changes FOR EACH ROW EXECUTE FUNCTION refuse()');
    const failed = await session.appendEvent(delta('lost')).written.catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: 'session_write_failed' });
    await a.pool.query('DROP TRIGGER refuse ON claw_changes');
    await expectEveryChangeAfterFailure({ log: a, session, following, stored });
    await owner.close();
  });

  it('a failed write that had in fact committed: its rows are not stored twice, and nothing is lost', async () => {
    const url = await freshDatabase();
    const a = await openLog(url, { instanceId: 'a' });
    const b = await openLog(url, { instanceId: 'b' });
    const log = new CommitsThenFails(a);
    const owner = new SessionStore({ log });
    const { session } = await owner.open('s', { workDir });
    const following = await Follower.start(b, 's');
    await turn(session, 0);
    await following.catchUp();
    const stored = (await changeSeqs(a, 's')).at(-1) ?? 0;

    // The append commits, then the connection drops before the answer: the owner takes the
    // write for failed, and its next write is a snapshot carrying the same changes again.
    log.failNextAppend = true;
    const failed = await session.appendEvent(delta('committed')).written.catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: 'session_write_failed' });
    expect(await changeSeqs(a, 's')).toEqual(range(1, stored + 1));
    await expectEveryChangeAfterFailure({ log: a, session, following, stored });
    await owner.close();
  });
});
