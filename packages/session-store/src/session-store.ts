import nodePath from 'node:path';
import { SharedResources } from '@claw/core';
import { SessionStoreError } from './errors.js';
import { LogWriter } from './log-writer.js';
import type {
  SessionLog,
  SessionLogLock,
  SessionPage,
  SessionSummary,
  UnreadableSession,
} from './session-log.js';
import type {
  GetOrCreateOptions,
  SessionListOptions,
  PersistentSession,
  SessionLease,
  SessionManager,
} from './session-manager.js';
import { assertSessionId, assertWorkDir } from './session-id.js';
import { newSessionState, replay, snapshotOf } from './session-state.js';
import { StoredSession } from './stored-session.js';

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  /** Where the sessions are stored. */
  log: SessionLog;
  /** The clock for createdAt, updatedAt and event times. Default: the current time. */
  now?: () => Date;
  /**
   * Flush every write to the disk hardware (fsync). Default false: tool starts and snapshots are
   * flushed; other changes survive a crash of the process, and a power loss may lose the last of
   * them (never the session's readability).
   */
  syncEveryWrite?: boolean;
  /** The workspace `clear(id)` opens a session in when it is not open. Default: the stored one. */
  workDir?: string;
}

interface Opened {
  session: StoredSession;
  lock: SessionLogLock;
  /** The workspace it was opened for. */
  workDir: string;
}

/**
 * Sessions on any `SessionLog` (RT-5, RT-6): the one implementation of loading (snapshot plus
 * changes, then orphan repair), the tool journal, usage, events and their numbering, written once
 * for every backend. A session is opened once per store and shared by every `open` of its id; it
 * is locked in the log while open (a second process, or a second store, gets
 * `SessionLockedError` at once and writes nothing), and the last `release` stores what is left,
 * unlocks it and forgets it, so nothing stays cached.
 */
export class SessionStore implements SessionManager {
  readonly log: SessionLog;
  private readonly now: () => Date;
  private readonly syncEveryWrite: boolean;
  private readonly defaultWorkDir: string | undefined;
  /** The sessions open here, by id; the last release stores what is left and unlocks. */
  private readonly sessions = new SharedResources<string, Opened>({
    dispose: (opened) => finish(opened),
  });

  private readonly kept = new Map<string, Promise<SessionLease>>();
  private closed = false;

  constructor(options: SessionStoreOptions) {
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.syncEveryWrite = options.syncEveryWrite ?? false;
    this.defaultWorkDir = options.workDir;
  }

  async open(id: string, options: GetOrCreateOptions): Promise<SessionLease> {
    assertSessionId(id);
    assertWorkDir(options.workDir);
    if (this.closed) throw closedError();
    const lease = await this.sessions.acquire(id, () => this.load(id, options.workDir));
    const { session, workDir } = lease.value;
    if (!sameFolder(workDir, options.workDir)) {
      await lease.release();
      throw new SessionStoreError(
        `Session ${JSON.stringify(id)} is open for the workspace ${workDir}, not ` +
        `${options.workDir}. Use another session id for another workspace.`,
        { code: 'session_workdir_conflict' },
      );
    }
    return { session, release: lease.release };
  }

  getOrCreate(id: string, options: GetOrCreateOptions): Promise<PersistentSession> {
    const kept = this.kept.get(id);
    if (kept === undefined) {
      const opening = this.open(id, options);
      this.kept.set(id, opening);
      opening.catch(() => {
        if (this.kept.get(id) === opening) this.kept.delete(id);
      });
      return opening.then((lease) => lease.session);
    }
    return kept.then(async (lease) => {
      const workDir = (await this.openHere(id))?.workDir;
      if (workDir !== undefined && !sameFolder(workDir, options.workDir)) {
        // The same check and error as `open`.
        await (await this.open(id, options)).release();
      }
      return lease.session;
    });
  }

