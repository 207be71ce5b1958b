import { ClawError } from '@claw/core';

/** The codes an `ApprovalError` carries. Safe to switch on. */
export type ApprovalErrorCode =
  | 'grant_store_read_failed'
  | 'grant_store_corrupt'
  | 'grant_store_write_failed'
  | 'audit_write_failed'
  | 'approval_not_pending'
  | 'approval_already_pending'
  | 'approval_canceled'
  | 'approval_request_failed'
  | 'invalid_approval_decision'
  | 'invalid_policy_options';

/**
 * The root of every error `@claw/approval` throws. Switch on `code`, or catch one of the
 * subclasses for the failures that carry more detail.
 */
export class ApprovalError extends ClawError {
  declare readonly code: ApprovalErrorCode;

  constructor(message: string, options: { code: ApprovalErrorCode; cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The grant file could not be read (`grant_store_read_failed`), is not a grant file claw can use
 * (`grant_store_corrupt`; it is never overwritten), or could not be written
 * (`grant_store_write_failed`; the change was rolled back in memory). The file-system error, if
 * any, is the `cause`.
 */
export class GrantStoreError extends ApprovalError {
  /** The grant file concerned. */
  readonly file: string;

  constructor(
    message: string,
    options: {
      code: 'grant_store_read_failed' | 'grant_store_corrupt' | 'grant_store_write_failed';
      file: string;
      cause?: unknown;
    },
  ) {
    super(message, { code: options.code, cause: options.cause });
    this.file = options.file;
  }
}

/** An entry could not be appended to the audit log (`audit_write_failed`). */
export class AuditLogError extends ApprovalError {
  /** The audit file concerned. */
  readonly file: string;

  constructor(message: string, options: { file: string; cause?: unknown }) {
    super(message, { code: 'audit_write_failed', cause: options.cause });
    this.file = options.file;
  }
}

/**
 * A decision was given for a request that is not waiting for one (`approval_not_pending`): it was
 * never asked, was already answered, or was canceled.
 */
export class ApprovalNotPendingError extends ApprovalError {
  /** The request id the decision was given for. */
  readonly requestId: string;

  constructor(message: string, options: { requestId: string }) {
    super(message, { code: 'approval_not_pending' });
    this.requestId = options.requestId;
  }
}
