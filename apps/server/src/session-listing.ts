import path from 'node:path';
import type { UnreadableWelcomeSession, WelcomeSession } from '@claw/channel';
import { sessionTitle } from '@claw/core';
import type { LoadedSession, RuntimeFactory } from '@claw/runtime';
import type { UnreadableSession } from '@claw/session-store';

/** How long a listing of the stored sessions serves `welcome` (see `stored`). */
const storedTtlMs = 2000;

/** Options of {@link SessionListing}. */
export interface SessionListingOptions {
  factory: Pick<RuntimeFactory, 'listSessions'>;
  /** The workspace roots: `welcome` lists the sessions stored in them. */
  workspaces: readonly string[];
  /** Most sessions `welcome` lists (the most recently changed first). Default 200. */
  welcomeLimit?: number;
  /** See `ServerSessionsOptions.onUnreadable`. */
  onUnreadable?: (session: UnreadableSession, workDir: string) => void;
}

/**
 * What the server tells its clients of the sessions there are (`welcome`, the API's listing):
 * those stored in its workspaces with the live state of the loaded ones, the stored ones that
 * cannot be read, and new session ids that never take an existing one's.
 */
export class SessionListing {
  private readonly options: SessionListingOptions;
  /** Every session id known to exist, so that a new session never takes an old one's id. */
  private readonly knownIds = new Set<string>();
  private readonly counters = new Map<string, number>();
  private cached: { at: number; value: Promise<Map<string, WelcomeSession>> } | undefined;
  /** The stored sessions the last listing could not read, by workspace and session. */
  private unreadable = new Map<string, UnreadableWelcomeSession>();

  constructor(options: SessionListingOptions) {
    this.options = options;
  }

  /** `sessionId` exists (a client opened it): no new session takes its id. */
  known(sessionId: string): void {
    this.knownIds.add(sessionId);
  }

  /** The next `welcome` lists the sessions as the store has them now. */
  stale(): void {
    this.cached = undefined;
  }

  /**
   * The sessions `welcome` lists: those stored in the workspaces, most recently changed first,
   * with the live state and last seq of the `loaded` ones.
   */
  async welcome(loaded: readonly LoadedSession[]): Promise<WelcomeSession[]> {
    const sessions = new Map(await this.stored());
    for (const { sessionId, workDir, view } of loaded) {
      const key = keyOf(sessionId, workDir);
      const title = sessionTitle(view.history);
      sessions.set(key, {
        session_id: sessionId,
        state: view.state,
        last_seq: view.seq,
        updated_at: sessions.get(key)?.updated_at ?? new Date().toISOString(),
        ...(title === undefined ? {} : { title }),
      });
    }
    return [...sessions.values()]
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at))
      .slice(0, this.options.welcomeLimit ?? 200);
  }

  /**
   * The stored sessions that cannot be read (damaged), which `welcome` names apart: as of the
   * listing that serves `welcome` (read at most once per `storedTtlMs`).
   */
  async unreadableSessions(): Promise<UnreadableWelcomeSession[]> {
    await this.stored();
    return [...this.unreadable.values()];
  }

  /**
   * Learns the ids of the sessions stored in the workspaces (before `newSessionId`). The listing
   * serves the first `welcome`s too: start-up reads every session file once, not twice.
   *
   * @throws what listing a workspace's sessions throws (a store that cannot be reached).
   */
  async init(): Promise<void> {
    const value = this.read(false);
    this.cached = { at: Date.now(), value };
    value.catch(() => {
      if (this.cached?.value === value) this.cached = undefined;
    });
    await value;
  }

  /**
   * A new session id, `<prefix>-N` (the seed's `tcp-channel-session-N`), numbered past every id
   * that exists: a restarted server never hands a new client someone's old session.
   */
  newSessionId(prefix: string): string {
    let next = this.counters.get(prefix) ?? 0;
    let id: string;
    do {
      next += 1;
      id = `${prefix}-${next}`;
    } while (this.knownIds.has(id));
    this.counters.set(prefix, next);
    this.knownIds.add(id);
    return id;
  }

  /**
   * The sessions stored in the workspaces, read at most once per `storedTtlMs`: listing reads
   * every session file, and a thousand clients saying hello at once must not read them a
   * thousand times. The loaded sessions' live state is added by `welcome` on every call.
   */
  private stored(): Promise<Map<string, WelcomeSession>> {
    const now = Date.now();
    if (this.cached !== undefined && now - this.cached.at < storedTtlMs) return this.cached.value;
    const value = this.read(true);
    this.cached = { at: now, value };
    return value;
  }

  /**
   * Reads the sessions stored in the workspaces. Every id becomes known, also of a session that
   * cannot be read (a new session must not land on it); those are kept for `unreadableSessions`,
   * and `onUnreadable` is told of each one the last listing did not name with the same reason.
   * `tolerant`: a workspace whose sessions cannot be listed counts as having none.
   */
  private async read(tolerant: boolean): Promise<Map<string, WelcomeSession>> {
    const sessions = new Map<string, WelcomeSession>();
    const unreadable = new Map<string, UnreadableWelcomeSession>();
    for (const root of this.options.workspaces) {
      const workDir = path.resolve(root);
      const found: UnreadableSession[] = [];
      const listed = this.options.factory.listSessions(workDir, {
        onUnreadable: (session) => found.push(session),
      });
      const summaries = tolerant ? await listed.catch(() => []) : await listed;
      for (const summary of summaries) {
        this.knownIds.add(summary.id);
        sessions.set(keyOf(summary.id, workDir), {
          session_id: summary.id,
          state: 'idle',
          last_seq: summary.lastEventSeq,
          updated_at: summary.updatedAt,
          ...(summary.title === undefined ? {} : { title: summary.title }),
        });
      }
      for (const session of found) {
        const key = keyOf(session.id, workDir);
        this.knownIds.add(session.id);
        if (this.unreadable.get(key)?.reason !== session.reason) {
          this.options.onUnreadable?.(session, workDir);
        }
        unreadable.set(key, { session_id: session.id, reason: session.reason });
      }
    }
    this.unreadable = unreadable;
    return sessions;
  }
}

function keyOf(sessionId: string, workDir: string): string {
  return `${workDir}\u0000${sessionId}`;
}
