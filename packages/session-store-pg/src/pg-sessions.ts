import { stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '@claw/core';
import {
  SessionStore,
  type SessionLease,
  type SessionSummary,
} from '@claw/session-store';
import { PgSessionError } from './errors.js';
import type { PgSessionLog } from './pg-session-log.js';

/**
 * The session is bound to a workspace this instance cannot reach (SCALE-5,
 * `workspace_unavailable`): it is refused here rather than run in the wrong folder.
 */
export class WorkspaceUnavailableError extends PgSessionError {
  declare readonly code: 'workspace_unavailable';
  readonly sessionId: string;
  readonly workDir: string;

  constructor(options: { sessionId: string; workDir: string; cause?: unknown }) {
    super(
      `Session ${JSON.stringify(options.sessionId)} works in ${options.workDir}, which this ` +
      'claw instance cannot reach. Mount the shared workspace folder at the same path on every ' +
      'instance, or open the session through an instance that has it.',
      { code: 'workspace_unavailable', cause: options.cause, userError: true },
    );
    this.sessionId = options.sessionId;
    this.workDir = options.workDir;
  }
}

/**
 * Sessions of every workspace in one PostgreSQL database, for a claw-server instance: what the
 * runtime's `SessionSource` asks for (`open`, `list` per workspace), on a {@link PgSessionLog}.
 * A session is opened only where its workspace folder exists (SCALE-5).
 */
export class PgSessions {
  readonly log: PgSessionLog;
  private readonly store: SessionStore;

  constructor(options: { log: PgSessionLog }) {
    this.log = options.log;
    this.store = new SessionStore({ log: options.log });
  }

  /**
   * Opens the session (taking its lease) in `workDir`.
   *
   * @throws WorkspaceUnavailableError when `workDir` is not a folder on this machine.
   * @throws SessionLockedError when another instance holds the session.
   */
  async open(id: string, options: { workDir: string }): Promise<SessionLease> {
    const workDir = path.resolve(options.workDir);
    try {
      const info = await stat(workDir);
      if (!info.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    } catch (error) {
      const cause = errnoCode(error) ?? error;
      throw new WorkspaceUnavailableError({ sessionId: id, workDir, cause });
    }
    return this.store.open(id, { workDir });
  }

  /** The sessions that work in `workDir`, most recently changed first. */
  async list(workDir: string): Promise<SessionSummary[]> {
    const root = path.resolve(workDir);
    return (await this.store.list()).filter((summary) => summary.workDir === root);
  }

  /** Stores what is open, gives up every lease and closes the log (and its pool). */
  async close(): Promise<void> {
    try {
      await this.store.close();
    } finally {
      await this.log.close();
    }
  }
}
