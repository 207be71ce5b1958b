import type { Compaction, CostTotals, Message, Usage } from '@claw/core';
import { SessionLogError, type SessionLockHolder } from './errors.js';
import type { SessionRelay } from './session-relay.js';
import type { OpenTask, SessionChange, StoredToolResult } from './session-state.js';

/** Everything a session keeps, as one value (SES-1): what a snapshot stores. */
export interface SessionSnapshot {
  id: string;
  /** The workspace the session last worked in (a reload takes the caller's, SES-5). */
  workDir: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: the time of the last change. */
  updatedAt: string;
  /** The number of the last change the snapshot includes (0 for a session with none). */
  seq: number;
  /** The seq of the last event the session handed out (RT-3); 0 before the first. */
  eventSeq: number;
  history: Message[];
  usage: Usage;
  cost: CostTotals;
  /**
   * The tool journal (SES-8): whether it was ever used, and the calls without an Observation,
   * each with its stored result when one was (absent in snapshots from before it).
   */
  journal: {
    active: boolean;
    calls: Array<{ id: string; started: boolean; finished: boolean; result?: StoredToolResult }>;
  };
  /** The task running when the snapshot was taken, as its events say; absent when none was. */
  openTask?: OpenTask;
  /** The latest compaction of the conversation (CMP-4); absent when there is none. */
  compaction?: Compaction;
}

/** One change of a session with its number and time: what one log record holds. */
export interface LogRecord {
  /** 1, 2, 3… per session, each the previous plus one; continues after a snapshot's `seq`. */
  seq: number;
  /** ISO 8601. */
  at: string;
  change: SessionChange;
  /**
   * `change` as JSON, made when the change was made. A backend may store this instead of
   * encoding `change` again (the two always agree).
   */
  encoded?: string;
}

/** A session as a log keeps it: the latest snapshot and the records after it. */
export interface StoredLog {
  snapshot: SessionSnapshot;
  /** In order, each `seq` one more than the one before, the first one more than the snapshot's. */
  records: LogRecord[];
  /**
   * True when the log dropped damage it can repair (a torn last record after a crash): the next
   * write must be a whole snapshot (`compact`), never an append after the damage.
   */
  needsCompaction: boolean;
}

/** What `SessionLog.append` tells the writer. */
export interface AppendResult {
  /** The records after the snapshot now outweigh it: the next write should be `compact`. */
  compactionDue: boolean;
}

/** One session as `list` shows it. */
export interface SessionSummary {
  id: string;
  /** The workspace it last worked in. */
  workDir: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: the time of the last change. */
  updatedAt: string;
  messageCount: number;
  usage: Usage;
  cost: CostTotals;
  /** The seq of its last event (0 before the first). */
  lastEventSeq: number;
  /** The first line of its first prompt, cut to 80 characters (`sessionTitle`); absent: none. */
  title?: string;
}

/** A stored session that `SessionLog.list` could not read, and left out of its `sessions`. */
export interface UnreadableSession {
  id: string;
  /** Where it is stored (`SessionLog.location`). */
  location: string;
  /** Why, for people: what is wrong and what to do (opening it would fail the same way). */
  reason: string;
}

