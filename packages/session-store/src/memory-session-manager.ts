import { byRecency, LiveSessions } from './live-sessions.js';
import type {
  GetOrCreateOptions,
  PersistentSession,
  SessionManager,
  SessionSummary,
} from './session-manager.js';
import { assertSessionId } from './session-id.js';
import { newSessionState } from './session-state.js';
import { memoryWriter } from './session-writer.js';
import { StoredSession } from './stored-session.js';

/** Options of {@link MemorySessionManager}. */
export interface MemorySessionManagerOptions {
  /** The clock for createdAt and updatedAt. Default: the current time. */
  now?: () => Date;
}

/**
 * Sessions in memory only (SES-6): the same sessions as `FileSessionManager` (repair, tool
 * journal, totals kept across `clear`), but nothing ever touches disk and nothing survives the
 * process. For tests and library users.
 */
export class MemorySessionManager implements SessionManager {
  private readonly live = new LiveSessions();
  private readonly now: () => Date;

  constructor(options: MemorySessionManagerOptions = {}) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The session with this id, new (and empty) on first use.
   *
   * @throws SessionStoreError `invalid_session_id`, `invalid_work_dir`,
   * `session_workdir_conflict`.
   */
  getOrCreate(id: string, options: GetOrCreateOptions): Promise<PersistentSession> {
    return this.live.getOrOpen(id, options.workDir, async () => {
      const now = this.now().toISOString();
      const state = newSessionState({ id, workDir: options.workDir, now });
      return new StoredSession({ state, writer: () => memoryWriter, now: this.now });
    });
  }

  async list(): Promise<SessionSummary[]> {
    const sessions = await this.live.all();
    return sessions.map((session) => session.summary()).sort(byRecency);
  }

  /** @throws SessionStoreError `invalid_session_id`. */
  async clear(id: string): Promise<void> {
    assertSessionId(id);
    await (await this.live.peek(id))?.clear();
  }

  /** @throws SessionStoreError `invalid_session_id`. */
  async delete(id: string): Promise<void> {
    assertSessionId(id);
    await (await this.live.take(id))?.delete();
  }
}
