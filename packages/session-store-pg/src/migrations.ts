import { throwIfAborted } from '@claw/core';
import type pg from 'pg';
import { checkOut, connectionSettingsOfPool, storeUnavailable } from './connection.js';
import { PgSessionError } from './errors.js';

/** One step of the schema: applied once, in order, recorded in `claw_schema_migrations`. */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * The schema (SCALE-1). Never edit a released step: add the next one. Sessions hold the lease
 * (owner, epoch, `lease_until` on the database clock); changes are keyed by `(session_id, seq)`.
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions, snapshots, changes, inbox, approvals, grants, audit, instances',
    sql: `
      CREATE TABLE claw_instances (
        id text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE claw_sessions (
        id text PRIMARY KEY,
        workspace text,
        stored boolean NOT NULL DEFAULT false,
        last_seq bigint NOT NULL DEFAULT 0,
        records_since_snapshot integer NOT NULL DEFAULT 0,
        owner text,
        owner_instance text,
        holder jsonb,
        previous_owner text,
        epoch bigint NOT NULL DEFAULT 0,
        lease_until timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE claw_snapshots (
        session_id text PRIMARY KEY REFERENCES claw_sessions (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        body text NOT NULL
      );
      CREATE TABLE claw_changes (
        session_id text NOT NULL REFERENCES claw_sessions (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        at text NOT NULL,
        change text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE claw_inbox (
        id bigserial PRIMARY KEY,
        session_id text NOT NULL,
        kind text NOT NULL,
        payload jsonb NOT NULL,
        from_instance text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        taken_at timestamptz
      );
      CREATE INDEX claw_inbox_open ON claw_inbox (session_id, id) WHERE taken_at IS NULL;
      CREATE TABLE claw_approvals (
        session_id text NOT NULL,
        approval_id text NOT NULL,
        request jsonb NOT NULL,
        state text NOT NULL DEFAULT 'pending',
        answer jsonb,
        answered_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        answered_at timestamptz,
        PRIMARY KEY (session_id, approval_id)
      );
      CREATE TABLE claw_grants (
        workspace text NOT NULL,
        digest text NOT NULL,
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        PRIMARY KEY (workspace, digest)
      );
      CREATE TABLE claw_audit (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        instance text NOT NULL,
        session_id text,
        entry jsonb NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'inbox replies',
    sql: `
      ALTER TABLE claw_inbox ADD COLUMN reply jsonb;
    `,
  },
  {
    version: 3,
    description: 'session summaries',
    sql: `
      ALTER TABLE claw_sessions ADD COLUMN summary jsonb;
    `,
  },
];

/** Any fixed number: the advisory lock that serialises migrations across instances. */
const migrationLockKey = 0x636c6177; // "claw"

/**
 * Brings the schema up to date (SCALE-1): every step not yet recorded runs, in order, in one
 * transaction that holds an advisory lock, so two instances starting together apply each step
 * once and the second one finds nothing to do. Idempotent.
 *
 * @returns the versions applied by this call.
 * @throws PgSessionError `store_migration_failed` when a step fails (nothing of it is kept), or
 *   when the database holds a newer schema than this claw knows; `store_unavailable` when
 *   PostgreSQL cannot be reached or does not answer in time.
 */
export async function migrate(
  pool: pg.Pool,
  options: { signal?: AbortSignal; steps?: readonly Migration[] } = {},
): Promise<number[]> {
  throwIfAborted(options.signal);
  const steps = options.steps ?? migrations;
  const doing = 'bringing the claw schema up to date';
  let client: pg.PoolClient;
  try {
    client = await checkOut(pool);
  } catch (error) {
    throw storeUnavailable(error, doing, connectionSettingsOfPool(pool)) ?? error;
  }
  let failed = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockKey]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS claw_schema_migrations (
        version integer PRIMARY KEY,
        description text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const done = await client.query<{ version: number }>('SELECT version FROM claw_schema_migrations');
    const applied = new Set(done.rows.map((row) => row.version));
    const newest = Math.max(0, ...steps.map((step) => step.version));
    const unknown = [...applied].filter((version) => version > newest);
    if (unknown.length > 0) {
      throw new PgSessionError(
        `The database's claw schema is version ${Math.max(...unknown)}, newer than this claw knows (${newest}): ` +
        'upgrade claw-server on this machine to the version the other instances run.',
        { code: 'store_migration_failed', userError: true },
      );
    }
    const ran: number[] = [];
    for (const step of [...steps].sort((a, b) => a.version - b.version)) {
      if (applied.has(step.version)) continue;
      throwIfAborted(options.signal);
      await client.query(step.sql);
      await client.query(
        'INSERT INTO claw_schema_migrations (version, description) VALUES ($1, $2)',
        [step.version, step.description],
      );
      ran.push(step.version);
    }
    await client.query('COMMIT');
    return ran;
  } catch (error) {
    // The connection is dropped below, not rolled back: it may be one that no longer answers
    // (a ROLLBACK would wait as long again), and the server rolls back what it leaves.
    failed = true;
    if (error instanceof PgSessionError) throw error;
    if (options.signal?.aborted === true) throw options.signal.reason;
    const unavailable = storeUnavailable(error, doing, connectionSettingsOfPool(pool));
    if (unavailable !== undefined) throw unavailable;
    throw new PgSessionError(
      `Could not bring the claw schema in PostgreSQL up to date: ${(error as Error).message}. ` +
      'Check that the database user may create tables, then start again.',
      { code: 'store_migration_failed', cause: error },
    );
  } finally {
    client.release(failed);
  }
}
