import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { errorMessage, settlesWithin, type TaskToolProgress } from '@claw/core';
import {
  SessionLockedError,
  SessionLogError,
  assertSessionId,
  checkAppendSeqs,
  recordsToStore,
  summaryOf,
  type AppendResult,
  type LogRecord,
  type RelayReply,
  type RelayRequest,
  type OwnerInbox,
  type ProgressChannel,
  type SessionLockHolder,
  type SessionLog,
  type SessionLogLock,
  type SessionOwner,
  type SessionPage,
  type SessionRelay,
  type SessionReplication,
  type SessionSnapshot,
  type SessionSummary,
  type StoredLog,
  type UnreadableSession,
} from '@claw/session-store';
import pg from 'pg';
import {
  SocketSet,
  checkOut,
  connectionSettingsOf,
  connectionSettingsOfPool,
  poolConfigOf,
  storeUnavailable,
  unavailableReason,
  type PgConnectionOptions,
  type PgConnectionSettings,
} from './connection.js';
import { PgSessionError, SessionLeaseLostError, type LeaseLossReason } from './errors.js';
import { LeaseKeeper, defaultSetTimer, type SetTimer } from './lease-keeper.js';
import { migrate } from './migrations.js';
import { PgRelay, changesChannel } from './relay.js';
import { parseStored, readError, recordsOf, type ChangeRow } from './rows.js';
import { WorkspaceUnavailableError } from './workspace-id.js';
import { advanceSummary, summarize } from './summary.js';

/** Default length of a lease (SCALE-2): another instance may take the session over after it. */
export const defaultLeaseMs = 10_000;
/** Default time between two renewals of a lease. */
export const defaultRenewEveryMs = 3_000;

/** Records a compaction keeps before its snapshot, for readers a little behind (SCALE-4). */
export const keptAfterCompaction = 1000;

/** Default bound of `close` (LIFE-2): past it, connections not ended in time are dropped. */
export const defaultCloseTimeoutMs = 5_000;

/** Options of {@link PgSessionLog}. */
export interface PgSessionLogOptions {
  /**
   * The pool every query goes through. The log never ends it (see {@link PgSessionLog.open},
   * which makes one with the timeouts of {@link PgConnectionSettings}; a pool given here bounds
   * only the waits its own options bound).
   */
  pool: pg.Pool;
  /** This instance's id, in leases and audit rows. Default: a random UUID. */
  instanceId?: string;
  /** How long a lease lasts without renewal, in ms (database clock). Default 10 000. */
  leaseMs?: number;
  /** How often a held lease is renewed, in ms. Default 3 000. */
  renewEveryMs?: number;
  /** Timers for renewals and the self-fence (tests pass fake ones). Default: `setTimeout`. */
  setTimer?: SetTimer;
  /** Records after a snapshot before `append` says compaction is due. Default 1000. */
  compactAfterRecords?: number;
  /**
   * Called once when a lease held by this log is lost (SCALE-2): taken over by another instance,
   * or given up because renewals failed for half the lease. The owner must stop the session's
   * task and kill its tool processes; every later write to the session rejects with the error.
   */
  onLeaseLost?: (error: SessionLeaseLostError) => void;
  /**
   * How often readers of sessions another instance owns, and the owner's inbox, look at the rows
   * without a notification (the backstop of a lost NOTIFY), in ms. Default 1000.
   */
  pollMs?: number;
  /**
   * How long `close` may take, in ms (LIFE-2): giving up the leases, closing the LISTEN
   * connection and ending the pool share it; past it, the connections are dropped and `close`
   * rejects with `store_unavailable`. Default 5 000.
   */
  closeTimeoutMs?: number;
}

/** Options of {@link PgSessionLog.open}: those of the log, and how to connect. */
export interface PgSessionLogOpenOptions extends Omit<PgSessionLogOptions, 'pool'> {
  /** A `postgres://` URL; its own timeout parameters apply (see {@link PgSessionLog.open}). */
  connectionString: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** The waits every connection bounds (LIFE-2), over the URL's parameters and the defaults. */
  connection?: PgConnectionOptions;
  signal?: AbortSignal;
}

/** A workspace a claim binds a session to: its logical id, and its folder here (for errors). */
export interface WorkspaceClaim {
  id: string;
  workDir: string;
}

