import { describe, expect, it } from 'vitest';
import {
  MemorySessionLog,
  SessionLogError,
  SessionStore,
  recordsToStore,
  type AppendResult,
  type LogRecord,
  type SessionRelay,
  type SessionReplication,
  type SessionSnapshot,
} from '../src/index.js';
import { assistant, call, user } from './fixtures.js';

const workDir = '/shared/workspace';

const delta = (content: string) => ({ type: 'text_delta' as const, task_id: 'task-1', content });

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

/**
 * A shared log in memory as followers in other processes read it (SCALE-4): every record ever
 * appended stays in `rows` (a follower within the kept window reads them), whatever snapshot
 * comes later; a change that only ever went into a snapshot is in no row. `operations` says what
 * the writer did, in order.
 */
class FollowedLog extends MemorySessionLog implements SessionReplication {
  readonly instanceId = 'owner';
  readonly rows: LogRecord[] = [];
  readonly operations: string[] = [];
  failNextCompaction = false;
  /** The next append fails, and stores nothing. */
  failNextAppend = false;
  /** While set, writes wait for it (a write under way); `writeWaiting` says one does. */
  writeGate: Promise<void> | undefined;
  writeWaiting = false;

  override async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    await this.passGate();
    if (this.failNextAppend) {
      this.failNextAppend = false;
      this.operations.push(`failed append ${records[0]?.seq}-${records.at(-1)?.seq}`);
      throw new SessionLogError('Could not write the records: the disk is full.', {
        code: 'session_write_failed',
        location: this.location(id),
      });
    }
    const result = await super.append(id, records, options);
    this.rows.push(...records);
    this.operations.push(`append ${records[0]?.seq}-${records.at(-1)?.seq}`);
    return result;
  }

  /** The records it is given that go on from the last row become rows, as a shared log's do. */
  override async compact(
    id: string,
    snapshot: SessionSnapshot,
    options: { records?: readonly LogRecord[] } = {},
  ): Promise<void> {
    await this.passGate();
    if (this.failNextCompaction) {
      this.failNextCompaction = false;
      this.operations.push(`failed compact ${snapshot.seq}`);
      throw new SessionLogError('Could not write the snapshot: the disk is full.', {
        code: 'session_write_failed',
        location: this.location(id),
      });
    }
    await super.compact(id, snapshot);
    const lastSeq = this.rows.at(-1)?.seq ?? 0;
    const added = recordsToStore(options.records ?? [], { lastSeq, snapshotSeq: snapshot.seq });
    this.rows.push(...added);
    this.operations.push(
      `compact ${snapshot.seq}` +
      (added.length > 0 ? ` with ${added[0]?.seq}-${added.at(-1)?.seq}` : ''),
    );
  }

  private async passGate(): Promise<void> {
    if (this.writeGate === undefined) return;
    this.writeWaiting = true;
    await this.writeGate;
  }

  /** The seqs of the records a follower reads, and of the events in them. */
  followed(): { records: number[]; events: number[] } {
    return {
      records: this.rows.map((record) => record.seq),
      events: this.rows.flatMap((record) =>
        record.change.type === 'event' ? [record.change.event.seq] : []),
    };
  }

  readSince(_id: string, afterSeq: number): Promise<{ records: LogRecord[]; oldestSeq: number }> {
    const records = this.rows.filter((record) => record.seq > afterSeq);
    return Promise.resolve({ records, oldestSeq: records[0]?.seq ?? afterSeq + 1 });
  }

  watch(): () => void {
    return () => undefined;
  }

  ownerOf(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** Shared: the store writes a new session as an empty snapshot and records. */
  relayParts(): SessionRelay {
    return { replication: this };
  }
}

