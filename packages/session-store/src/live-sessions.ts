import nodePath from 'node:path';
import { SessionStoreError } from './errors.js';
import type { SessionSummary } from './session-manager.js';
import { assertSessionId, assertWorkDir } from './session-id.js';
import type { StoredSession } from './stored-session.js';

/**
 * The live sessions of one manager: one object per id, shared by concurrent callers while it
 * loads. A load that fails is forgotten, so the next call reads the file again.
 */
export class LiveSessions {
  private readonly sessions = new Map<string, Promise<StoredSession>>();

  /**
   * The live session with this id, else the one `open` makes.
   *
   * @throws SessionStoreError `invalid_session_id`, `invalid_work_dir`, `session_workdir_conflict`;
   * whatever `open` throws.
   */
  async getOrOpen(
    id: string,
    workDir: string,
    open: () => Promise<StoredSession>,
  ): Promise<StoredSession> {
    assertSessionId(id);
    assertWorkDir(workDir);
    let pending = this.sessions.get(id);
    if (pending === undefined) {
      const opening = open();
      pending = opening;
      this.sessions.set(id, opening);
      void opening.catch(() => {
        if (this.sessions.get(id) === opening) this.sessions.delete(id);
      });
    }
    const session = await pending;
    if (nodePath.resolve(session.workDir) !== nodePath.resolve(workDir)) {
      throw new SessionStoreError(
        `Session ${JSON.stringify(id)} is open for the workspace ${session.workDir}, not ` +
        `${workDir}. Use another session id for another workspace.`,
        { code: 'session_workdir_conflict' },
      );
    }
    return session;
  }

  /** The live session with this id, if there is one (a failed load counts as none). */
  async peek(id: string): Promise<StoredSession | undefined> {
    return this.sessions.get(id)?.catch(() => undefined);
  }

  /** Like `peek`, and forgets the session. */
  async take(id: string): Promise<StoredSession | undefined> {
    const pending = this.sessions.get(id);
    this.sessions.delete(id);
    return pending?.catch(() => undefined);
  }

  /** Every live session. */
  async all(): Promise<StoredSession[]> {
    const settled = await Promise.all(
      [...this.sessions.values()].map((pending) => pending.catch(() => undefined)),
    );
    return settled.filter((session) => session !== undefined);
  }
}

/** Most recently changed first; ties by id. */
export function byRecency(a: SessionSummary, b: SessionSummary): number {
  const difference = Date.parse(b.updatedAt) - Date.parse(a.updatedAt);
  if (difference !== 0) return difference;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
