import { SerialQueue } from '@claw/core';
import { SessionLogError, SessionStoreError } from './errors.js';
import type { LogRecord, SessionLog, SessionLogLock, SessionSnapshot } from './session-log.js';
import { snapshotOf, type SessionState } from './session-state.js';

/** Where a session's changes go (`StoredSession` hands every change to one). */
export interface SessionWriter {
  /**
   * Takes the record of a change already applied in memory. Resolves once it is stored: for
   * `sync`, flushed to the disk hardware; otherwise once written (which can be before the rest of
   * its batch is flushed). Rejects with a `SessionLogError` when the write failed.
   */
  write(record: LogRecord, options: WriteOptions): Promise<void>;
  /** Resolves once everything in memory is stored, writing it again after a failed write. */
  flush(): Promise<void>;
  /** Waits for queued writes, then removes the session's storage. */
  remove(): Promise<void>;
  /**
   * The session's lock was given up: every later write, flush and removal rejects with `error`,
   * and writes queued behind the one under way store nothing.
   */
  release?(error: Error): void;
}

/** How a change is stored, and what its `write` waits for. */
export interface WriteOptions {
  /** Flush its batch to the disk hardware. */
  sync: boolean;
  /**
   * With `sync`: resolve once the batch is written, while its flush goes on. The writes after it
   * still wait for the flush, and a failed flush makes the next write a whole snapshot, as a
   * failed write does. Default false.
   */
  resolveWhenWritten?: boolean;
}

/** Flushed writes in a row that may append although a compaction is due. */
const maxCompactionsPostponed = 8;

/** What a write started that goes on after it: a compaction beside the later appends. */
interface Started {
  beside?: Promise<void>;
}

/** Waits for the compaction a write started beside the later appends (never rejects). */
const besideDone = (started: Started): Promise<void> | undefined => started.beside;

/** The write of one batch, once asked for (see `LogWriter.write`). */
interface Scheduled {
  /** Settles once the batch is stored (flushed if any change asked for it). */
  stored: Promise<void>;
  /** Settles once the batch is written (or `stored`, whichever comes first). */
  written: Promise<void>;
  /** Start the write once this tick's work is done instead of after the event loop's turn. */
  expedite(): void;
}

interface Pending {
  record: LogRecord;
  sync: boolean;
}

export interface LogWriterOptions {
  log: SessionLog;
  id: string;
  /** The session's current state in memory, for snapshots. */
  state: () => SessionState;
  /** The last change already stored. */
  persistedSeq: number;
  /** The next write must be a whole snapshot: there is none yet, or the log dropped damage. */
  needsSnapshot: boolean;
  /** Flush every write to the disk hardware. */
  syncEveryWrite: boolean;
  /**
   * For a new session: its empty snapshot. The first write then stores it and appends the
   * changes made since as records (instead of one snapshot that holds them), so that readers
   * that follow the records see every event (SCALE-4).
   */
  startEmpty?: SessionSnapshot;
  /** The lock the session was loaded under: every append and compaction is made under it. */
  lock?: SessionLogLock;
}

/**
 * Writes one session's changes to its `SessionLog`, in order (one queue per session): the
 * changes made while a write is under way go out together as the next append (one write, one
 * fsync when any of them asks for it). After a failed write the next write is a whole snapshot
 * (`compact`) instead of an append (an append may have been half stored; only a new snapshot puts
 * it right); it hands the log the failed batch's records and those made since, which a shared
 * log stores as records with it (SCALE-4). After a clear the next write appends its batch and
 * then compacts; when the log says the records outweigh their snapshot, the next write not asked
 * to be flushed does (a flushed one, which a tool waits on, only appends: up to 8 in a row). A
 * `session_seq_conflict` means another writer: this writer then stops writing (every later write
 * rejects with it) so that it never overwrites the other's changes.
 */
export class LogWriter implements SessionWriter {
  private readonly log: SessionLog;
  private readonly id: string;
  private readonly state: () => SessionState;
  private readonly syncEveryWrite: boolean;
  private readonly queue = new SerialQueue();
  /** The changes not stored yet, in order: those of a failed append stay, in front. */
  private pending: Pending[] = [];
  private persistedSeq: number;
  /** The log cannot take an append (none yet, damage, a failed write): write a snapshot instead. */
  private needsSnapshot: boolean;
  /**
   * The log says its records outweigh their snapshot: the next write that nobody waits on to be
   * flushed compacts after its append (see `persistThrough`).
   */
  private compactionDue = false;
  /** A clear made the stored history dead weight: the next write compacts after its append. */
  private cleared = false;
  /** Writes that skipped a due compaction because they were to be flushed. */
  private compactionsPostponed = 0;
  private startEmpty: SessionSnapshot | undefined;
  private conflict: SessionLogError | undefined;
  private readonly lock: SessionLogLock | undefined;
  /** Set once the session's lock is given up (`release`): nothing is written any more. */
  private released: Error | undefined;
  /**
   * The write of this tick's changes, once one was asked for: `stored` when it is done (flushed
   * if any asked for it), `written` as soon as the records are written, for those that did not.
   */
  private scheduled: Scheduled | undefined;
  /** A compaction going on beside the appends after it (`SessionLog.compactBeside`). */
  private compactingBeside: Promise<void> | undefined;

