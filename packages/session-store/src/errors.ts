import { ClawError } from '@claw/core';

/** The codes a `SessionStoreError` carries. Safe to switch on. */
export type SessionStoreErrorCode =
  | 'invalid_session_id'
  | 'invalid_work_dir'
  | 'invalid_usage'
  | 'invalid_change'
  | 'invalid_compaction'
  | 'session_corrupt'
  | 'session_version_unsupported'
  | 'session_read_failed'
  | 'session_write_failed'
  | 'session_missing'
  | 'session_seq_conflict'
  | 'session_locked'
  | 'session_workdir_conflict'
  | 'session_deleted'
  | 'session_owner_unreachable'
  | 'session_released'
  | 'session_store_closed';

/** Codes the user fixes by changing how claw is run, not by retrying (see `isUserError`). */
const userErrorCodes: ReadonlySet<SessionStoreErrorCode> = new Set<SessionStoreErrorCode>([
  'invalid_session_id',
  'invalid_work_dir',
  'session_corrupt',
  'session_version_unsupported',
  'session_read_failed',
  'session_locked',
  'session_workdir_conflict',
]);

/**
 * The root of every error `@claw/session-store` throws. Switch on `code`, or catch
 * `SessionLogError` for the failures of one session's storage.
 */
export class SessionStoreError extends ClawError {
  declare readonly code: SessionStoreErrorCode;

  constructor(message: string, options: { code: SessionStoreErrorCode; cause?: unknown }) {
    super(message, { ...options, userError: userErrorCodes.has(options.code) });
  }
}

/** The codes of the errors that concern one session's storage. */
export type SessionLogErrorCode = Extract<
  SessionStoreErrorCode,
  | 'session_corrupt'
  | 'session_version_unsupported'
  | 'session_read_failed'
  | 'session_write_failed'
  | 'session_missing'
  | 'session_seq_conflict'
  | 'session_owner_unreachable'
>;

/**
 * A session's stored log could not be read (`session_read_failed`), is not one claw can use
 * (`session_corrupt`, or `session_version_unsupported` when a newer claw wrote it; it is then
 * never overwritten), a change could not be written (`session_write_failed`), the stored session
 * vanished (`session_missing`), or an append did not follow the last stored change
 * (`session_seq_conflict`: somebody else wrote to it; nothing was written). The storage's own
 * error, if any, is the `cause`. Storage-neutral: `location` says where (a file, a database row).
 */
export class SessionLogError extends SessionStoreError {
  declare readonly code: SessionLogErrorCode;
  /** Where the session is kept, e.g. the path of its file. */
  readonly location: string;
  /** The 1-based record of the log at fault (a line of a file), when one is. */
  readonly record: number | undefined;

  constructor(
    message: string,
    options: { code: SessionLogErrorCode; location: string; record?: number; cause?: unknown },
  ) {
    super(message, { code: options.code, cause: options.cause });
    this.location = options.location;
    this.record = options.record;
  }
}

/** Who holds a session (RT-5): written into the lock when it is taken. */
export interface SessionLockHolder {
  pid: number;
  /** The machine's host name. */
  host: string;
  /** When the holding process started, ISO 8601. */
  startedAt: string;
}

/**
 * The session is in use by another process (or another store of this one) (`session_locked`,
 * RT-5). Nothing was written. The message names the holder and what to do.
 */
export class SessionLockedError extends SessionStoreError {
  declare readonly code: 'session_locked';
  readonly sessionId: string;
  /** The holder, when the lock could be read. */
  readonly holder: SessionLockHolder | undefined;

  constructor(message: string, options: { sessionId: string; holder?: SessionLockHolder }) {
    super(message, { code: 'session_locked' });
    this.sessionId = options.sessionId;
    this.holder = options.holder;
  }
}
