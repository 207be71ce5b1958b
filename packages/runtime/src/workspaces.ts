import { realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  FileSessionManager,
  type SessionLease,
  type SessionListOptions,
  type SessionSummary,
} from '@claw/session-store';

/** Where runtimes get their sessions (RT-6): any `SessionStore` fits, or `WorkspaceSessions`. */
export interface SessionSource {
  /** Opens and holds the session until the lease is released (see `SessionManager.open`). */
  open(id: string, options: { workDir: string }): Promise<SessionLease>;
  /**
   * The sessions a workspace has, most recently changed first; those that cannot be read go to
   * `options.onUnreadable`.
   */
  list(workDir: string, options?: SessionListOptions): Promise<SessionSummary[]>;
}

/**
 * Sessions on disk under each workspace's `.claw/sessions/` (SES-2): one `FileSessionManager`
 * per workspace, made when a session of it is first opened and closed when its last session is
 * released, so nothing is cached for a workspace nobody uses.
 */
export class WorkspaceSessions implements SessionSource {
  private readonly managers = new Map<string, { manager: FileSessionManager; leases: number }>();

  async open(id: string, options: { workDir: string }): Promise<SessionLease> {
    const root = path.resolve(options.workDir);
    let entry = this.managers.get(root);
    if (entry === undefined) {
      entry = { manager: new FileSessionManager({ workDir: root }), leases: 0 };
      this.managers.set(root, entry);
    }
    const current = entry;
    current.leases += 1;
    let lease: SessionLease;
    try {
      lease = await current.manager.open(id, { workDir: root });
    } catch (error) {
      await this.drop(root, current);
      throw error;
    }
    let released = false;
    return {
      session: lease.session,
      release: async () => {
        if (released) return;
        released = true;
        try {
          await lease.release();
        } finally {
          await this.drop(root, current);
        }
      },
    };
  }

  async list(workDir: string, options: SessionListOptions = {}): Promise<SessionSummary[]> {
    const root = path.resolve(workDir);
    const open = this.managers.get(root);
    if (open !== undefined) return open.manager.list(options);
    const manager = new FileSessionManager({ workDir: root });
    try {
      return await manager.list(options);
    } finally {
      await manager.close();
    }
  }

  /** How many workspaces have a manager now (for tests: nothing is kept that nobody uses). */
  get openWorkspaces(): number {
    return this.managers.size;
  }

  private async drop(root: string, entry: { manager: FileSessionManager; leases: number }) {
    entry.leases -= 1;
    if (entry.leases > 0 || this.managers.get(root) !== entry) return;
    this.managers.delete(root);
    await entry.manager.close();
  }
}

/**
 * Keeps one value per real workspace folder (symlinks followed, so two spellings of one folder
 * share it) while something uses it, and forgets it after.
 */
export class WorkspaceShared<T> {
  private readonly entries = new Map<string, { value: Promise<T>; users: number }>();

  constructor(
    private readonly make: (workDir: string) => T | Promise<T>,
    /** Called with a value once nothing uses it any more. */
    private readonly dispose: (value: T) => void | Promise<void> = () => undefined,
  ) {}

  /** The workspace's value and the function that gives this use of it up (call it once). */
  async acquire(workDir: string): Promise<{ value: T; release: () => void }> {
    const root = await realpath(workDir).catch(() => path.resolve(workDir));
    let entry = this.entries.get(root);
    if (entry === undefined) {
      entry = { value: Promise.resolve().then(() => this.make(root)), users: 0 };
      this.entries.set(root, entry);
    }
    const current = entry;
    current.users += 1;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      current.users -= 1;
      if (current.users === 0 && this.entries.get(root) === current) {
        this.entries.delete(root);
        void current.value.then(this.dispose).catch(() => undefined);
      }
    };
    try {
      return { value: await current.value, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** How many workspaces have a value now. */
  get size(): number {
    return this.entries.size;
  }
}