/** What `acquire` returns: the lease on one session. */
export interface PgSessionLease extends SessionLogLock {
  /** The epoch of this ownership: one more than the previous owner's (SCALE-3). */
  readonly epoch: number;
  /** True when a previous owner's lease had lapsed and this acquisition took the session over. */
  readonly tookOver: boolean;
  /** Resolves with the loss when the lease is lost (never resolves after a clean release). */
  readonly lost: Promise<SessionLeaseLostError>;
}

interface Held {
  token: string;
  epoch: number;
  /** The workspace the session was bound to when claimed. */
  workspace: string | undefined;
  keeper: LeaseKeeper;
  lost: SessionLeaseLostError | undefined;
  resolveLost: (error: SessionLeaseLostError) => void;
}

interface SessionRow {
  stored: boolean;
  summary: SessionSummary | null;
  last_seq: string;
  records_since_snapshot: number;
  owner: string | null;
  epoch: string;
  live: boolean;
  holder: StoredHolder | null;
}

/** The holder as a session row stores it: the lock holder and the instance. */
type StoredHolder = SessionLockHolder & { instance?: string };

const holderColumns = 'stored, summary, last_seq, records_since_snapshot, owner, epoch, holder, ' +
  'coalesce(lease_until > now(), false) AS live';

/**
 * Sessions in PostgreSQL (SCALE-1): the `SessionLog` seam on the `pg` client, shared by several
 * claw-server instances. A session row holds the lease (owner, epoch, `lease_until` on the
 * database clock, SCALE-2); changes live in `claw_changes` keyed by `(session_id, seq)` and are
 * replaced by a snapshot on `compact`. Every write checks, in its transaction, that the writer
 * still owns the session: a frozen former owner's late write is rejected with `lease_lost`.
 * Each commit sends a NOTIFY on {@link changesChannel} so that readers elsewhere wake up.
 */
export class PgSessionLog implements SessionLog, SessionReplication, OwnerInbox, ProgressChannel {
  readonly pool: pg.Pool;
  readonly instanceId: string;
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  /** The bound of `close`, in ms. */
  readonly closeTimeoutMs: number;
  /** The waits the pool's connections bound (all of them for a pool `open` made). */
  readonly connection: Readonly<Partial<PgConnectionSettings>>;
  private readonly setTimer: SetTimer;
  private readonly compactAfterRecords: number;
  private readonly onLeaseLost: ((error: SessionLeaseLostError) => void) | undefined;
  private readonly held = new Map<string, Held>();
  /** The hold behind each lease `acquire` returned, to fence writes made under a lease. */
  private readonly holdOfLease = new WeakMap<object, Held>();
  /** The workspaces claims bind sessions to (`bindOnClaim`). */
  private readonly claims = new Map<string, WorkspaceClaim>();
  /** Sessions whose lease this log lost and let go: their late writes are refused with it. */
  private readonly lostLeases = new Map<string, SessionLeaseLostError>();
  private readonly relay: PgRelay;
  private readonly startedAt = new Date().toISOString();
  private ownsPool = false;
  /** The sockets of the pool `open` made, dropped when closing takes too long. */
  private sockets: SocketSet | undefined;
  private closed = false;

  constructor(options: PgSessionLogOptions) {
    this.pool = options.pool;
    this.instanceId = options.instanceId ?? randomUUID();
    this.leaseMs = options.leaseMs ?? defaultLeaseMs;
    this.renewEveryMs = options.renewEveryMs ?? defaultRenewEveryMs;
    if (!(this.renewEveryMs > 0 && this.renewEveryMs < this.leaseMs / 2)) {
      throw new RangeError(`renewEveryMs (${this.renewEveryMs}) must be above 0 and below half of leaseMs (${this.leaseMs})`);
    }
    this.closeTimeoutMs = options.closeTimeoutMs ?? defaultCloseTimeoutMs;
    if (!(this.closeTimeoutMs > 0)) {
      throw new RangeError(`closeTimeoutMs (${this.closeTimeoutMs}) must be above 0`);
    }
    this.connection = Object.freeze(connectionSettingsOfPool(this.pool));
    this.setTimer = options.setTimer ?? defaultSetTimer;
    this.compactAfterRecords = options.compactAfterRecords ?? 1000;
    this.onLeaseLost = options.onLeaseLost;
    this.relay = new PgRelay({
      pool: this.pool,
      instanceId: this.instanceId,
      pollMs: options.pollMs ?? 1000,
      sendTimeoutMs: this.leaseMs + 5000,
      location: (id) => this.location(id),
      leaseOf: (id) => {
        const held = this.held.get(id);
        return held === undefined || held.lost !== undefined
          ? undefined
          : { token: held.token, epoch: held.epoch };
      },
      closeTimeoutMs: this.closeTimeoutMs,
    });
  }

