import path from 'node:path';
import type { ApprovalAnswer, ApprovalHandler, ApprovalPrompt } from '@claw/approval';
import type { RuntimeSource, UnreadableWelcomeSession, WelcomeSession } from '@claw/channel';
import { abortReason, errorMessage, sessionTitle } from '@claw/core';
import {
  RemoteRuntime,
  RemoteSession,
  relayHandler,
  type CreateRuntimeOptions,
  type Runtime,
  type RuntimeFactory,
  type RuntimeHandle,
} from '@claw/runtime';
import {
  SessionLockedError,
  type SessionRelay,
  type UnreadableSession,
} from '@claw/session-store';

/** What the registry needs of the runtime factory. */
export type SessionFactory = Pick<RuntimeFactory, 'createRuntime' | 'listSessions' | 'closeSession'>;

/** Starts a timer and returns what cancels it. */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/** `setTimeout`, read when called (fake timers still apply), not keeping the process alive. */
const defaultSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

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
  relay?: { log: SessionRelay; pollMs?: number };
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

/** How long a listing of the stored sessions serves `welcome` (see `storedSessions`). */
const storedTtlMs = 2000;

/** The name its idle-timeout denials carry as `by` in `approval_resolved`. */
export const idleDenier = 'claw-server (idle timeout)';

interface Entry {
  key: string;
  sessionId: string;
  workDir: string;
  /**
   * The server's own attachment: keeps the session loaded between clients, denies when idle.
   * Undefined while another instance owns the session (then `remote` serves it).
   */
  keeper: Runtime | undefined;
  /** The session as another instance owns it (SCALE-4); it stays after a takeover (`adopted`). */
  remote: RemoteSession | undefined;
  /**
   * Stops serving the requests other instances hand to this owner, and relaying its tools'
   * progress to them.
   */
  stopServing: (() => void) | undefined;
  /** A takeover under way. */
  takingOver: Promise<void> | undefined;
  /** While clients here follow a session another instance owns: tells the owner so (stops it). */
  heartbeat: (() => void) | undefined;
  clients: number;
  /** The idle timer (cancels it). */
  timer: (() => void) | undefined;
  /** What the last takeover that failed said (each failure is told once, not every poll). */
  takeoverFailure: string | undefined;
  /** Set when the idle time ran out with nobody attached; cleared when a client comes. */
  expired: boolean;
  /** Questions waiting for the idle time to run out. */
  waiters: Set<() => void>;
  unloading: Promise<void> | undefined;
}

/**
 * The sessions of one server, shared by all its connections (it is their `RuntimeSource`): the
 * first client of a session loads it, and the server keeps it loaded (its event log in memory,
 * for clients that reconnect) until nobody has watched it for `idleTimeoutMs` (CH-10). Then its
 * pending approvals are denied — a task that outlived its clients does not wait forever for an
 * answer nobody can give — and the session is unloaded once no task runs (its state stays in the
 * store). A client that comes back before then finds it as it was.
 */
export class ServerSessions implements RuntimeSource {
  private readonly options: ServerSessionsOptions;
  private readonly entries = new Map<string, Promise<Entry>>();
  /** Every session id known to exist, so that a new session never takes an old one's id. */
  private readonly knownIds = new Set<string>();
  private readonly counters = new Map<string, number>();
  private stored: { at: number; value: Promise<Map<string, WelcomeSession>> } | undefined;
  /** The stored sessions the last listing could not read, by workspace and session. */
  private unreadable = new Map<string, UnreadableWelcomeSession>();
  private closed = false;
  private readonly setTimer: SetTimer;

  constructor(options: ServerSessionsOptions) {
    this.options = options;
    this.setTimer = options.setTimer ?? defaultSetTimer;
  }

  /**
   * A runtime for one client; the session is loaded (and kept) while any client holds one. When
   * another instance owns the session (SCALE-4), the client's handle follows it from the store.
   */
  async createRuntime(options: CreateRuntimeOptions): Promise<RuntimeHandle> {
    const { entry, workDir, sessionId } = await this.join(options);
    const remote = entry.remote;
    if (entry.keeper === undefined && remote !== undefined) {
      return new RemoteRuntime({
        id: options.id ?? `client:${sessionId}`,
        remote,
        onClose: () => {
          options.onClose?.();
          this.leave(entry);
        },
      });
    }
    return this.localRuntime(entry, { ...options, workDir, sessionId });
  }

