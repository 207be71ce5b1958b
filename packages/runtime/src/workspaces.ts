import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { SharedResources } from '@claw/core';
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
  private readonly managers = new SharedResources<string, FileSessionManager>({
    make: (root) => new FileSessionManager({ workDir: root }),
    dispose: (manager) => manager.close(),
  });

  async open(id: string, options: { workDir: string }): Promise<SessionLease> {
    const root = path.resolve(options.workDir);
    const manager = await this.managers.acquire(root);
    let lease: SessionLease;
    try {
      lease = await manager.value.open(id, { workDir: root });
    } catch (error) {
      await manager.release();
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
          await manager.release();
        }
      },
    };
  }

  async list(workDir: string, options: SessionListOptions = {}): Promise<SessionSummary[]> {
    const root = path.resolve(workDir);
    const open = this.managers.peek(root);
    if (open !== undefined) return (await open).list(options);
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
}

/**
 * Keeps one value per real workspace folder (symlinks followed, so two spellings of one folder
 * share it) while something uses it, and forgets it after.
 */
export class WorkspaceShared<T> {
  private readonly values: SharedResources<string, T>;

  constructor(
    make: (workDir: string) => T | Promise<T>,
    /** Called with a value once nothing uses it any more; its failure is not reported. */
    dispose: (value: T) => void | Promise<void> = () => undefined,
  ) {
    this.values = new SharedResources({ make, dispose: (value) => dispose(value) });
  }

  /** The workspace's value and the function that gives this use of it up (call it once). */
  async acquire(workDir: string): Promise<{ value: T; release: () => void }> {
    const root = await realpath(workDir).catch(() => path.resolve(workDir));
    const lease = await this.values.acquire(root);
    return {
      value: lease.value,
      release: () => {
        void lease.release().catch(() => undefined);
      },
    };
  }

  /** How many workspaces have a value now. */
  get size(): number {
    return this.values.size;
  }
}
