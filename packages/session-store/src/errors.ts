import { ClawError } from '@claw/core';

/** The codes a `SessionStoreError` carries. Safe to switch on. */
export type SessionStoreErrorCode =
  | 'invalid_session_id'
  | 'invalid_work_dir'
  | 'invalid_usage'
  | 'invalid_change'
  | 'session_corrupt'
  | 'session_version_unsupported'
  | 'session_read_failed'
  | 'session_write_failed'
  | 'session_workdir_conflict'
  | 'session_deleted';

/**
 * The root of every error `@claw/session-store` throws. Switch on `code`, or catch
 * `SessionFileError` for the failures that concern one session file.
 */
export class SessionStoreError extends ClawError {
  declare readonly code: SessionStoreErrorCode;

  constructor(message: string, options: { code: SessionStoreErrorCode; cause?: unknown }) {
    super(message, options);
  }
}

/** The codes of the errors that concern one session file. */
export type SessionFileErrorCode = Extract<
  SessionStoreErrorCode,
  'session_corrupt' | 'session_version_unsupported' | 'session_read_failed' | 'session_write_failed'
>;

/**
 * A session file could not be read (`session_read_failed`), is not a session file claw can use
 * (`session_corrupt`, or `session_version_unsupported` when a newer claw wrote it; the file is
 * then never overwritten), or a change could not be written to it (`session_write_failed`). The
 * file-system error, if any, is the `cause`.
 */
export class SessionFileError extends SessionStoreError {
  declare readonly code: SessionFileErrorCode;
  /** The session file concerned. */
  readonly file: string;
  /** The 1-based line of the file at fault, when one line is. */
  readonly line: number | undefined;

  constructor(
    message: string,
    options: { code: SessionFileErrorCode; file: string; line?: number; cause?: unknown },
  ) {
    super(message, { code: options.code, cause: options.cause });
    this.file = options.file;
    this.line = options.line;
  }
}