  /**
   * A runtime of this process on the session, for callers that run a task here and wait for it
   * (A2A): it takes the session's lease.
   *
   * @throws SessionLockedError when another instance owns the session.
   */
  async createLocalRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
    const { entry, workDir, sessionId } = await this.join(options);
    if (entry.keeper === undefined) {
      this.leave(entry);
      throw new SessionLockedError(
        `Session ${JSON.stringify(sessionId)} is owned by another claw instance; run the task there.`,
        { sessionId },
      );
    }
    return this.localRuntime(entry, { ...options, workDir, sessionId });
  }

  private async join(
    options: CreateRuntimeOptions,
  ): Promise<{ entry: Entry; workDir: string; sessionId: string }> {
    const workDir = path.resolve(options.workDir);
    const sessionId = options.sessionId ?? 'default';
    this.knownIds.add(sessionId);
    let entry = await this.entry(sessionId, workDir);
    // Being unloaded meanwhile (its idle time ran out just now): load it again.
    while (entry.unloading !== undefined) entry = await this.entry(sessionId, workDir);
    entry.clients += 1;
    this.touch(entry);
    return { entry, workDir, sessionId };
  }

  private async localRuntime(
    entry: Entry,
    options: CreateRuntimeOptions & { workDir: string; sessionId: string },
  ): Promise<Runtime> {
    const { workDir, sessionId } = options;
    try {
      return await this.options.factory.createRuntime({
        ...options,
        workDir,
        sessionId,
        onClose: () => {
          options.onClose?.();
          this.leave(entry);
        },
      });
    } catch (error) {
      this.leave(entry);
      throw error;
    }
  }

  /**
   * The sessions `welcome` lists: those stored in the workspaces, most recently changed first,
   * with the live state and last seq of the loaded ones.
   */
  async welcome(): Promise<WelcomeSession[]> {
    const sessions = new Map(await this.storedSessions());
    for (const pending of this.entries.values()) {
      const entry = await pending.catch(() => undefined);
      if (entry === undefined || entry.unloading !== undefined) continue;
      const view = entry.keeper?.snapshot() ?? entry.remote?.view();
      if (view === undefined) continue;
      const title = sessionTitle(view.history);
      sessions.set(entry.key, {
        session_id: entry.sessionId,
        state: view.state,
        last_seq: view.seq,
        updated_at: sessions.get(entry.key)?.updated_at ?? new Date().toISOString(),
        ...(title === undefined ? {} : { title }),
      });
    }
    return [...sessions.values()]
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at))
      .slice(0, this.options.welcomeLimit ?? 200);
  }

  /**
   * The sessions stored in the workspaces, read at most once per `storedTtlMs`: listing reads
   * every session file, and a thousand clients saying hello at once must not read them a
   * thousand times. The loaded sessions' live state is added by `welcome` on every call.
   */
  private storedSessions(): Promise<Map<string, WelcomeSession>> {
    const now = Date.now();
    if (this.stored !== undefined && now - this.stored.at < storedTtlMs) return this.stored.value;
    const value = this.readStored(true);
    this.stored = { at: now, value };
    return value;
  }

  /**
   * The stored sessions that cannot be read (damaged), which `welcome` names apart: as of the
   * listing that serves `welcome` (read at most once per `storedTtlMs`).
   */
  async unreadableSessions(): Promise<UnreadableWelcomeSession[]> {
    await this.storedSessions();
    return [...this.unreadable.values()];
  }

  /**
   * Learns the ids of the sessions stored in the workspaces (before `newSessionId`). The listing
   * serves the first `welcome`s too: start-up reads every session file once, not twice.
   *
   * @throws what listing a workspace's sessions throws (a store that cannot be reached).
   */
  async init(): Promise<void> {
    const value = this.readStored(false);
    this.stored = { at: Date.now(), value };
    value.catch(() => {
      if (this.stored?.value === value) this.stored = undefined;
    });
    await value;
  }

  /**
   * Reads the sessions stored in the workspaces. Every id becomes known, also of a session that
   * cannot be read (a new session must not land on it); those are kept for `unreadableSessions`,
   * and `onUnreadable` is told of each one the last listing did not name with the same reason.
   * `tolerant`: a workspace whose sessions cannot be listed counts as having none.
   */
  private async readStored(tolerant: boolean): Promise<Map<string, WelcomeSession>> {
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

  /** How many sessions are loaded now. */
  get loaded(): number {
    return this.entries.size;
  }

  /** How many loaded sessions run a task now. */
  async running(): Promise<number> {
    let count = 0;
    for (const pending of this.entries.values()) {
      const entry = await pending.catch(() => undefined);
      if (entry?.keeper?.activeTask !== undefined) count += 1;
    }
    return count;
  }

  /**
   * Resolves once no loaded session runs a task, or when `signal` aborts (whichever is first).
   */
  async tasksDone(signal: AbortSignal): Promise<void> {
    const entries = await Promise.allSettled([...this.entries.values()]);
    const waits = entries.flatMap((settled) =>
      settled.status === 'fulfilled' && settled.value.keeper !== undefined
        ? [settled.value.keeper.idle().catch(() => undefined)]
        : [],
    );
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => resolve(), { once: true });
      void Promise.all(waits).then(() => resolve());
    });
  }

  /**
   * Lets `sessionId` go (in any workspace) at once, for a session this server may no longer write
   * (its lease was lost, SCALE-2): its task is canceled and its tool processes killed, and it is
   * unloaded whoever watches it, so that opening it again reads it from the store (and is refused
   * while another instance owns it) instead of showing what this server had in memory.
   */
  async dropSession(sessionId: string, reason: Error): Promise<void> {
    const entries = (await Promise.allSettled([...this.entries.values()])).flatMap((settled) =>
      settled.status === 'fulfilled' && settled.value.sessionId === sessionId ? [settled.value] : [],
    );
    // Serving stops at once, before the task winds down: the new owner may serve the session
    // already, and what other instances' clients send is its to answer, not this instance's.
    for (const entry of entries) this.stopServing(entry);
    // The task first, while its clients still follow the session: they see it canceled.
    await Promise.allSettled(entries.map(async (entry) => {
      entry.keeper?.cancel(reason);
      await entry.keeper?.idle();
    }));
    const unloading: Array<Promise<void>> = [];
    for (const entry of entries) {
      this.disarm(entry);
      // Closing waits for the session's last events to settle (their writes are refused); its
      // clients are told why it ends (LIFE-2). A store that refuses is expected here.
      const closed = this.unload(entry, reason).catch(() => undefined);
      entry.unloading ??= closed.finally(() => this.forget(entry));
      unloading.push(entry.unloading);
    }
    await Promise.allSettled(unloading);
    // Then the host, whoever still holds it: what this server had of the session is dropped.
    await this.options.factory.closeSession(sessionId, reason);
    // The next welcome lists the session as the store has it.
    this.stored = undefined;
  }

  /** Cancels every running task and waits for each to end (its history stays paired). */
  async cancelAll(reason: Error): Promise<void> {
    const entries = await Promise.allSettled([...this.entries.values()]);
    await Promise.allSettled(
      entries.map(async (settled) => {
        if (settled.status !== 'fulfilled') return;
        settled.value.keeper?.cancel(reason);
        await settled.value.keeper?.idle();
      }),
    );
  }

  /** Stops the idle timers and lets every session go (the factory's close cancels tasks). */
  async close(): Promise<void> {
    this.closed = true;
    const entries = await Promise.allSettled([...this.entries.values()]);
    await Promise.allSettled(
      entries.map(async (settled) => {
        if (settled.status !== 'fulfilled') return;
        const entry = settled.value;
        this.disarm(entry);
        await this.unload(entry).catch((error: unknown) => {
          this.report(entry, 'could not be stored and let go at shutdown', error);
        });
      }),
    );
    this.entries.clear();
  }

  private async entry(sessionId: string, workDir: string): Promise<Entry> {
    const key = keyOf(sessionId, workDir);
    for (;;) {
      if (this.closed) throw new Error('the server is stopping');
      const pending = this.entries.get(key);
      if (pending === undefined) break;
      const existing = await pending.catch(() => undefined);
      if (existing !== undefined && existing.unloading === undefined) return existing;
      if (existing !== undefined) await existing.unloading;
      if (this.entries.get(key) === pending) this.entries.delete(key);
    }
    const made = this.load(key, sessionId, workDir);
    this.entries.set(key, made);
    made.catch(() => {
      if (this.entries.get(key) === made) this.entries.delete(key);
    });
    return made;
  }

  private async load(key: string, sessionId: string, workDir: string): Promise<Entry> {
    const waiters = new Set<() => void>();
    const entry: Entry = {
      key,
      sessionId,
      workDir,
      keeper: undefined,
      remote: undefined,
      stopServing: undefined,
      takingOver: undefined,
      heartbeat: undefined,
      clients: 0,
      timer: undefined,
      takeoverFailure: undefined,
      expired: false,
      waiters,
      unloading: undefined,
    };
    const { relay } = this.options;
    try {
      await this.own(entry);
    } catch (error) {
      if (!(error instanceof SessionLockedError) || relay === undefined) throw error;
      // Another instance owns it: serve it from the store (SCALE-4).
      entry.remote = await RemoteSession.open({
        relay: relay.log,
        sessionId,
        workDir,
        ...(relay.pollMs === undefined ? {} : { pollMs: relay.pollMs }),
        onOwnerGone: () => this.takeOver(entry),
      });
      entry.heartbeat = this.heartbeat(entry, relay.log);
    }
    return entry;
  }

  /**
   * While clients here follow a session another instance owns, that owner hears so every third
   * of the idle time (at most every minute): its idle timeout counts them as watching (CH-10),
   * and does not deny the session's questions while someone here could answer them. Best effort:
   * an owner that does not hear it (gone, or busy) is followed up by the takeover. Returns what
   * stops it.
   */
  private heartbeat(entry: Entry, relay: SessionRelay): () => void {
    const every = Math.max(100, Math.min(60_000, Math.floor(this.options.idleTimeoutMs / 3)));
    let stopped = false;
    let cancel: () => void = () => undefined;
    const beat = (): void => {
      if (entry.clients > 0) {
        try {
          relay.send(entry.sessionId, { kind: 'watching', by: 'claw-server' }, { timeoutMs: every })
            .catch(() => undefined);
        } catch {
          // A relay that throws at once is like one that did not answer.
        }
      }
      if (!stopped) cancel = this.setTimer(beat, every);
    };
    cancel = this.setTimer(beat, every);
    return () => {
      stopped = true;
      cancel();
    };
  }

  /** Another instance's clients follow a session this one owns: it is watched (CH-10). */
  private watched(entry: Entry): void {
    if (entry.clients > 0 || this.closed || entry.unloading !== undefined) return;
    entry.expired = false;
    this.arm(entry);
  }

  /**
   * Takes the session's lease here (its keeper), serves the requests other instances' clients
   * send to it, and relays its running tools' progress to them.
   *
   * @throws SessionLockedError when another instance owns it.
   */
  private async own(entry: Entry): Promise<Runtime> {
    const keeper = await this.options.factory.createRuntime({
      // Its id is who answered (`by`) when its idle-timeout denial wins.
      id: idleDenier,
      sessionId: entry.sessionId,
      workDir: entry.workDir,
      approvalHandler: this.idleDenial(entry),
    });
    entry.keeper = keeper;
    const relay = this.options.relay?.log;
    if (relay !== undefined) {
      const stopServing = relay.serve(
        entry.sessionId,
        relayHandler(keeper, { watched: () => this.watched(entry) }),
      );
      const stopRelaying = relay.publishProgress === undefined
        ? () => undefined
        : keeper.onToolProgress((report) => relay.publishProgress?.(entry.sessionId, report));
      entry.stopServing = () => {
        stopServing();
        stopRelaying();
      };
    }
    return keeper;
  }

  /**
   * The owner of a session served from the store went away (SCALE-3): take it over here, unless
   * another instance was quicker. Its clients go on following it, now from this process.
   */
  private takeOver(entry: Entry): Promise<void> {
    if (entry.keeper !== undefined || entry.unloading !== undefined || this.closed) {
      return Promise.resolve();
    }
    entry.takingOver ??= (async () => {
      try {
        const keeper = await this.own(entry);
        // Owned here now: nobody else to tell that its clients watch.
        entry.heartbeat?.();
        entry.heartbeat = undefined;
        entry.takeoverFailure = undefined;
        entry.remote?.adopt(keeper);
      } catch (error) {
        // Another instance was quicker: it serves the session now. Anything else (the store is
        // away) is said once, and the next look of the follower tries again.
        if (error instanceof SessionLockedError) return;
        const said = errorMessage(error);
        if (entry.takeoverFailure === said) return;
        entry.takeoverFailure = said;
        this.report(entry, 'could not be taken over from its owner, which went away', error);
      } finally {
        entry.takingOver = undefined;
      }
    })();
    return entry.takingOver;
  }

  /**
   * Stops answering other instances' requests for the session and relaying its progress, and
   * stops telling its owner that clients here watch it.
   */
  private stopServing(entry: Entry): void {
    entry.stopServing?.();
    entry.stopServing = undefined;
    entry.heartbeat?.();
    entry.heartbeat = undefined;
  }

  /**
   * Lets the entry's session go: stops serving, closes the keeper and the remote follower. With
   * `reason` the session is let go while clients may follow it (SCALE-2): those that follow it
   * through the remote follower are told why (`SessionEndedError`, LIFE-2).
   */
  private async unload(entry: Entry, reason?: Error): Promise<void> {
    this.stopServing(entry);
    try {
      await entry.keeper?.close({ cancel: false });
    } finally {
      if (reason !== undefined) entry.remote?.events.close(reason);
      await entry.remote?.close();
    }
  }

  /** Answers a session's questions with a denial once nobody watched it for the idle time. */
  private idleDenial(entry: Entry): ApprovalHandler {
    const minutes = this.options.idleTimeoutMs / 60_000;
    const answer: ApprovalAnswer = {
      decision: 'deny',
      reason:
        'nobody was connected to answer it: no client watched this session for ' +
        `${minutes >= 1 ? `${Math.round(minutes)} min` : `${this.options.idleTimeoutMs} ms`} ` +
        '(the server\'s idle timeout)',
    };
    return {
      approve: (_prompt: ApprovalPrompt, signal: AbortSignal) => {
        if (entry.expired) return Promise.resolve(answer);
        return new Promise<ApprovalAnswer>((resolve, reject) => {
          const deny = (): void => {
            signal.removeEventListener('abort', onAbort);
            resolve(answer);
          };
          const onAbort = (): void => {
            entry.waiters.delete(deny);
            reject(abortReason(signal));
          };
          entry.waiters.add(deny);
          signal.addEventListener('abort', onAbort, { once: true });
        });
      },
    };
  }

  private touch(entry: Entry): void {
    this.disarm(entry);
    entry.expired = false;
  }

  private leave(entry: Entry): void {
    entry.clients -= 1;
    if (entry.clients > 0 || this.closed) return;
    this.arm(entry);
  }

  /** (Re)starts the entry's idle time. */
  private arm(entry: Entry): void {
    this.disarm(entry);
    entry.timer = this.setTimer(() => {
      entry.timer = undefined;
      // A timer's work has nobody to throw to: what fails is said, and the server goes on.
      this.expire(entry).catch((error: unknown) => {
        this.report(entry, 'could not be let go after the idle timeout', error);
      });
    }, this.options.idleTimeoutMs);
  }

  private disarm(entry: Entry): void {
    entry.timer?.();
    entry.timer = undefined;
  }

  /**
   * The idle time ran out: deny what waits, unload once no task runs (unless a client came). A
   * session that cannot be stored or released (its store is away) is unloaded all the same, and
   * said: it is the store's again, and a client that comes back reads it from there.
   */
  private async expire(entry: Entry): Promise<void> {
    if (entry.clients > 0 || entry.unloading !== undefined) return;
    entry.expired = true;
    for (const deny of [...entry.waiters]) deny();
    entry.waiters.clear();
    await entry.keeper?.idle().catch(() => undefined);
    await entry.takingOver?.catch(() => undefined);
    if (entry.clients > 0 || !entry.expired || entry.unloading !== undefined) return;
    entry.unloading = this.unload(entry)
      .catch((error: unknown) => {
        this.report(entry, 'could not be stored and let go after the idle timeout', error);
      })
      .finally(() => this.forget(entry));
    await entry.unloading;
  }

  /** Takes an unloaded entry out of the map (unless a new one of its session is there). */
  private forget(entry: Entry): void {
    const pending = this.entries.get(entry.key);
    pending?.then(
      (current) => {
        if (current === entry && this.entries.get(entry.key) === pending) {
          this.entries.delete(entry.key);
        }
      },
      () => undefined,
    );
  }

  /** Says what failed in the background (`onError`); a reporter that throws changes nothing. */
  private report(entry: Entry, what: string, error: unknown): void {
    try {
      this.options.onError?.(
        `claw-server: session ${JSON.stringify(entry.sessionId)} (${entry.workDir}) ${what}: ` +
        errorMessage(error),
      );
    } catch {
      // Nothing more to do: the failure was to be said, and saying it failed.
    }
  }
}

function keyOf(sessionId: string, workDir: string): string {
  return `${workDir}\u0000${sessionId}`;
}