  /**
   * Connects to `connectionString`, brings the schema up to date (`migrate`) and registers this
   * instance. `close()` then also ends the pool. Every connection bounds its waits (LIFE-2):
   * `connection` over the URL's own parameters (`connect_timeout`, `statement_timeout`,
   * `query_timeout`, `idle_in_transaction_session_timeout`, `keepalives`, `keepalives_idle`) over
   * {@link defaultConnectionSettings}.
   *
   * @throws PgSessionError `store_unavailable` when the database cannot be reached or does not
   *   answer in time, `store_migration_failed` when the schema cannot be brought up to date.
   * @throws RangeError when a timeout (given or in the URL) is not a whole number above 0.
   */
  static async open(options: PgSessionLogOpenOptions): Promise<PgSessionLog> {
    const { connectionString: given, poolSize, connection, signal, ...rest } = options;
    const instanceId = rest.instanceId ?? randomUUID();
    const { settings, connectionString } = connectionSettingsOf(given, connection);
    const sockets = new SocketSet();
    // Each connection names its instance (pg_stat_activity, and triggers that audit writers).
    const pool = new pg.Pool({
      connectionString,
      max: poolSize ?? 10,
      application_name: `claw ${instanceId}`.slice(0, 63),
      ...poolConfigOf(settings),
      stream: sockets.stream,
    });
    // A dropped idle connection is reported here; the next query takes a fresh one.
    pool.on('error', () => undefined);
    // Every connection always has a listener for its errors, also in the moment the pool hands
    // it over (a PostgreSQL restart's "terminating connection" then would be an unhandled error
    // that ends the process): the query that uses it fails instead (LIFE-2).
    pool.on('connect', (client) => client.on('error', () => undefined));
    try {
      await migrate(pool, signal === undefined ? {} : { signal });
      const log = new PgSessionLog({ ...rest, instanceId, pool });
      log.ownsPool = true;
      log.sockets = sockets;
      await log.register();
      return log;
    } catch (error) {
      if (!(await settlesWithin(pool.end(), settings.connectTimeoutMs))) sockets.destroyAll();
      throw storeUnavailable(error, 'opening the session store', settings) ?? error;
    }
  }

  /**
   * Gives up every lease this log holds and, when `open` made the pool, ends it. Idempotent.
   * Bounded (LIFE-2): every step shares `closeTimeoutMs`; past it, or once a step failed, the
   * connections are dropped (leases not given up lapse on their own) and it rejects.
   *
   * @throws PgSessionError `store_unavailable` naming the steps PostgreSQL did not answer; the
   *   log is closed all the same.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const deadline = Date.now() + this.closeTimeoutMs;
    const remaining = () => Math.max(0, deadline - Date.now());
    const failed: string[] = [];
    let firstFailure: unknown;
    const step = async (name: string, work: Promise<unknown>): Promise<void> => {
      let failure: unknown;
      const settled = work.then(() => undefined, (error: unknown) => {
        failure = error;
      });
      if (!(await settlesWithin(settled, remaining()))) {
        failed.push(`${name} (no answer within ${this.closeTimeoutMs} ms)`);
      } else if (failure !== undefined) {
        failed.push(`${name} (${unavailableReason(failure, this.connection) ?? errorMessage(failure)})`);
        firstFailure ??= failure;
      }
    };
    const leases = [...this.held.entries()];
    this.held.clear();
    for (const [, held] of leases) held.keeper.stop();
    await step('giving up its leases', Promise.all(
      leases.map(([id, held]) => releaseLease(this.pool, id, held.token)),
    ));
    await step('closing its LISTEN connection', this.relay.close({ timeoutMs: remaining() })
      .then((ended) => {
        if (!ended) throw new Error('dropped');
      }));
    if (failed.length === 0) {
      await step('unregistering the instance', this.pool.query(
        'DELETE FROM claw_instances WHERE id = $1',
        [this.instanceId],
      ));
    }
    if (this.ownsPool) {
      const ended = this.pool.end();
      await step('ending its connections', ended);
      if (failed.length > 0) {
        this.sockets?.destroyAll();
        await settlesWithin(ended, 1000);
      }
    }
    if (failed.length > 0) {
      throw new PgSessionError(
        `PostgreSQL did not answer while claw closed its session store: ${failed.join('; ')}. ` +
        (this.ownsPool ? 'Its connections were dropped. ' : '') +
        'The sessions it held are free again once their leases lapse (within ' +
        `${this.leaseMs} ms); another instance may take them over then.`,
        { code: 'store_unavailable', cause: firstFailure },
      );
    }
  }

  location(id: string): string {
    assertSessionId(id);
    return `PostgreSQL session ${JSON.stringify(id)}`;
  }

  /**
   * The lease this log holds on `id`, if any: its epoch, whether it was lost, and the workspace
   * the session was bound to when it was claimed (undefined: none).
   */
  leaseOf(
    id: string,
  ): { epoch: number; lost: boolean; workspace: string | undefined } | undefined {
    const held = this.held.get(id);
    if (held === undefined) return undefined;
    return { epoch: held.epoch, lost: held.lost !== undefined, workspace: held.workspace };
  }

