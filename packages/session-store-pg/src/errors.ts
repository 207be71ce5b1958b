import { ClawError } from '@claw/core';

/** The codes of the errors `@claw/session-store-pg` adds to those of `@claw/session-store`. */
export type PgSessionErrorCode = 'lease_lost' | 'workspace_unavailable' | 'store_unavailable' | 'store_migration_failed';

/** The root of the errors this package adds. Switch on `code`. */
export class PgSessionError extends ClawError {
  declare readonly code: PgSessionErrorCode;

  constructor(
    message: string,
    options: { code: PgSessionErrorCode; cause?: unknown; userError?: boolean },
  ) {
    super(message, options);
  }
}

/** Why an owner lost a session's lease. */
export type LeaseLossReason =
  /** Another instance took the session over (a higher epoch), or the owner row changed. */
  | 'taken_over'
  /** Renewals failed for half the lease: the owner fenced itself before the lease could lapse. */
  | 'renewal_failed';

/**
 * This instance no longer owns the session (SCALE-2, `lease_lost`): another instance took it over
 * (its epoch is higher), or this one could not renew the lease in time and fenced itself. Nothing
 * was written. The session's task must stop and its tool processes be killed; reopen the session
 * to continue it where its new owner left it.
 */
export class SessionLeaseLostError extends PgSessionError {
  declare readonly code: 'lease_lost';
  readonly sessionId: string;
  readonly reason: LeaseLossReason;

  constructor(options: { sessionId: string; reason: LeaseLossReason; cause?: unknown }) {
    super(
      options.reason === 'taken_over'
        ? `Session ${JSON.stringify(options.sessionId)} was taken over by another claw instance: ` +
        'this instance stopped its task and writes nothing more to it. Reopen the session to continue it.'
        : `Session ${JSON.stringify(options.sessionId)} was given up: its lease could not be renewed ` +
          'in time (is PostgreSQL reachable?). Its task was stopped; reopen the session once the database is back.',
      { code: 'lease_lost', cause: options.cause },
    );
    this.sessionId = options.sessionId;
    this.reason = options.reason;
  }
}
