import { stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, settlesWithin } from '@claw/core';
import {
  SessionStore,
  type SessionLease,
  type SessionListOptions,
  type SessionSummary,
} from '@claw/session-store';
import { PgAuditLog } from './pg-audit-log.js';
import { PgGrantStore } from './pg-grant-store.js';
import type { PgSessionLog } from './pg-session-log.js';
import { WorkspaceUnavailableError, workspaceIdOf } from './workspace-id.js';

/**
 * Sessions of every workspace in one PostgreSQL database, for a claw-server instance: what the
 * runtime's `SessionSource` asks for (`open`, `list` per workspace), on a {@link PgSessionLog}.
 * Sessions, grants and the audit log are bound to a workspace's logical id (SCALE-5,
 * {@link workspaceIdOf}), the same on every instance whatever the path it is mounted at; a
 * session is opened only in a folder that is its workspace.
 */
export class PgSessions {
  readonly log: PgSessionLog;
  private readonly store: SessionStore;
  private readonly ids = new Map<string, Promise<string>>();

  constructor(options: { log: PgSessionLog }) {
    this.log = options.log;
    this.store = new SessionStore({ log: options.log });
  }

  /**
   * The logical id of the workspace at `workDir` (read once per folder).
   *
   * @throws WorkspaceUnavailableError when `workDir` is not a folder on this machine;
   *   PgSessionError `workspace_unavailable` when its id file is damaged.
   */
  workspaceOf(workDir: string, sessionId = ''): Promise<string> {
    const root = path.resolve(workDir);
    let id = this.ids.get(root);
    if (id === undefined) {
      id = (async () => {
        try {
          const info = await stat(root);
          if (!info.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
        } catch (error) {
          const cause = errnoCode(error) ?? error;
          throw new WorkspaceUnavailableError({ sessionId, workDir: root, cause });
        }
        return workspaceIdOf(root);
      })();
      this.ids.set(root, id);
      // A failure is not kept: the folder may be mounted later.
      id.catch(() => this.ids.delete(root));
    }
    return id;
  }

  /**
   * Opens the session (taking its lease) in `workDir`, and binds a new session to that workspace
   * in the claim of the lease itself (SCALE-5): a session bound to another workspace is never
   * claimed here.
   *
   * @throws WorkspaceUnavailableError when `workDir` is not a folder on this machine, or is not
   *   the session's workspace.
   * @throws SessionLockedError when another instance holds the session.
   */
  async open(id: string, options: { workDir: string }): Promise<SessionLease> {
    const workDir = path.resolve(options.workDir);
    const workspace = await this.workspaceOf(workDir, id);
    const withdraw = this.log.bindOnClaim(id, { id: workspace, workDir });
    let lease: SessionLease;
    try {
      lease = await this.store.open(id, { workDir });
    } finally {
      withdraw();
    }
    // Open here already (claimed by an earlier open): bound as that claim found it.
    const bound = this.log.leaseOf(id)?.workspace;
    if (bound !== workspace) {
      await lease.release();
      throw new WorkspaceUnavailableError({
        sessionId: id,
        workDir,
        ...(bound === undefined ? {} : { workspace: bound }),
      });
    }
    return lease;
  }

  /**
   * The sessions of the workspace at `workDir`, most recently changed first; those open here as
   * they are in memory. Only that workspace's rows are read. Those that cannot be read go to
   * `options.onUnreadable`.
   */
  async list(workDir: string, options: SessionListOptions = {}): Promise<SessionSummary[]> {
    const root = path.resolve(workDir);
    const workspace = await this.workspaceOf(root);
    return this.store.list({
      ...options,
      page: (after) =>
        this.log.list({
          workspace: { id: workspace, workDir: root },
          ...(after === undefined ? {} : { after }),
        }),
      // A session open here is bound to the workspace its lease's claim found (`bindOnClaim`).
      isListed: (id) => this.log.leaseOf(id)?.workspace === workspace,
    });
  }

  /** The grants of the workspace at `workDir`, in the database (SCALE-4). */
  async grantStore(workDir: string): Promise<PgGrantStore> {
    const workspace = await this.workspaceOf(workDir);
    return new PgGrantStore({ pool: this.log.pool, workspace, workDir: path.resolve(workDir) });
  }

  /** The audit log of the workspace at `workDir`, in the database; rows name this instance. */
  async auditLog(workDir: string): Promise<PgAuditLog> {
    const workspace = await this.workspaceOf(workDir);
    return new PgAuditLog({ pool: this.log.pool, instanceId: this.log.instanceId, workspace });
  }

  /**
   * Stores what is open, gives up every lease and closes the log (and its pool). Bounded
   * (LIFE-2): storing gets the log's `closeTimeoutMs`, then closing the log gets it again
   * (dropping the connections of writes still waiting on a database that stopped answering).
   *
   * @throws the first failure (a write that failed, `store_unavailable` from the log).
   */
  async close(): Promise<void> {
    const stored = this.store.close();
    let failure: unknown;
    const settled = stored.catch((error: unknown) => {
      failure = error;
    });
    try {
      await settlesWithin(settled, this.log.closeTimeoutMs);
    } finally {
      await this.log.close();
    }
    // Writes that waited are failing now that their connections are gone.
    await settlesWithin(settled, 1000);
    if (failure !== undefined) throw failure as Error;
  }
}