  private async register(): Promise<void> {
    await this.pool.query(
      `INSERT INTO claw_instances (id, host, pid) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET seen_at = now()`,
      [this.instanceId, os.hostname(), process.pid],
    );
  }

  /**
   * Until the returned function is called, this log's claims of `id` (`acquire`, e.g. through a
   * `SessionStore`) bind the session to `workspace` in the claim statement itself, when it is
   * bound to none yet, and are refused with WorkspaceUnavailableError when it is bound to another
   * one (SCALE-5). The claimed lease then names the session's workspace (`leaseOf`).
   */
  bindOnClaim(id: string, workspace: WorkspaceClaim): () => void {
    const claim = { ...workspace };
    this.claims.set(id, claim);
    return () => {
      if (this.claims.get(id) === claim) this.claims.delete(id);
    };
  }

  /**
   * Takes the session's lease (SCALE-2): a new session, one nobody holds, or one whose owner's
   * lease lapsed (then with the next epoch: a takeover).
   *
   * @throws SessionLockedError when another owner's lease is live.
   * @throws WorkspaceUnavailableError when a workspace is bound on claim (`bindOnClaim`) and the
   *   session belongs to another one; nothing is claimed.
   */
  async acquire(id: string): Promise<PgSessionLease> {
    const location = this.location(id);
    try {
      return await this.claim(id);
    } catch (error) {
      throw storeUnavailable(error, `taking the lease of ${location}`, this.connection) ?? error;
    }
  }

  private async claim(id: string): Promise<PgSessionLease> {
    const claim = this.claims.get(id);
    const token = randomUUID();
    const holder = {
      pid: process.pid,
      host: os.hostname(),
      startedAt: this.startedAt,
      instance: this.instanceId,
    };
    for (let attempt = 0; ; attempt += 1) {
      const claimed = await this.pool.query<{
        epoch: string;
        previous_owner: string | null;
        workspace: string | null;
      }>(
        `INSERT INTO claw_sessions (id, owner, owner_instance, holder, epoch, lease_until, workspace)
         VALUES ($1, $2, $3, $4, 1, now() + $5 * interval '1 millisecond', $6)
         ON CONFLICT (id) DO UPDATE SET
           previous_owner = claw_sessions.owner,
           owner = EXCLUDED.owner, owner_instance = EXCLUDED.owner_instance, holder = EXCLUDED.holder,
           epoch = claw_sessions.epoch + 1, lease_until = EXCLUDED.lease_until,
           workspace = coalesce(claw_sessions.workspace, EXCLUDED.workspace)
         WHERE (claw_sessions.owner IS NULL OR claw_sessions.lease_until <= now())
           AND (EXCLUDED.workspace IS NULL OR claw_sessions.workspace IS NULL
             OR claw_sessions.workspace = EXCLUDED.workspace)
         RETURNING epoch, previous_owner, workspace`,
        [id, token, this.instanceId, JSON.stringify(holder), this.leaseMs, claim?.id ?? null],
      );
      const row = claimed.rows[0];
      if (row !== undefined) {
        return this.hold(id, token, holder, {
          epoch: Number(row.epoch),
          tookOver: row.previous_owner !== null,
          workspace: row.workspace ?? undefined,
        });
      }
      const current = await this.pool.query<SessionRow & { workspace: string | null }>(
        `SELECT ${holderColumns}, workspace FROM claw_sessions WHERE id = $1`,
        [id],
      );
      const owner = current.rows[0];
      const bound = owner?.workspace ?? null;
      if (claim !== undefined && bound !== null && bound !== claim.id) {
        throw new WorkspaceUnavailableError({
          sessionId: id,
          workDir: claim.workDir,
          workspace: bound,
        });
      }
      // Released between the two statements: try again.
      if (owner === undefined || owner.owner === null || !owner.live) {
        if (attempt < 3) continue;
      }
      throw this.lockedError(id, owner?.holder ?? undefined);
    }
  }

