import { errorMessage } from '@claw/core';
import { SessionLogError, type LogRecord, type SessionChange } from '@claw/session-store';
import { storeUnavailable, type PgConnectionSettings } from './connection.js';

/** A row of `claw_changes` as a read selects it (`seq, at, change`). */
export interface ChangeRow {
  seq: string;
  at: string;
  change: string;
}

/**
 * The records of one session's change rows, in the rows' order. Every read of changes (a load,
 * a reader following the session) goes through here.
 *
 * @throws SessionLogError `session_corrupt` naming the seq of a change that is not JSON.
 */
export function recordsOf(rows: readonly ChangeRow[], location: string): LogRecord[] {
  return rows.map((row) => {
    const seq = Number(row.seq);
    return { seq, at: row.at, change: parseStored<SessionChange>(row.change, location, seq) };
  });
}

/**
 * Stored JSON: record 0 is the snapshot, record N the change with seq N.
 *
 * @throws SessionLogError `session_corrupt` when it is not JSON.
 */
export function parseStored<T>(text: string, location: string, record: number): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    const what = record === 0 ? 'a snapshot' : `a change (seq ${record})`;
    throw new SessionLogError(
      `${location} holds ${what} that is not JSON: restore the database from a backup or ` +
      'remove the session.',
      { code: 'session_corrupt', location, record, cause: error },
    );
  }
}

/**
 * What a read of `location` rejects with: `session_read_failed`, unless it failed as one; its
 * cause is `store_unavailable` when PostgreSQL could not be reached or did not answer in time.
 */
export function readError(
  error: unknown,
  location: string,
  settings: Partial<PgConnectionSettings> = {},
): SessionLogError {
  if (error instanceof SessionLogError) return error;
  const unavailable = storeUnavailable(error, `reading ${location}`, settings);
  return new SessionLogError(
    unavailable === undefined
      ? `Could not read ${location}: ${errorMessage(error)}. Check that PostgreSQL is ` +
      'reachable, then retry.'
      : `${unavailable.message} Then retry.`,
    { code: 'session_read_failed', location, cause: unavailable ?? error },
  );
}
