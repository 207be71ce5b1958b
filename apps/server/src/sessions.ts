import type { RuntimeSource, UnreadableWelcomeSession, WelcomeSession } from '@claw/channel';
import { errorMessage } from '@claw/core';
import {
  SessionLifecycle,
  type CreateRuntimeOptions,
  type Runtime,
  type RuntimeFactory,
  type RuntimeHandle,
  type SetTimer,
} from '@claw/runtime';
import type { SharedSessionLog, UnreadableSession } from '@claw/session-store';
import { SessionListing } from './session-listing.js';

export type { SetTimer } from '@claw/runtime';

/** What the registry needs of the runtime factory. */
export type SessionFactory = Pick<RuntimeFactory, 'createRuntime' | 'listSessions' | 'closeSession'>;

export interface ServerSessionsOptions {
  factory: SessionFactory;
  /** The workspace roots: `welcome` lists the sessions stored in them. */
  workspaces: readonly string[];
  /** A session nobody watches is unloaded after this long (CH-10), its questions denied. */
  idleTimeoutMs: number;
  /** Most sessions `welcome` lists (the most recently changed first). Default 200. */
  welcomeLimit?: number;
  /**
   * The shared store, when several instances share one (SCALE-4): a session another instance
   * owns is then served here from the store, its requests handed to the owner, and taken over
   * when the owner goes away. Without it such a session is refused (`session_locked`).
   */
  relay?: { log: SharedSessionLog; pollMs?: number };
  /**
   * Told of a stored session in workspace `workDir` that cannot be read (damaged, or not
   * readable): it is left out of `welcome`, and no new session takes its id. Once, however often
   * the sessions are listed; again only if its reason changed, or it was readable in between.
   */
  onUnreadable?: (session: UnreadableSession, workDir: string) => void;
  /**
   * Told, one line each, of what failed in the background, where nobody waits for it (LIFE-2):
   * storing and letting go a session at the end of its idle time or at shutdown, taking over a
   * session whose owner went away. The server goes on; nothing of it may end the process.
   * Default: not told.
   */
  onError?: (line: string) => void;
  /** The idle timeouts' and the heartbeats' timers (default `setTimeout`); tests drive them. */
  setTimer?: SetTimer;
}

/**
 * The sessions of one server, shared by all its connections (it is their `RuntimeSource`): the
 * process's `SessionLifecycle` (CH-10: a session nobody watched for `idleTimeoutMs` has its
 * questions denied and is unloaded once no task runs; SCALE-3/4 with a relay), and the listing
 * of the sessions its workspaces store.
 */
export class ServerSessions implements RuntimeSource {
  private readonly lifecycle: SessionLifecycle;
  private readonly listing: SessionListing;

  constructor(options: ServerSessionsOptions) {
    const { onError } = options;
    this.lifecycle = new SessionLifecycle({
      factory: options.factory,
      // Its idle-timeout denials are answered `by` "claw-server (idle timeout)".
      name: 'claw-server',
      idleTimeoutMs: options.idleTimeoutMs,
      ...(options.relay === undefined ? {} : { relay: options.relay }),
      ...(onError === undefined
        ? {}
        : { onError: (error, what) => onError(`claw-server: ${what}: ${errorMessage(error)}`) }),
      ...(options.setTimer === undefined ? {} : { setTimer: options.setTimer }),
    });
    this.listing = new SessionListing({
      factory: options.factory,
      workspaces: options.workspaces,
      ...(options.welcomeLimit === undefined ? {} : { welcomeLimit: options.welcomeLimit }),
      ...(options.onUnreadable === undefined ? {} : { onUnreadable: options.onUnreadable }),
    });
  }

  /**
   * A runtime for one client; the session is loaded (and kept) while any client holds one. When
   * another instance owns the session (SCALE-4), the client's handle follows it from the store.
   */
  createRuntime(options: CreateRuntimeOptions): Promise<RuntimeHandle> {
    this.listing.known(options.sessionId ?? 'default');
    return this.lifecycle.open(options);
  }

  /**
   * A runtime of this process on the session, for callers that run a task here and wait for it
   * (A2A): it takes the session's lease.
   *
   * @throws SessionLockedError when another instance owns the session.
   */
  createLocalRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
    this.listing.known(options.sessionId ?? 'default');
    return this.lifecycle.openLocal(options);
  }

  /** The sessions `welcome` lists: the stored ones, with the live state of the loaded ones. */
  async welcome(): Promise<WelcomeSession[]> {
    return this.listing.welcome(await this.lifecycle.loadedSessions());
  }

  /** The stored sessions that cannot be read, which `welcome` names apart. */
  unreadableSessions(): Promise<UnreadableWelcomeSession[]> {
    return this.listing.unreadableSessions();
  }

  /** See `SessionListing.init`. @throws what listing a workspace's sessions throws. */
  init(): Promise<void> {
    return this.listing.init();
  }

  /** A new session id, `<prefix>-N`, numbered past every id that exists. */
  newSessionId(prefix: string): string {
    return this.listing.newSessionId(prefix);
  }

  /** How many sessions are loaded now. */
  get loaded(): number {
    return this.lifecycle.loaded;
  }

  /** Resolves once no loaded session runs a task, or when `signal` aborts (the first). */
  tasksDone(signal: AbortSignal): Promise<void> {
    return this.lifecycle.tasksDone(signal);
  }

  /** Lets `sessionId` go at once, whoever watches it (its lease was lost, SCALE-2). */
  async dropSession(sessionId: string, reason: Error): Promise<void> {
    await this.lifecycle.dropSession(sessionId, reason);
    // The next welcome lists the session as the store has it.
    this.listing.stale();
  }

  /** Cancels every running task and waits for each to end (its history stays paired). */
  cancelAll(reason: Error): Promise<void> {
    return this.lifecycle.cancelAll(reason);
  }

  /** Stops the idle timers and lets every session go (the factory's close cancels tasks). */
  close(): Promise<void> {
    return this.lifecycle.close();
  }
}