  /** A renewal waits at most this long: the query timeout, and never past half the lease. */
  private get renewalTimeoutMs(): number {
    return Math.min(this.connection.queryTimeoutMs ?? Infinity, Math.floor(this.leaseMs / 2));
  }

  private lockedError(id: string, holder: StoredHolder | undefined): SessionLockedError {
    const who = holder === undefined
      ? 'another claw instance'
      : `claw instance ${holder.instance ?? '?'} (pid ${holder.pid} on ${holder.host}, started ${holder.startedAt})`;
    return new SessionLockedError(
      `Session ${JSON.stringify(id)} is in use by ${who}. Open it through that instance, ` +
      'wait until it is given up (or its lease lapses), or use another session id.',
      holder === undefined
        ? { sessionId: id }
        : {
            sessionId: id,
            holder: { pid: holder.pid, host: holder.host, startedAt: holder.startedAt },
          },
    );
  }

  private hold(
    id: string,
    token: string,
    holder: SessionLockHolder,
    claimed: { epoch: number; tookOver: boolean; workspace: string | undefined },
  ): PgSessionLease {
    const { epoch, tookOver, workspace } = claimed;
    let resolveLost!: (error: SessionLeaseLostError) => void;
    const lost = new Promise<SessionLeaseLostError>((resolve) => {
      resolveLost = resolve;
    });
    const held: Held = {
      token,
      epoch,
      workspace,
      lost: undefined,
      resolveLost,
      keeper: new LeaseKeeper({
        renewEveryMs: this.renewEveryMs,
        fenceAfterMs: this.leaseMs / 2,
        setTimer: this.setTimer,
        renew: async () => {
          try {
            const renewed = await this.pool.query({
              text: `UPDATE claw_sessions SET lease_until = now() + $3 * interval '1 millisecond'
                     WHERE id = $1 AND owner = $2 RETURNING 1`,
              values: [id, token, this.leaseMs],
              // An answer after half the lease is no use: the owner has fenced itself by then.
              query_timeout: this.renewalTimeoutMs,
            } as pg.QueryConfig);
            return renewed.rowCount === 1;
          } catch (error) {
            throw storeUnavailable(
              error,
              `renewing the lease of ${this.location(id)}`,
              { ...this.connection, queryTimeoutMs: this.renewalTimeoutMs },
            ) ?? error;
          }
        },
        lost: (reason, cause) => this.loseLease(id, held, reason, cause),
      }),
    };
    this.held.set(id, held);
    this.lostLeases.delete(id);
    held.keeper.start();
    const lease: PgSessionLease = {
      holder: { pid: holder.pid, host: holder.host, startedAt: holder.startedAt },
      epoch,
      tookOver,
      lost,
      release: async () => {
        if (this.held.get(id) !== held) return;
        this.held.delete(id);
        held.keeper.stop();
        if (held.lost !== undefined) {
          this.lostLeases.set(id, held.lost);
          return;
        }
        await releaseLease(this.pool, id, token);
      },
    };
    this.holdOfLease.set(lease, held);
    return lease;
  }

  private loseLease(
    id: string,
    held: Held,
    reason: LeaseLossReason,
    cause?: unknown,
  ): SessionLeaseLostError {
    if (held.lost !== undefined) return held.lost;
    const error = new SessionLeaseLostError({ sessionId: id, reason, cause });
    held.lost = error;
    held.keeper.stop();
    held.resolveLost(error);
    this.onLeaseLost?.(error);
    return error;
  }