describe('a due compaction never takes the place of records that followers read (SCALE-4)', () => {
  it('appends the batch, then compacts: every change and every event is a record', async () => {
    const log = new FollowedLog({ compactAfterRecords: 4 });
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    for (let turn = 0; turn < 6; turn += 1) {
      // Three events in one tick: one batch, as a streamed answer's deltas are.
      const batch = [1, 2, 3].map((index) => session.appendEvent(delta(`turn ${turn}, ${index}`)));
      await Promise.all(batch.map((entry) => entry.written));
    }
    await session.append(user('last'));
    await session.flush();

    expect(log.operations.filter((operation) => operation.startsWith('compact')).length)
      .toBeGreaterThan(2);
    expect(log.followed()).toEqual({ records: range(1, 19), events: range(1, 18) });
    // The store reads the session as it was, after its snapshots.
    await store.close();
    const reopened = await new SessionStore({ log }).open('s', { workDir });
    expect(reopened.session.lastEventSeq()).toBe(18);
    expect(reopened.session.history()).toEqual([user('last')]);
  });

  it('an intent appends and puts the compaction off (PERF-1); the next write appends, then compacts', async () => {
    const log = new FollowedLog({ compactAfterRecords: 3 });
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append(user('first'));
    await session.append(assistant('', [call('c1')]));
    // Three records after the snapshot: a compaction is due.
    session.appendEvent(delta('a'));
    await session.flush();
    await session.toolStarted(call('c1'));
    const { written } = session.appendEvent(delta('b'));
    await written;
    await session.flush();

    expect(log.operations).toEqual([
      'compact 0', 'append 1-1', 'append 2-2', 'append 3-3',
      'append 4-4',
      'append 5-5', 'compact 5',
    ]);
    expect(log.followed()).toEqual({ records: range(1, 5), events: [1, 2] });
    await store.close();
  });

  it('a clear is a record too, then the small snapshot', async () => {
    const log = new FollowedLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append(user('one'), user('two'));
    // The clear and the events of the same tick: one batch.
    const cleared = session.clear();
    const { written } = session.appendEvent({ type: 'state', state: 'idle' });
    await Promise.all([cleared, written]);
    await session.append(user('fresh start'));

    expect(log.operations).toEqual(['compact 0', 'append 1-1', 'append 2-3', 'compact 3', 'append 4-4']);
    expect(log.followed()).toEqual({ records: range(1, 4), events: [1] });
    const stored = await log.load('s');
    expect(stored?.snapshot).toMatchObject({ seq: 3, eventSeq: 1, history: [] });
    await store.close();
  });

  it('changes made while the batch is appended become records before the compaction', async () => {
    const log = new FollowedLog({ compactAfterRecords: 2 });
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append(user('one'));
    await session.append(user('two'));
    // Due now. The next batch's write waits while more changes are made.
    let open: () => void = () => undefined;
    log.writeGate = new Promise((resolve) => {
      open = resolve;
    });
    const first = session.appendEvent(delta('during 1')).written;
    while (!log.writeWaiting) await new Promise((resolve) => setImmediate(resolve));
    const second = session.appendEvent(delta('during 2')).written;
    log.writeGate = undefined;
    open();
    await Promise.all([first, second]);
    await session.flush();

    expect(log.operations).toEqual([
      'compact 0', 'append 1-1', 'append 2-2', 'append 3-3', 'append 4-4', 'compact 4',
    ]);
    expect(log.followed()).toEqual({ records: range(1, 4), events: [1, 2] });
    await store.close();
  });

  it('a compaction that fails after its batch was appended fails no write: later ones append, then one compacts', async () => {
    const log = new FollowedLog({ compactAfterRecords: 2 });
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append(user('one'));
    await session.append(user('two'));
    log.failNextCompaction = true;
    // The batch is stored: the write resolves, and its event is a record.
    await session.appendEvent(delta('a')).written;
    await session.append(user('three'));
    await session.flush();

    expect(log.operations).toEqual([
      'compact 0', 'append 1-1', 'append 2-2', 'append 3-3', 'failed compact 3',
      'append 4-4', 'compact 4',
    ]);
    expect(log.followed()).toEqual({ records: range(1, 4), events: [1] });
    const stored = await log.load('s');
    expect(stored?.snapshot).toMatchObject({ seq: 4, eventSeq: 1 });
    await store.close();
  });
});

describe('after a failed append, the snapshot that puts it right carries its records (SCALE-4)', () => {
  it("a new session whose first append fails: the failed batch's changes and events become records", async () => {
    const log = new FollowedLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    log.failNextAppend = true;
    const failed = await session.appendEvent(delta('failed')).written.catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: 'session_write_failed' });
    // The next write is a whole snapshot (the failed append may have been half stored).
    await session.appendEvent(delta('next')).written;
    await session.append(user('after'));

    expect(log.operations).toEqual(['compact 0', 'failed append 1-1', 'compact 2 with 1-2', 'append 3-3']);
    expect(log.followed()).toEqual({ records: range(1, 3), events: range(1, 2) });
    const stored = await log.load('s');
    expect(stored?.snapshot).toMatchObject({ seq: 2, eventSeq: 2 });
    await store.close();
  });

  it('changes made while the failed batch was written follow its records, in order', async () => {
    const log = new FollowedLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.appendEvent(delta('stored')).written;
    let open: () => void = () => undefined;
    log.writeGate = new Promise((resolve) => {
      open = resolve;
    });
    const failing = session.appendEvent(delta('failed')).written.catch((error: unknown) => error);
    while (!log.writeWaiting) await new Promise((resolve) => setImmediate(resolve));
    const later = [session.appendEvent(delta('during 1')), session.appendEvent(delta('during 2'))];
    log.writeGate = undefined;
    log.failNextAppend = true;
    open();
    expect(await failing).toMatchObject({ code: 'session_write_failed' });
    await Promise.all(later.map((entry) => entry.written));
    // Everything is stored: a retry writes nothing.
    await session.flush();

    expect(log.operations).toEqual([
      'compact 0', 'append 1-1', 'failed append 2-2', 'compact 4 with 2-4',
    ]);
    expect(log.followed()).toEqual({ records: range(1, 4), events: range(1, 4) });
    await store.close();
  });
});

describe('recordsToStore: the records a followed log stores with a snapshot (SCALE-4)', () => {
  const records = (...seqs: number[]): LogRecord[] =>
    seqs.map((seq) => ({ seq, at: '2030-01-01T00:00:00.000Z', change: { type: 'clear' } }));
  const seqs = (kept: readonly LogRecord[]) => kept.map((record) => record.seq);

  it('keeps those that go on from the last stored one, one after the other, up to the snapshot', () => {
    // Stored already (a failed append that had committed): skipped, each once.
    expect(seqs(recordsToStore(records(3, 4, 5, 6), { lastSeq: 4, snapshotSeq: 6 }))).toEqual([5, 6]);
    // After a gap a reader could not cross: none from there on.
    expect(seqs(recordsToStore(records(5, 7, 8), { lastSeq: 4, snapshotSeq: 8 }))).toEqual([5]);
    expect(seqs(recordsToStore(records(6, 7), { lastSeq: 4, snapshotSeq: 7 }))).toEqual([]);
    // Beyond the snapshot: not its changes.
    expect(seqs(recordsToStore(records(5, 6, 7), { lastSeq: 4, snapshotSeq: 6 }))).toEqual([5, 6]);
    expect(recordsToStore([], { lastSeq: 4, snapshotSeq: 6 })).toEqual([]);
  });
});
