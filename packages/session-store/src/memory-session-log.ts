import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { SessionLockedError, SessionLogError, type SessionLockHolder } from './errors.js';
import {
  checkAppendSeqs,
  type AppendResult,
  type LogRecord,
  type SessionLog,
  type SessionLogLock,
  type SessionPage,
  type SessionSnapshot,
  type StoredLog,
} from './session-log.js';
import { assertSessionId } from './session-id.js';
import { summaryOf } from './summary.js';

interface Stored {
  snapshot: SessionSnapshot;
  records: LogRecord[];
}

/**
 * Sessions in memory only (SES-6): the `SessionLog` of `MemorySessionManager`, for tests and
 * library users. Everything is copied in and out (`structuredClone`), so what a caller holds is
 * never the stored value. Two stores over one `MemorySessionLog` behave like two processes
 * sharing a folder: the second to open a session gets `SessionLockedError`.
 */
export class MemorySessionLog implements SessionLog {
  private readonly sessions = new Map<string, Stored>();
  private readonly locks = new Map<string, string>();
  /** Records after a snapshot before `append` says compaction is due. */
  private readonly compactAfterRecords: number;

  constructor(options: { compactAfterRecords?: number } = {}) {
    this.compactAfterRecords = options.compactAfterRecords ?? 1000;
  }

  location(id: string): string {
    assertSessionId(id);
    return `memory session ${JSON.stringify(id)}`;
  }

  async acquire(id: string): Promise<SessionLogLock> {
    this.location(id);
    const holder: SessionLockHolder = {
      pid: process.pid,
      host: os.hostname(),
      startedAt: new Date().toISOString(),
    };
    if (this.locks.has(id)) {
      throw new SessionLockedError(
        `Session ${JSON.stringify(id)} is in use: another store in this process has it open. ` +
        'Close it first, or use another session id.',
        { sessionId: id, holder },
      );
    }
    const token = randomUUID();
    this.locks.set(id, token);
    return {
      holder,
      release: async () => {
        if (this.locks.get(id) === token) this.locks.delete(id);
      },
    };
  }

  async load(id: string): Promise<StoredLog | undefined> {
    this.location(id);
    const stored = this.sessions.get(id);
    if (stored === undefined) return undefined;
    return structuredClone({ ...stored, needsCompaction: false });
  }

  async append(
    id: string,
    records: readonly LogRecord[],
    _options: { sync: boolean },
  ): Promise<AppendResult> {
    const location = this.location(id);
    const stored = this.sessions.get(id);
    if (stored === undefined) {
      throw new SessionLogError(`${location} does not exist: write a snapshot first.`, {
        code: 'session_missing',
        location,
      });
    }
    checkAppendSeqs(records, stored.records.at(-1)?.seq ?? stored.snapshot.seq, location);
    stored.records.push(...structuredClone([...records]));
    return { compactionDue: stored.records.length >= this.compactAfterRecords };
  }

  async compact(id: string, snapshot: SessionSnapshot): Promise<void> {
    this.location(id);
    this.sessions.set(id, { snapshot: structuredClone(snapshot), records: [] });
  }

  async remove(id: string): Promise<void> {
    this.location(id);
    this.sessions.delete(id);
  }

  async list(options: { limit?: number; after?: string } = {}): Promise<SessionPage> {
    const limit = Math.max(1, options.limit ?? 100);
    const ids = [...this.sessions.keys()]
      .filter((id) => options.after === undefined || id > options.after)
      .sort();
    const page = ids.slice(0, limit);
    const sessions = page.map((id) => summaryOf(this.sessions.get(id) as Stored));
    const last = page.at(-1);
    return page.length < ids.length && last !== undefined ? { sessions, next: last } : { sessions };
  }
}