  async load(id: string): Promise<StoredLog | undefined> {
    const location = this.location(id);
    const client = await this.connect(location, 'session_read_failed');
    let broken = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const snapshotRow = await client.query<{ seq: string; body: string }>(
        'SELECT seq, body FROM claw_snapshots WHERE session_id = $1',
        [id],
      );
      const stored = snapshotRow.rows[0];
      if (stored === undefined) {
        await client.query('COMMIT');
        return undefined;
      }
      const changes = await client.query<ChangeRow>(
        'SELECT seq, at, change FROM claw_changes WHERE session_id = $1 AND seq > $2 ORDER BY seq',
        [id, stored.seq],
      );
      await client.query('COMMIT');
      return {
        snapshot: parseStored<SessionSnapshot>(stored.body, location, 0),
        records: recordsOf(changes.rows, location),
        needsCompaction: false,
      };
    } catch (error) {
      // The connection is dropped, not rolled back: it may be one that no longer answers.
      broken = true;
      throw readError(error, location, this.connection);
    } finally {
      client.release(broken);
    }
  }

  private async connect(
    location: string,
    code: 'session_read_failed' | 'session_write_failed',
  ): Promise<pg.PoolClient> {
    try {
      return await checkOut(this.pool);
    } catch (error) {
      const doing = `${code === 'session_read_failed' ? 'reading' : 'writing to'} ${location}`;
      const unavailable = storeUnavailable(error, doing, this.connection);
      throw new SessionLogError(
        unavailable?.message ??
        `Could not reach PostgreSQL for ${location}: ${errorMessage(error)}. Check that the database is up and reachable, then retry.`,
        { code, location, cause: unavailable ?? error },
      );
    }
  }

  /**
   * Runs `work` in a transaction on the session's row, locked, after checking that this log may
   * write to it: the lease it holds is still its own (else `lease_lost`), or nobody else holds a
   * live lease (else `session_locked`).
   */
  private async write<T>(
    id: string,
    options: { sync: boolean; create: boolean; lock?: SessionLogLock | undefined },
    work: (client: pg.PoolClient, row: SessionRow | undefined, location: string) => Promise<T>,
  ): Promise<T> {
    const location = this.location(id);
    const held = this.held.get(id);
    if (options.lock !== undefined) {
      // Made under a lease: only while that lease is the one held. A writer left over from an
      // earlier hold in this process (lost, then the session taken again here) would otherwise
      // pass the check below with the new hold's token and write over its changes.
      const own = this.holdOfLease.get(options.lock);
      if (own !== held) {
        throw own?.lost ?? new SessionLeaseLostError({ sessionId: id, reason: 'taken_over' });
      }
    }
    const lost = held?.lost ?? (held === undefined ? this.lostLeases.get(id) : undefined);
    if (lost !== undefined) throw lost;
    const client = await this.connect(location, 'session_write_failed');
    let broken = false;
    try {
      // A write the caller does not wait to be durable skips the WAL flush; the order still holds.
      // (One round trip: a simple query may hold both statements.)
      await client.query(options.sync ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit = off');
      const current = await client.query<SessionRow>(
        `SELECT ${holderColumns} FROM claw_sessions WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const row = current.rows[0];
      if (held !== undefined) {
        if (row?.owner !== held.token || Number(row.epoch) !== held.epoch) {
          throw this.loseLease(id, held, 'taken_over');
        }
      } else if (row !== undefined && row.owner !== null && row.live) {
        throw this.lockedError(id, row.holder ?? undefined);
      }
      const result = await work(client, row, location);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = !(
        error instanceof SessionLogError ||
        error instanceof SessionLockedError ||
        error instanceof SessionLeaseLostError
      );
      if (!broken) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      // A broken connection is dropped, not rolled back: it may be one that no longer answers
      // (its ROLLBACK would wait as long again); the server rolls back what it leaves.
      const unavailable = storeUnavailable(error, `writing to ${location}`, this.connection);
      throw new SessionLogError(
        unavailable === undefined
          ? `Could not write to ${location}: ${errorMessage(error)}. Check that PostgreSQL is reachable; the session is written again from memory on its next change.`
          : `${unavailable.message} The session is written again from memory on its next change.`,
        { code: 'session_write_failed', location, cause: unavailable ?? error },
      );
    } finally {
      client.release(broken);
    }
  }

  async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; lock?: SessionLogLock },
  ): Promise<AppendResult> {
    const { sync, lock } = options;
    return this.write(id, { sync, create: false, lock }, async (client, row, location) => {
      if (row === undefined || !row.stored) {
        throw new SessionLogError(`${location} does not exist: write a snapshot first.`, {
          code: 'session_missing',
          location,
        });
      }
      checkAppendSeqs(records, Number(row.last_seq), location);
      const last = records.at(-1)?.seq;
      if (last === undefined) return { compactionDue: false };
      // The summary `list` shows goes along (a row stored before summaries gets one at the
      // next compaction).
      const advanced = row.summary === null ? undefined : advanceSummary(row.summary, records);
      const summary = advanced === undefined ? null : JSON.stringify(advanced);
      // The records, the session row and the wake-up of readers elsewhere: one statement.
      const updated = await client.query<{ records_since_snapshot: number }>(
        `WITH added AS (
           INSERT INTO claw_changes (session_id, seq, at, change)
           SELECT $1, seq, at, change FROM unnest($2::bigint[], $3::text[], $4::text[]) AS r (seq, at, change)
         ), session AS (
           UPDATE claw_sessions SET last_seq = $5, records_since_snapshot = records_since_snapshot + $6,
             updated_at = now(), summary = $7
           WHERE id = $1 RETURNING records_since_snapshot
         )
         SELECT records_since_snapshot, pg_notify($8, $9) FROM session`,
        [
          id,
          records.map((record) => record.seq),
          records.map((record) => record.at),
          records.map((record) => record.encoded ?? JSON.stringify(record.change)),
          last,
          records.length,
          summary,
          changesChannel,
          JSON.stringify([id, last]),
        ],
      );
      const sinceSnapshot = updated.rows[0]?.records_since_snapshot ?? 0;
      return { compactionDue: sinceSnapshot >= this.compactAfterRecords };
    });
  }

  async compact(
    id: string,
    snapshot: SessionSnapshot,
    options: { records?: readonly LogRecord[]; lock?: SessionLogLock } = {},
  ): Promise<void> {
    await this.write(id, { sync: true, create: true, lock: options.lock }, async (client, row) => {
      await client.query(
        `INSERT INTO claw_sessions (id, stored, last_seq, records_since_snapshot, summary) VALUES ($1, true, $2, 0, $3)
         ON CONFLICT (id) DO UPDATE SET stored = true, last_seq = $2, records_since_snapshot = 0,
           summary = $3, updated_at = now()`,
        [id, snapshot.seq, JSON.stringify(summaryOf({ snapshot, records: [] }))],
      );
      // The changes the snapshot holds that no row has (a failed append's, and those made since)
      // become rows with it, so that readers following the rows get them and their events
      // (SCALE-4). After the session row, which they refer to; the trim below keeps as many of
      // them as of any records before a snapshot.
      const rows = recordsToStore(options.records ?? [], {
        lastSeq: Number(row?.last_seq ?? 0),
        snapshotSeq: snapshot.seq,
      });
      if (rows.length > 0) {
        // A failed append may in fact have committed: `last_seq` then says so, and a row
        // already there is kept as it is.
        await client.query(
          `INSERT INTO claw_changes (session_id, seq, at, change)
           SELECT $1, seq, at, change FROM unnest($2::bigint[], $3::text[], $4::text[]) AS r (seq, at, change)
           ON CONFLICT DO NOTHING`,
          [
            id,
            rows.map((record) => record.seq),
            rows.map((record) => record.at),
            rows.map((record) => record.encoded ?? JSON.stringify(record.change)),
          ],
        );
      }
      // Some records before the snapshot stay for readers a little behind; loads skip them.
      await client.query(
        'DELETE FROM claw_changes WHERE session_id = $1 AND (seq <= $2 OR seq > $3)',
        [id, snapshot.seq - keptAfterCompaction, snapshot.seq],
      );
      await client.query(
        `INSERT INTO claw_snapshots (session_id, seq, body) VALUES ($1, $2, $3)
         ON CONFLICT (session_id) DO UPDATE SET seq = $2, body = $3`,
        [id, snapshot.seq, JSON.stringify(snapshot)],
      );
      await client.query('SELECT pg_notify($1, $2)', [changesChannel, JSON.stringify([id, snapshot.seq])]);
    });
  }

  async remove(id: string): Promise<void> {
    await this.write(id, { sync: true, create: false }, async (client, row) => {
      if (row === undefined) return;
      await client.query('DELETE FROM claw_changes WHERE session_id = $1', [id]);
      await client.query('DELETE FROM claw_snapshots WHERE session_id = $1', [id]);
      // The row carries the lease while someone holds it; otherwise nothing is left.
      await client.query(
        'UPDATE claw_sessions SET stored = false, last_seq = 0, records_since_snapshot = 0, summary = NULL WHERE id = $1',
        [id],
      );
      await client.query('DELETE FROM claw_sessions WHERE id = $1 AND owner IS NULL', [id]);
    });
  }

  /** Its relay (SCALE-4): all three parts, each this log. */
  relayParts(): SessionRelay {
    return { replication: this, inbox: this, progress: this };
  }

  readSince(
    id: string,
    afterSeq: number,
    options?: { limit?: number },
  ): Promise<{ records: LogRecord[]; oldestSeq: number }> {
    return this.relay.readSince(id, afterSeq, options);
  }

  watch(id: string, wake: () => void): () => void {
    return this.relay.watch(id, wake);
  }

  ownerOf(id: string): Promise<SessionOwner | undefined> {
    return this.relay.ownerOf(id);
  }

  send(id: string, request: RelayRequest, options?: { timeoutMs?: number }): Promise<RelayReply> {
    return this.relay.send(id, request, options);
  }

  serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void {
    return this.relay.serve(id, handle);
  }

  /** A NOTIFY carrying the report, at most one a tool call every second (`progressEveryMs`). */
  publishProgress(id: string, progress: TaskToolProgress): void {
    this.relay.publishProgress(id, progress);
  }

  onProgress(id: string, listener: (progress: TaskToolProgress) => void): () => void {
    return this.relay.onProgress(id, listener);
  }

  /**
   * The stored sessions, a page at a time, in the order of their ids. With `workspace`, only
   * those of that workspace (SCALE-5): bound to its id, or not bound yet (stored before
   * workspace ids) and last working in its folder here (`workDir`, resolved).
   */
  async list(
    options: { limit?: number; after?: string; workspace?: { id: string; workDir: string } } = {},
  ): Promise<SessionPage> {
    const limit = Math.max(1, options.limit ?? 100);
    const { workspace } = options;
    // "C" collation: the order of comparing the ids as strings, whatever the database's locale.
    const rows = await this.pool.query<{
      id: string;
      summary: SessionSummary | null;
      workspace: string | null;
    }>(
      `SELECT id, summary, workspace FROM claw_sessions
       WHERE stored AND ($1::text IS NULL OR id COLLATE "C" > $1::text COLLATE "C")
         AND ($3::text IS NULL OR workspace = $3 OR (workspace IS NULL
           AND (summary IS NULL OR summary->>'workDir' = $4)))
       ORDER BY id COLLATE "C" LIMIT $2`,
      [options.after ?? null, limit + 1, workspace?.id ?? null, workspace?.workDir ?? null],
    ).catch((error: unknown) => {
      throw storeUnavailable(error, 'listing the stored sessions', this.connection) ?? error;
    });
    const ids = rows.rows.map((row) => row.id);
    const page = rows.rows.slice(0, limit);
    const sessions = [];
    const unreadable: UnreadableSession[] = [];
    // Each row keeps its summary; only a session stored before summaries is read whole.
    for (const { id, summary, workspace: bound } of page) {
      if (summary !== null) {
        sessions.push(summary);
        continue;
      }
      // A session that cannot be read is left out and named. Unbound to a workspace, its folder
      // cannot be known: it is named only in a listing of every workspace.
      const cannotRead = (reason: string) => {
        if (workspace === undefined || bound !== null) {
          unreadable.push({ id, location: this.location(id), reason });
        }
      };
      let stored: StoredLog | undefined;
      try {
        stored = await this.load(id);
      } catch (error) {
        // A database that is down is not a session that cannot be read.
        if (!(error instanceof SessionLogError && error.code === 'session_corrupt')) throw error;
        cannotRead(error.message);
      }
      if (stored === undefined) continue;
      let read: SessionSummary;
      try {
        read = summarize(stored.snapshot, stored.records);
      } catch (error) {
        // Records that do not fit the session: it is corrupt too.
        cannotRead(`${this.location(id)} is corrupt: ${errorMessage(error)}. claw leaves it as it is.`);
        continue;
      }
      if (workspace === undefined || bound !== null || read.workDir === workspace.workDir) {
        sessions.push(read);
      }
    }
    const result: SessionPage = unreadable.length > 0 ? { sessions, unreadable } : { sessions };
    const last = page.at(-1)?.id;
    if (ids.length > limit && last !== undefined) result.next = last;
    return result;
  }
}

/**
 * Gives a lease up; a session that was never stored leaves no row behind. Readers elsewhere are
 * woken: one of them may take the session over now.
 */
async function releaseLease(pool: pg.Pool, id: string, token: string): Promise<void> {
  // The release and the wake-up of readers elsewhere: one statement.
  await pool.query(
    `WITH dropped AS (
       DELETE FROM claw_sessions WHERE id = $1 AND owner = $2 AND NOT stored
     ), released AS (
       UPDATE claw_sessions SET owner = NULL, owner_instance = NULL, holder = NULL, lease_until = NULL
       WHERE id = $1 AND owner = $2 AND stored RETURNING last_seq
     )
     SELECT pg_notify($3, json_build_array($1::text, last_seq)::text) FROM released`,
    [id, token, changesChannel],
  );
}