  /**
   * Every session, most recently changed first; open ones as they are in memory. A caller that
   * lists only some (one workspace's, say) gives `page`, which reads one page of them from the log
   * (instead of `log.list`), and `isListed`, which says which of the sessions open here are among
   * them. Unreadable sessions go to `onUnreadable` in the order of their ids.
   */
  async list(
    options: SessionListOptions & {
      page?: (after: string | undefined) => Promise<SessionPage>;
      isListed?: (id: string) => boolean;
    } = {},
  ): Promise<SessionSummary[]> {
    const page = options.page ?? ((after) => this.log.list(after === undefined ? {} : { after }));
    const summaries = new Map<string, SessionSummary>();
    const unreadable = new Map<string, UnreadableSession>();
    let after: string | undefined;
    do {
      const read = await page(after);
      for (const summary of read.sessions) summaries.set(summary.id, summary);
      for (const session of read.unreadable ?? []) unreadable.set(session.id, session);
      after = read.next;
    } while (after !== undefined);
    for (const [id, opening] of this.sessions.entries()) {
      if (options.isListed?.(id) === false) continue;
      const opened = await opening.catch(() => undefined);
      if (opened === undefined) continue;
      summaries.set(id, opened.session.summary());
      // Open here, it is as it is in memory: whatever happened to its stored copy since.
      unreadable.delete(id);
    }
    for (const session of unreadable.values()) options.onUnreadable?.(session);
    return [...summaries.values()].sort(byRecency);
  }

  async clear(id: string): Promise<void> {
    assertSessionId(id);
    const workDir =
      (await this.openHere(id))?.workDir ??
      this.defaultWorkDir ??
      (await this.log.load(id))?.snapshot.workDir;
    if (workDir === undefined) return;
    const lease = await this.open(id, { workDir });
    try {
      await lease.session.clear();
    } finally {
      await lease.release();
    }
  }

  async delete(id: string): Promise<void> {
    assertSessionId(id);
    this.kept.delete(id);
    // Open here: taken from its holders (their releases then do nothing), removed under its lock.
    const opened = await this.sessions.forget(id)?.catch(() => undefined);
    if (opened !== undefined) {
      try {
        await opened.session.delete();
      } finally {
        await opened.lock.release();
      }
      return;
    }
    await this.sessions.settled(id);
    // Not open here: take it, so a session in use elsewhere is never removed under its owner.
    const lock = await this.log.acquire(id);
    try {
      await this.log.remove(id);
    } finally {
      await lock.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kept.clear();
    await this.sessions.clear();
  }

  /** The session open here (or being opened), if any; undefined when it failed to open. */
  private async openHere(id: string): Promise<Opened | undefined> {
    return this.sessions.peek(id)?.catch(() => undefined);
  }

  private async load(id: string, workDir: string): Promise<Opened> {
    const lock = await this.log.acquire(id);
    try {
      const stored = await this.log.load(id);
      const { state, events } =
        stored === undefined
          ? { state: newSessionState({ id, workDir, now: this.now().toISOString() }), events: [] }
          : replay(stored, { workDir, location: this.log.location(id) });
      const session = new StoredSession({
        state,
        now: this.now,
        storedEvents: events,
        writer: (current) =>
          new LogWriter({
            log: this.log,
            id,
            state: current,
            persistedSeq: state.seq,
            needsSnapshot: stored === undefined || stored.needsCompaction,
            // Readers in other processes follow a shared log's records (SCALE-4): a new
            // session's first changes go there as records too, after an empty snapshot.
            ...(stored === undefined && this.log.relayParts !== undefined
              ? { startEmpty: snapshotOf(state) }
              : {}),
            syncEveryWrite: this.syncEveryWrite,
            lock,
          }),
      });
      // Repair is the only write a load makes (SES-7).
      await session.repair();
      return { session, lock, workDir };
    } catch (error) {
      await lock.release();
      throw error;
    }
  }
}

/** Stores what is left of an open session and unlocks it; nothing is written through it after. */
async function finish(opened: Opened): Promise<void> {
  try {
    await opened.session.flush();
  } finally {
    opened.session.release();
    await opened.lock.release();
  }
}

function sameFolder(a: string, b: string): boolean {
  return nodePath.resolve(a) === nodePath.resolve(b);
}

function closedError(): SessionStoreError {
  return new SessionStoreError('The session store is closed; create a new one.', {
    code: 'session_store_closed',
  });
}

/** Most recently changed first; ties by id. */
export function byRecency(a: SessionSummary, b: SessionSummary): number {
  const difference = Date.parse(b.updatedAt) - Date.parse(a.updatedAt);
  if (difference !== 0) return difference;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
