import type {
  Compaction,
  AgentSession,
  SessionEvent,
  SessionEventBody,
  ToolCall,
  ToolStartOptions,
} from '@claw/core';
import type { RepairedCall } from './repair.js';
import type { SessionSummary, UnreadableSession } from './session-log.js';
import type { OpenTask } from './session-state.js';

/**
 * A session a `SessionManager` keeps (SES-1): id, workDir, createdAt, updatedAt, history, token
 * and cost totals, plus orphan repair (SES-7), the tool journal (SES-8) and the numbering of its
 * events (RT-3).
 *
 * Changes (`append`, `recordUsage`, `clear`, the journal, events) are applied in memory at once,
 * in call order, and stored in that order. When a write fails, the change stays in memory
 * (memory is always the session as the run saw it), the call rejects with a `SessionLogError`
 * (`session_write_failed`), and the next write, or `flush()`, stores the whole session again; do
 * not repeat the change. After the session was deleted, changes reject with `session_deleted`.
 */
export interface PersistentSession extends AgentSession {
  /** When the session was first created (ISO 8601); kept across reloads. */
  readonly createdAt: string;
  /** The time of the last change (ISO 8601). */
  readonly updatedAt: string;
  /**
   * Empties the history (and drops its compaction); token and cost totals are kept (SES-5).
   * Nothing to empty: no write.
   */
  clear(): Promise<void>;
  /** The conversation's latest compaction (CMP-4); undefined when none. */
  compaction(): Compaction | undefined;
  /** Stores a compaction, flushed before it resolves (CMP-4). */
  compact(compaction: Compaction): Promise<void>;
  /**
   * Orphan repair before a run (ENG-10, SES-7): unpaired tool calls get an Observation saying what
   * is known about them. A paired history is left as it is (no write, `updatedAt` unchanged).
   */
  beforeRun(): Promise<void>;
  /**
   * Records, flushed to the disk, that a tool is about to run (SES-8). For a tool that only reads
   * (`readOnly`), resolves once the record is written, before the flush ends; the changes after it
   * are stored once the flush is done.
   */
  toolStarted(call: ToolCall, options?: ToolStartOptions): Promise<void>;
  /** Records that a tool ended, however it ended (SES-8). */
  toolFinished(toolCallId: string): Promise<void>;
  /**
   * What the latest repair pass (on load, or `beforeRun`) repaired; empty when it found nothing.
   * `describeRepair` turns it into lines for the user.
   */
  lastRepair(): readonly RepairedCall[];
  summary(): SessionSummary;
  /** The seq of the last event handed out (0 before the first); it continues after a reload. */
  lastEventSeq(): number;
  /**
   * Numbers an event (`seq` = the last plus one, never reused, RT-3), stamps it with the session
   * id and the time, and stores it with the session's other changes. Returns the event at once
   * (the caller never waits for storage) and `written`, which settles once it is stored (it
   * rejects like any change when the write fails).
   */
  appendEvent(body: SessionEventBody): { event: SessionEvent; written: Promise<void> };
  /**
   * The events read back with the session: those stored after its last snapshot, oldest first
   * and without gaps (empty for a new session, or when a snapshot just compacted them away).
   */
  storedEvents(): readonly SessionEvent[];
  /** The task the session's events say is running (left so by a process that stopped). */
  openTask(): OpenTask | undefined;
  /**
   * Resolves once every change is stored; after a failed write, tries to store the whole
   * session again.
   *
   * @throws SessionLogError `session_write_failed` when that fails too.
   */
  flush(): Promise<void>;
}

/** Options of `SessionManager.open`. */
export interface GetOrCreateOptions {
  /** The workspace the session works in; a reloaded session takes this one (SES-5). */
  workDir: string;
}

/**
 * One holder's claim on an open session (RT-5). The session stays loaded, and locked against
 * other processes, while any lease on it is held; `release` (idempotent) gives this one up, and
 * the last release stores what is left, frees the lock and forgets the session.
 */
export interface SessionLease {
  readonly session: PersistentSession;
  release(): Promise<void>;
}

/** Options of a session listing (`SessionManager.list`, and the listings built on it). */
export interface SessionListOptions {
  /**
   * Told of each stored session that cannot be read (damaged, or not readable by claw), which the
   * listing leaves out, after the listing is read: so that it can say so instead of hiding it.
   */
  onUnreadable?: (session: UnreadableSession) => void;
}

/** Keeps sessions by id (SES-1..SES-6) on a `SessionLog`. */
export interface SessionManager {
  /**
   * Opens the session with this id — the one already open, the stored one (repaired, SES-7), or
   * a new one (which stores nothing until its first change) — and holds it until the lease is
   * released. While it is open, every `open` of the id gives the same session object.
   *
   * @throws SessionStoreError `invalid_session_id`, `invalid_work_dir`,
   * `session_workdir_conflict` when the open session works in another folder, `session_locked`
   * (`SessionLockedError`) when another process (or another manager) has it; `SessionLogError`
   * `session_corrupt` / `session_version_unsupported` / `session_read_failed` for a stored session
   * that cannot be used (it is left as it is).
   */
  open(id: string, options: GetOrCreateOptions): Promise<SessionLease>;
  /**
   * `open`, held until `close()`: for short programs and tests that need no release.
   *
   * @throws what `open` throws.
   */
  getOrCreate(id: string, options: GetOrCreateOptions): Promise<PersistentSession>;
  /** Every session, most recently changed first (open ones as they are now). */
  list(options?: SessionListOptions): Promise<SessionSummary[]>;
  /** Empties the history of a session, keeping its totals; a session that does not exist: no-op. */
  clear(id: string): Promise<void>;
  /** Removes a session; its open object rejects further changes (`session_deleted`). */
  delete(id: string): Promise<void>;
  /** Stores what is left, releases every session and lock. Idempotent. */
  close(): Promise<void>;
}