/** One page of `SessionLog.list`. */
export interface SessionPage {
  /** In the order of their ids. */
  sessions: SessionSummary[];
  /**
   * The stored sessions in this page's range of ids that could not be read (in the order of their
   * ids), so that a listing can say so instead of hiding them. Absent when there are none, and
   * from logs that cannot tell.
   */
  unreadable?: UnreadableSession[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** A session taken by one owner (RT-5). */
export interface SessionLogLock {
  readonly holder: SessionLockHolder;
  /** Gives the session up; idempotent. A lock another owner has taken over is left alone. */
  release(): Promise<void>;
}

/**
 * Where sessions are stored (RT-6): an append-only log of changes per session, with snapshots.
 * Sessions (repair, the tool journal, usage, events) are built once on top of it, by
 * `SessionStore`; file, memory (and other) backends implement it and pass the conformance suite
 * in `@claw/session-store/testing`.
 *
 * Every method may reject with a `SessionLogError` (storage-neutral: `location`, not a file).
 */
export interface SessionLog {
  /** Where the session is (or would be) stored, for messages: a path, a database row. */
  location(id: string): string;
  /**
   * Takes the session for this owner until `release` (RT-5). Held by another live owner: rejects
   * with `SessionLockedError` naming the holder, having written nothing. A lock whose owner is gone
   * (its process died) is taken over.
   */
  acquire(id: string): Promise<SessionLogLock>;
  /** The session's snapshot and the records after it; `undefined` when it was never stored. */
  load(id: string): Promise<StoredLog | undefined>;
  /**
   * Appends records, in order, as one write (`sync`: flushed to the disk hardware before it
   * resolves). The first record's `seq` must be one more than the last one stored, and each
   * next one more again: otherwise rejects with `session_seq_conflict` and writes nothing. A
   * session with no snapshot yet cannot be appended to (`session_missing`).
   *
   * `onWritten`, when given, is called once the records are written (a crash of this process can
   * no longer take them back) and before they are flushed; a log that cannot tell the two apart
   * need not call it.
   *
   * `lock`, when given, is the lock (from `acquire`) the write is made under. A log with leases
   * refuses the write, writing nothing, when that lock is no longer the one it holds for the
   * session (lost, released, or replaced by a later `acquire` in this process), so that a writer
   * left over from an earlier ownership never writes under a later one (as `compact` does).
   */
  append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void; lock?: SessionLogLock },
  ): Promise<AppendResult>;
  /**
   * Replaces the session's stored log with one snapshot, atomically (a crash leaves the old log
   * or the new snapshot); creates the session when it has none. Durable when it resolves.
   *
   * `records` are changes the snapshot holds that may not be stored as records yet, in order:
   * those of a failed append (which may or may not have been stored) and those made since. A log
   * that other processes follow record by record (`relayParts`, SCALE-4) stores, in the same
   * write as the snapshot, those that go on from the last record it has, each once (a failed
   * append may in fact have stored them), so that its followers still read them and their
   * events. A log nobody follows that way (file, memory) ignores them: its snapshot holds them.
   */
  compact(
    id: string,
    snapshot: SessionSnapshot,
    options?: { records?: readonly LogRecord[]; lock?: SessionLogLock },
  ): Promise<void>;
  /**
   * `compact`, done beside the appends that come while it works (optional): they go on into the
   * current log, and are carried over after the snapshot, which then takes the log's place. A log
   * that has it does not hold back the writes queued behind a compaction for as long as its
   * flushes take (a session's events wait for their write, never for a flush: CH-5). Only ever
   * asked for a snapshot of everything already appended (`snapshot.seq` is the last record's).
   * Like `compact`: atomic, and durable when it resolves; a failed one leaves the log as it was.
   */
  compactBeside?(
    id: string,
    snapshot: SessionSnapshot,
    options?: { lock?: SessionLogLock },
  ): Promise<void>;
  /** Removes the session; nothing happens when there is none. */
  remove(id: string): Promise<void>;
  /**
   * Stored sessions in the order of their ids, a page at a time (default 100), starting after
   * the id `after`. Sessions that cannot be read are left out of `sessions` and named in
   * `unreadable`; `limit` bounds both together.
   */
  list(options?: { limit?: number; after?: string }): Promise<SessionPage>;
  /**
   * The relay parts of a log several processes share (SCALE-4); absent from a log one process
   * keeps to itself (file, memory). A store over a log that has it writes a new session's first
   * changes as records after an empty snapshot, so that the processes following it read them.
   */
  relayParts?(): SessionRelay;
}

/**
 * What every `SessionLog.append` checks first: the records go on from `lastSeq`, each one more
 * than the one before.
 *
 * @throws SessionLogError `session_seq_conflict` naming the first record that does not (nothing
 *   may then be written).
 */
export function checkAppendSeqs(
  records: readonly LogRecord[],
  lastSeq: number,
  location: string,
): void {
  let expected = lastSeq + 1;
  for (const record of records) {
    if (record.seq !== expected) {
      throw new SessionLogError(
        `Cannot append change ${record.seq} to ${location}: the next change there is ` +
        `${expected}. Another writer changed it; reload the session.`,
        { code: 'session_seq_conflict', location },
      );
    }
    expected += 1;
  }
}

/**
 * For a log that others follow record by record (`relayParts`): the records handed to
 * `compact` that it stores along with the snapshot, those that go on from `lastSeq` (the last
 * record it has), one after the other, up to the snapshot's `snapshotSeq`. The others are stored
 * already, or would follow a gap that a reader could not cross anyway (the snapshot holds them).
 */
export function recordsToStore(
  records: readonly LogRecord[],
  options: { lastSeq: number; snapshotSeq: number },
): LogRecord[] {
  const kept: LogRecord[] = [];
  for (const record of records) {
    if (record.seq <= options.lastSeq) continue;
    if (record.seq > options.snapshotSeq || record.seq !== options.lastSeq + kept.length + 1) break;
    kept.push(record);
  }
  return kept;
}
