import nodePath from 'node:path';
import {
  GrantStoreError,
  grantKey,
  isGrantExpired,
  readGrant,
  type Grant,
  type GrantKeyParts,
  type GrantStore,
} from '@claw/approval';
import { errorMessage } from '@claw/core';
import type pg from 'pg';

/** Options of {@link PgGrantStore}. */
export interface PgGrantStoreOptions {
  /** The pool every query goes through. The store never ends it. */
  pool: pg.Pool;
  /**
   * The logical id of the workspace, the same on every instance that mounts it (whatever the
   * path). Grants are kept under it, so every such instance sees the same grants.
   */
  workspace: string;
  /** This instance's absolute path of that workspace (resolved like the gate resolves it). */
  workDir: string;
}

interface GrantRow {
  digest: string;
  body: unknown;
}

type KeyParts = [sessionId: string, workDir: string, toolName: string, digest: string];

/** The four parts of a key in `grantKey`'s form, or `undefined` for any other key. */
function keyParts(key: string): KeyParts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return undefined;
  if (!parsed.every((part): part is string => typeof part === 'string')) return undefined;
  return parsed as KeyParts;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Session grants in PostgreSQL (SCALE-4, APR-2..APR-4), in the `claw_grants` table shared by
 * every instance: an instance's revoke applies to the next call on every other instance.
 *
 * Rows are keyed by (`workspace`, a form of the grant key): a key in `grantKey`'s form whose
 * workspace path is this instance's `workDir` is kept with that path replaced by the logical
 * `workspace` id, since instances may mount the shared workspace at different paths; grants
 * read back name this instance's `workDir` (in `workDir` and `key`). Any other key (not that
 * JSON, or naming another folder) is kept as it is, as an opaque key.
 *
 * Nothing is cached: every call reads or writes the database. `delete` does not remove the row
 * but marks it revoked (`revoked_at`, kept for audit); revoked rows are never returned, by `get`
 * nor by `list`. `put` on a revoked grant makes it live again, as a grant added now.
 *
 * Every method throws a `GrantStoreError` when PostgreSQL cannot be reached
 * (`grant_store_read_failed`, `grant_store_write_failed`) or a row is not a grant
 * (`grant_store_corrupt`); its `file` names the table and workspace.
 */
export class PgGrantStore implements GrantStore {
  readonly pool: pg.Pool;
  /** The logical workspace id the grants are kept under. */
  readonly workspace: string;
  /** This instance's path of the workspace (resolved). */
  readonly workDir: string;
  /** Where the grants are, as errors name it (`GrantStoreError.file`). */
  readonly location: string;

  /** @throws RangeError when `workspace` is empty. */
  constructor(options: PgGrantStoreOptions) {
    if (options.workspace === '') {
      throw new RangeError('PgGrantStore needs a workspace id: pass the id every instance uses for this workspace');
    }
    this.pool = options.pool;
    this.workspace = options.workspace;
    this.workDir = nodePath.resolve(options.workDir);
    this.location = `PostgreSQL table claw_grants (workspace ${JSON.stringify(this.workspace)})`;
  }

  /**
   * The live grant with this key, read from the database. An expired one (at `now`, default:
   * the current time) is marked revoked and not returned; a grant put again meanwhile by
   * another instance is left alone.
   */
  async get(key: string, now: Date = new Date()): Promise<Grant | undefined> {
    const digest = this.rowKey(key);
    const rows = await this.query<GrantRow>(
      'read',
      'read a session grant',
      'SELECT digest, body FROM claw_grants WHERE workspace = $1 AND digest = $2 AND revoked_at IS NULL',
      [this.workspace, digest],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const grant = this.grantOf(row);
    if (!isGrantExpired(grant, now)) return grant;
    await this.query(
      'write',
      'remove an expired session grant',
      `UPDATE claw_grants SET revoked_at = now()
       WHERE workspace = $1 AND digest = $2 AND revoked_at IS NULL AND body = $3::jsonb`,
      [this.workspace, digest, JSON.stringify(row.body)],
    );
    return undefined;
  }

  /**
   * Adds the grant, replacing a live one with the same key (which keeps its place in `list`),
   * or making a revoked one live again (as added now).
   */
  async put(grant: Grant): Promise<void> {
    const digest = this.rowKey(grant.key);
    const translated = digest !== grant.key;
    const body: Grant = {
      ...grant,
      key: digest,
      workDir: translated ? this.workspace : grant.workDir,
    };
    await this.query(
      'write',
      'save a session grant',
      `INSERT INTO claw_grants (workspace, digest, body) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (workspace, digest) DO UPDATE SET
         body = EXCLUDED.body,
         created_at = CASE WHEN claw_grants.revoked_at IS NULL THEN claw_grants.created_at ELSE now() END,
         revoked_at = NULL`,
      [this.workspace, digest, JSON.stringify(body)],
    );
  }

  /** Revokes the grant with this key (the row stays, marked); no-op when there is none. */
  async delete(key: string): Promise<void> {
    await this.query(
      'write',
      'revoke a session grant',
      `UPDATE claw_grants SET revoked_at = now()
       WHERE workspace = $1 AND digest = $2 AND revoked_at IS NULL`,
      [this.workspace, this.rowKey(key)],
    );
  }

  /**
   * Every grant not revoked, expired ones included, in the order they were added (then by key).
   */
  async list(): Promise<Grant[]> {
    const rows = await this.query<GrantRow>(
      'read',
      'list the session grants',
      `SELECT digest, body FROM claw_grants WHERE workspace = $1 AND revoked_at IS NULL
       ORDER BY created_at, digest`,
      [this.workspace],
    );
    return rows.map((row) => this.grantOf(row));
  }

  /** The row's key for `key`: this instance's path replaced by the workspace id, when named. */
  private rowKey(key: string): string {
    const parts = keyParts(key);
    if (parts?.[1] !== this.workDir) return key;
    const [sessionId, , toolName, digest] = parts;
    return grantKey({ sessionId, workDir: this.workspace, toolName, digest });
  }

  /** The grant a row holds, as this instance sees it. */
  private grantOf(row: GrantRow): Grant {
    const { body } = row;
    // The row's key is its `digest` (opaque keys included): the body's other fields are checked
    // as a grant file's are, with the key they make.
    const stored = readGrant(
      isRecord(body) ? { ...body, key: grantKey(body as unknown as GrantKeyParts) } : body,
    );
    if (typeof stored === 'string') {
      throw new GrantStoreError(
        `The session grant ${row.digest} in ${this.location} is damaged: its body ${stored}. ` +
        'claw did not use it. Revoke it (set its revoked_at) or delete the row; the call is then ' +
        'asked about again.',
        { code: 'grant_store_corrupt', file: this.location },
      );
    }
    const parts = keyParts(row.digest);
    if (parts !== undefined && parts[1] === this.workspace) {
      const [sessionId, , toolName, digest] = parts;
      const own = { sessionId, workDir: this.workDir, toolName, digest };
      return { ...stored, ...own, key: grantKey(own) };
    }
    return { ...stored, key: row.digest };
  }

  private async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    access: 'read' | 'write',
    action: string,
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    try {
      return (await this.pool.query<Row>(text, values)).rows;
    } catch (error) {
      throw new GrantStoreError(
        `Could not ${action} in ${this.location}: ${errorMessage(error)}. PostgreSQL could not be ` +
        'reached or refused the query: check that the database is up and reachable, then retry.',
        {
          code: access === 'read' ? 'grant_store_read_failed' : 'grant_store_write_failed',
          file: this.location,
          cause: error,
        },
      );
    }
  }
}
