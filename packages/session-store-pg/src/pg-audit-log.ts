import { AuditLogError, type AuditEntry, type AuditLog } from '@claw/approval';
import { errorMessage } from '@claw/core';
import type pg from 'pg';

/** Options of {@link PgAuditLog}. */
export interface PgAuditLogOptions {
  /** The pool every query goes through. The log never ends it. */
  pool: pg.Pool;
  /** This instance's id, kept in each row's `instance` column. */
  instanceId: string;
  /** The logical workspace id (as in `PgGrantStore`), kept in each entry. */
  workspace: string;
}

/**
 * An audit entry as `PgAuditLog.entries` reads it back: which instance decided, in which
 * workspace.
 */
export type PgAuditEntry = AuditEntry & { instance: string; workspace: string };

/** Options of `PgAuditLog.entries`: which entries to read. */
export interface PgAuditEntriesOptions {
  /** Only the entries of this session. Default: every session of the workspace. */
  sessionId?: string;
  /** At most this many entries: the newest ones, still returned oldest first. Default: all. */
  limit?: number;
}

const entryTextFields = ['time', 'requestId', 'sessionId', 'toolName', 'digest', 'decision'] as const;

/** True when `value` has the text fields of an `AuditEntry`. */
function isAuditEntry(value: unknown): value is AuditEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return entryTextFields.every((field) => typeof record[field] === 'string');
}

/**
 * The audit log in PostgreSQL (SCALE-4, APR-4): one row of the `claw_audit` table per decision
 * of the gate, shared by every instance. A row names the instance that decided (`instance`) and
 * the session (`session_id`); its `entry` is the `AuditEntry` plus the logical `workspace`.
 * Append-only; the pool is not ended by this log (it has no `close`).
 *
 * `record` and `entries` throw an `AuditLogError` (`audit_write_failed`; its `file` names the
 * table) when PostgreSQL cannot be reached.
 */
export class PgAuditLog implements AuditLog {
  readonly pool: pg.Pool;
  readonly instanceId: string;
  readonly workspace: string;
  /** Where the entries are, as errors name it (`AuditLogError.file`). */
  readonly location = 'PostgreSQL table claw_audit';

  /** @throws RangeError when `instanceId` or `workspace` is empty. */
  constructor(options: PgAuditLogOptions) {
    if (options.instanceId === '' || options.workspace === '') {
      throw new RangeError('PgAuditLog needs an instanceId and a workspace id: pass both, neither empty');
    }
    this.pool = options.pool;
    this.instanceId = options.instanceId;
    this.workspace = options.workspace;
  }

  /** Inserts one row for `entry`; resolves once it is committed. */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await this.pool.query(
        'INSERT INTO claw_audit (instance, session_id, entry) VALUES ($1, $2, $3::jsonb)',
        [this.instanceId, entry.sessionId, JSON.stringify({ ...entry, workspace: this.workspace })],
      );
    } catch (error) {
      throw this.failure('record a decision in', error);
    }
  }

  /**
   * The entries of this workspace, from every instance, oldest first (in the order recorded).
   *
   * @throws RangeError when `limit` is not a whole number of 0 or more.
   */
  async entries(options: PgAuditEntriesOptions = {}): Promise<PgAuditEntry[]> {
    const { sessionId, limit } = options;
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new RangeError(`limit (${limit}) must be a whole number of 0 or more`);
    }
    let rows: Array<{ instance: string; entry: unknown }>;
    try {
      const result = await this.pool.query<{ instance: string; entry: unknown }>(
        `SELECT instance, entry FROM (
           SELECT id, instance, entry FROM claw_audit
           WHERE entry->>'workspace' = $1 AND ($2::text IS NULL OR session_id = $2)
           ORDER BY id DESC LIMIT $3
         ) AS newest ORDER BY id`,
        [this.workspace, sessionId ?? null, limit ?? null],
      );
      rows = result.rows;
    } catch (error) {
      throw this.failure('read the entries of', error);
    }
    return rows.map((row) => {
      if (!isAuditEntry(row.entry)) {
        throw new AuditLogError(
          `An entry in ${this.location} is not an audit entry. Remove that row (or restore the ` +
          'table from a backup), then read the audit log again.',
          { file: this.location },
        );
      }
      return { ...row.entry, instance: row.instance, workspace: this.workspace };
    });
  }

  private failure(action: string, error: unknown): AuditLogError {
    return new AuditLogError(
      `Could not ${action} the audit log (${this.location}, workspace ` +
      `${JSON.stringify(this.workspace)}): ${errorMessage(error)}. PostgreSQL could not be reached ` +
      'or refused the query: check that the database is up and reachable, then retry.',
      { file: this.location, cause: error },
    );
  }
}
