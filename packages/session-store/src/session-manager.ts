import type { AgentSession, CostTotals, ToolCall, Usage } from '@claw/core';
import type { RepairedCall } from './repair.js';

/** One session as `SessionManager.list` shows it. */
export interface SessionSummary {
  id: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: the time of the last change. */
  updatedAt: string;
  messageCount: number;
  usage: Usage;
  cost: CostTotals;
}

/**
 * A session a `SessionManager` keeps (SES-1): id, workDir, createdAt, updatedAt, history, token
 * and cost totals, plus orphan repair (SES-7) and the tool journal (SES-8).
 *
 * Changes (`append`, `recordUsage`, `clear`, the journal) are applied in memory at once, in call
 * order, and persisted in that order. When a write fails, the change stays in memory (memory is
 * always the session as the run saw it), the call rejects with a `SessionFileError`
 * (`session_write_failed`), and the next write, or `flush()`, writes the whole session again; do
 * not repeat the change. After the session was deleted, changes reject with `session_deleted`.
 */
export interface PersistentSession extends AgentSession {
  /** When the session was first created (ISO 8601); kept across reloads. */
  readonly createdAt: string;
  /** The time of the last change (ISO 8601). */
  readonly updatedAt: string;
  /** Empties the history; token and cost totals are kept (SES-5). Nothing to empty: no write. */
  clear(): Promise<void>;
  /**
   * Orphan repair before a run (ENG-10, SES-7): unpaired tool calls get an Observation saying what
   * is known about them. A paired history is left as it is (no write, `updatedAt` unchanged).
   */
  beforeRun(): Promise<void>;
  /** Records, flushed to the disk, that a tool is about to run (SES-8). */
  toolStarted(call: ToolCall): Promise<void>;
  /** Records that a tool ended, however it ended (SES-8). */
  toolFinished(toolCallId: string): Promise<void>;
  /**
   * What the latest repair pass (on load, or `beforeRun`) repaired; empty when it found nothing.
   * `describeRepair` turns it into lines for the user.
   */
  lastRepair(): readonly RepairedCall[];
  summary(): SessionSummary;
  /**
   * Resolves once every change is on disk; after a failed write, tries to write the whole
   * session again.
   *
   * @throws SessionFileError `session_write_failed` when that fails too.
   */
  flush(): Promise<void>;
}

/** Options of `SessionManager.getOrCreate`. */
export interface GetOrCreateOptions {
  /** The workspace the session works in; a reloaded session takes this one (SES-5). */
  workDir: string;
}

/** Keeps sessions by id (SES-1..SES-6). */
export interface SessionManager {
  /**
   * The session with this id: the live one, the one on disk (repaired, SES-7), or a new one. A
   * new session writes nothing until its first change. The same id always gives the same object.
   *
   * @throws SessionStoreError `invalid_session_id`, `invalid_work_dir`, or
   * `session_workdir_conflict` when the live session works in another folder; `SessionFileError`
   * `session_corrupt` / `session_version_unsupported` / `session_read_failed` for a file that
   * cannot be used (it is left as it is).
   */
  getOrCreate(id: string, options: GetOrCreateOptions): Promise<PersistentSession>;
  /** Every session, most recently changed first. */
  list(): Promise<SessionSummary[]>;
  /** Empties the history of a session, keeping its totals; a session that does not exist: no-op. */
  clear(id: string): Promise<void>;
  /** Removes a session; its live object rejects further changes (`session_deleted`). */
  delete?(id: string): Promise<void>;
}