  constructor(options: LogWriterOptions) {
    this.log = options.log;
    this.id = options.id;
    this.state = options.state;
    this.syncEveryWrite = options.syncEveryWrite;
    this.persistedSeq = options.persistedSeq;
    this.needsSnapshot = options.needsSnapshot;
    this.startEmpty = options.startEmpty;
    this.lock = options.lock;
  }

  release(error: Error): void {
    this.released ??= error;
  }

  write(record: LogRecord, options: WriteOptions): Promise<void> {
    this.pending.push({ record, sync: options.sync });
    // After a clear the old history is dead weight, and the new snapshot is small: compact soon.
    if (record.change.type === 'clear') this.cleared = true;
    // The changes made in one turn of the event loop (the calls of a tool wave, a message and its
    // events) are stored together: one write, and one fsync when any of them needs it.
    this.scheduled ??= this.schedule();
    // A change to be flushed is an intent, which a tool waits for: its batch goes out once the
    // work already under way in this tick is done (the wave's other intents come in that work),
    // not after the event loop has gone round.
    if (options.sync) this.scheduled.expedite();
    const waitsForFlush = options.sync && options.resolveWhenWritten !== true;
    return waitsForFlush ? this.scheduled.stored : this.scheduled.written;
  }

  private schedule(): Scheduled {
    let markWritten: () => void = () => undefined;
    const writtenEarly = new Promise<void>((resolve) => {
      markWritten = resolve;
    });
    let start: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      start = resolve;
      setImmediate(resolve);
    });
    const stored = started.then(() => {
      this.scheduled = undefined;
      const through = this.state().seq;
      return this.queue.run(() => this.persistThrough(through, markWritten)).then(besideDone);
    });
    // Changes that need no flush are stored once written: their callers (the events that clients
    // are sent) need not wait for the fsync of an intent in the same batch.
    const written = Promise.race([writtenEarly, stored]);
    // Whoever takes them handles their failure; one nobody took must not count as unhandled.
    written.catch(() => undefined);
    stored.catch(() => undefined);
    return { stored, written, expedite: () => process.nextTick(start) };
  }

  flush(): Promise<void> {
    // A compaction under way beside the appends is waited for too: what the log holds is then
    // the snapshot it wrote and the records after it.
    return this.queue
      .run(() => this.persistThrough(this.state().seq, () => undefined))
      .then(() => this.compactingBeside);
  }

  remove(): Promise<void> {
    return this.queue.run(async () => {
      if (this.released !== undefined) throw this.released;
      await this.log.remove(this.id);
    });
  }

  /**
   * Stores the changes through `seq`. Gives the compaction it started beside later appends, if it
   * did (`compactBeside`): its writers wait for it (see `compactAfterAppend`), the queue does not.
   */
  private async persistThrough(seq: number, onWritten: () => void): Promise<Started> {
    if (this.conflict !== undefined) throw this.conflict;
    // A batch or a snapshot written by an earlier task may already hold this change (the last
    // flush before the lock was given up, too).
    if (this.persistedSeq >= seq) return {};
    if (this.released !== undefined) throw this.released;
    const empty = this.startEmpty;
    // Every change since the empty snapshot is still pending: store it, then them as records.
    const allPending = this.pending[0]?.record.seq === (empty?.seq ?? 0) + 1;
    if (this.needsSnapshot && empty !== undefined && allPending) {
      await this.log.compact(this.id, empty, this.underLock({}));
      this.startEmpty = undefined;
      this.needsSnapshot = false;
      this.persistedSeq = empty.seq;
    }
    this.startEmpty = undefined;
    if (this.needsSnapshot) {
      await this.writeSnapshot();
      return {};
    }
    const sync = this.syncEveryWrite || this.pending.some((pending) => pending.sync);
    let compact = this.cleared;
    if (this.compactionDue && !compact) {
      // A compaction rewrites the whole history and flushes it twice (file and folder). A write
      // that a tool waits on (an intent) only appends, and a later one compacts (PERF-1); after
      // a few postponed in a row (every write flushed), one compacts anyway.
      if (!sync || this.compactionsPostponed >= maxCompactionsPostponed) compact = true;
      else this.compactionsPostponed += 1;
    }
    const batch = this.pending;
    this.pending = [];
    const last = batch.at(-1);
    if (last === undefined) return {};
    // Where the log compacts beside the appends after this one, the snapshot is of what it holds
    // once this batch is in: taken now, before changes made meanwhile join later batches.
    const beside = compact && this.log.compactBeside !== undefined;
    let snapshot: SessionSnapshot | undefined;
    if (beside && this.compactingBeside === undefined && this.state().seq === last.record.seq) {
      snapshot = snapshotOf(this.state());
      this.cleared = false;
    }
    let compactionDue: boolean;
    try {
      // The writers of a batch that a compaction follows wait for it too, as when the snapshot
      // was their write: a reader after them finds the log compacted. Not its events where the
      // compaction goes on beside the later appends: they are sent once written, as ever.
      ({ compactionDue } = await this.log.append(
        this.id,
        batch.map((pending) => pending.record),
        this.underLock(compact && !beside ? { sync } : { sync, onWritten }),
      ));
    } catch (error) {
      if (error instanceof SessionLogError && error.code === 'session_seq_conflict') {
        this.conflict = error;
        throw error;
      }
      // The batch may or may not be stored: it goes to the snapshot that puts the log right, so
      // that a shared log can still store its changes as records (see `writeSnapshot`).
      this.pending = [...batch, ...this.pending];
      this.needsSnapshot = true;
      // The stored session went away behind our back: store it afresh from memory.
      if (error instanceof SessionLogError && error.code === 'session_missing') {
        await this.writeSnapshot();
        return {};
      }
      throw error instanceof SessionStoreError
        ? error
        : new SessionStoreError(`Could not store a change of session ${this.id}`, {
            code: 'session_write_failed',
            cause: error,
          });
    }
    this.persistedSeq = last.record.seq;
    // The log's size is the old file's while a compaction beside the appends is under way.
    this.compactionDue = compactionDue && this.compactingBeside === undefined;
    if (snapshot !== undefined) return { beside: this.compactBeside(snapshot) };
    if (compact && !beside) await this.compactAfterAppend();
    return {};
  }

  /**
   * Compacts once the batch is appended, never in its place: processes that follow a shared log
   * read its records (SCALE-4), and a change folded into a snapshot without ever being a record
   * never reaches them, nor do its events. It costs one more write per compaction (for a file
   * log the batch's bytes, flushed only when asked; for a shared one a transaction); `compact`'s
   * `records` are for putting a failed write right, an append stores them alike on every log.
   * With changes made while the batch was appended it waits: a snapshot now would hold them in
   * place of their records. Their write, already scheduled, appends them and compacts.
   */
  private async compactAfterAppend(): Promise<void> {
    if (this.pending.length > 0) return;
    try {
      await this.writeSnapshot();
    } catch {
      // The batch is stored: its write succeeded. A compaction replaces the log at once or not at
      // all, so a failed one left it as it was: later writes append, and one compacts again.
    }
  }

  /**
   * Starts a compaction that the writes after it do not wait for (CH-5: the events in them wait
   * for their write, never for a compaction's flushes), of `snapshot`: what the log holds after
   * the batch just appended. A failed one left the log as it was: a later write compacts again.
   */
  private compactBeside(snapshot: SessionSnapshot): Promise<void> {
    this.compactionDue = false;
    this.compactionsPostponed = 0;
    const log = this.log as Required<Pick<SessionLog, 'compactBeside'>>;
    const running = log.compactBeside(this.id, snapshot, this.underLock({})).then(
      () => undefined,
      () => {
        this.compactionDue = true;
      },
    );
    this.compactingBeside = running;
    void running.finally(() => {
      if (this.compactingBeside === running) this.compactingBeside = undefined;
    });
    return running;
  }

  /**
   * Writes the whole session; on failure the log is as it was (see `SessionLog.compact`). The
   * changes it holds that are still pending (a failed append's, which may or may not have been
   * stored, and those made since) go along: a shared log stores those it lacks as records, so
   * that the processes following it get them and their events (SCALE-4).
   */
  private async writeSnapshot(): Promise<void> {
    const state = this.state();
    const seq = state.seq;
    const records = this.pending
      .filter((pending) => pending.record.seq <= seq)
      .map((pending) => pending.record);
    await this.log.compact(this.id, snapshotOf(state), this.underLock({ records }));
    this.persistedSeq = seq;
    this.pending = this.pending.filter((pending) => pending.record.seq > seq);
    this.needsSnapshot = false;
    this.cleared = false;
    this.compactionDue = false;
    this.compactionsPostponed = 0;
  }

  /** A log call's options with the session's lock, when it has one. */
  private underLock<T extends object>(options: T): T & { lock?: SessionLogLock } {
    return this.lock === undefined ? options : { ...options, lock: this.lock };
  }
}

/** The writer of sessions that are not stored: keeps nothing. */
export const nullWriter: SessionWriter = {
  write: () => Promise.resolve(),
  flush: () => Promise.resolve(),
  remove: () => Promise.resolve(),
};
