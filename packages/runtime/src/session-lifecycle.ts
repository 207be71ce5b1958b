import path from 'node:path';
import type {
  ApprovalAnswer,
  ApprovalHandler,
  ApprovalPrompt,
  ElicitationPrompt,
} from '@claw/approval';
import {
  SharedResources,
  abortReason,
  errorMessage,
  type SetTimer,
  type SharedLease,
} from '@claw/core';
import {
  SessionLockedError,
  type SessionLog,
  type SessionRelay,
  type SharedSessionLog,
} from '@claw/session-store';
import type { CreateRuntimeOptions, RuntimeFactory } from './factory.js';
import { relayHandler } from './relay-handler.js';
import { RemoteRuntime, type RuntimeHandle } from './remote-runtime.js';
import { RemoteSession } from './remote-session.js';
import type { Runtime } from './runtime.js';
import type { SessionView } from './session-host.js';
import { unrefSetTimer } from './timers.js';

/** Options of {@link SessionLifecycle}. */
export interface SessionLifecycleOptions {
  /** Opens the sessions this process owns: its runtimes hold them (and their leases). */
  factory: Pick<RuntimeFactory, 'createRuntime' | 'closeSession'>;
  /**
   * Who this process is, in what it says: its idle timeout's denials are answered by
   * `<name> (idle timeout)`, it follows sessions as `<name>` (`watching`). Default `claw`.
   */
  name?: string;
  /**
   * A session nobody watched for this long is let go (CH-10): its pending approvals are denied
   * (a task that outlived its clients does not wait forever for an answer nobody can give) and
   * it is unloaded once no task runs; a client that comes back before then finds it as it was.
   * Default: none — a session is let go when its last client leaves.
   */
  idleTimeoutMs?: number;
  /**
   * The store several processes share (SCALE-4): a session another process owns is then
   * followed from it (`open`), its clients' requests handed to the owner, and taken over when
   * the owner goes away (SCALE-3); a session owned here serves the requests other processes send
   * to it and relays its tools' progress. Without it such a session is refused
   * (`SessionLockedError`). `pollMs`: how often a follower reads the store without a wake-up.
   */
  relay?: { log: SharedSessionLog; pollMs?: number };
  /**
   * Told of what failed in the background, where nobody waits for it (LIFE-2): letting a session
   * go at the end of its idle time or at shutdown, taking over a session whose owner went away.
   * `what` names the session and what was done. The lifecycle goes on. Default: not told.
   */
  onError?: (error: unknown, what: string) => void;
  /** The idle timeouts' and the heartbeats' timers (default `setTimeout`); tests drive them. */
  setTimer?: SetTimer;
}

/** A loaded session as `SessionLifecycle.loadedSessions` lists it. */
export interface LoadedSession {
  sessionId: string;
  workDir: string;
  /** What it is doing now, as a client that attached would see it. */
  view: SessionView;
}

interface Entry {
  key: string;
  sessionId: string;
  workDir: string;
  /**
   * The lifecycle's own runtime on the session: keeps it loaded between clients, serves other
   * processes' requests, denies when idle. Undefined while another process owns the session.
   */
  keeper: Runtime | undefined;
  /** The session as another process owns it (SCALE-4); it stays after a takeover (`adopt`). */
  remote: RemoteSession | undefined;
  /** Stops serving other processes' requests, and relaying the tools' progress to them. */
  stopServing: (() => void) | undefined;
  /** A takeover under way. */
  takingOver: Promise<void> | undefined;
  /** While clients here follow a session another process owns: tells the owner so (stops it). */
  heartbeat: (() => void) | undefined;
  clients: number;
  /**
   * The use of the entry its last client left behind, kept for the idle time: it lets the
   * session go when the idle time runs out (with no idle timeout, nothing is kept).
   */
  hold: SharedLease<Entry> | undefined;
  /** The idle timer (cancels it). */
  timer: (() => void) | undefined;
  /** What the last takeover that failed said (each failure is told once, not every poll). */
  takeoverFailure: string | undefined;
  /** Set when the idle time ran out with nobody attached; cleared when a client comes. */
  expired: boolean;
  /** Questions waiting for the idle time to run out. */
  waiters: Set<() => void>;
  /** Set once the session is being let go: a client that comes then loads it again. */
  unloading: boolean;
}

/**
 * The one lifecycle of the sessions of a process (LIFE-1), shared by claw-server, the CLI and
 * the ACP agent: opening a session (owned here, or followed from a shared store while another
 * process owns it), taking it over when that owner goes away, serving other processes' requests
 * for the sessions owned here, letting a session go when nobody watched it for the idle time,
 * and shutdown. The first client of a session loads it, later ones share it; each loaded session
 * is one ref-counted entry whose users are its clients (and, for the idle time, the last one's
 * use).
 */
export class SessionLifecycle {
  private readonly options: SessionLifecycleOptions;
  private readonly name: string;
  /** The shared store and its relay parts (with `options.relay`). */
  private readonly shared: { log: SessionLog; relay: SessionRelay; pollMs?: number } | undefined;
  private readonly setTimer: SetTimer;
  private readonly entries = new SharedResources<string, Entry>({
    dispose: (entry) => this.unload(entry),
  });

  /** Entries being let go, which `close` waits for. */
  private readonly unloadings = new Set<Promise<void>>();
  private closed = false;

  constructor(options: SessionLifecycleOptions) {
    this.options = options;
    this.name = options.name ?? 'claw';
    const { relay } = options;
    this.shared = relay === undefined ? undefined : { ...relay, relay: relay.log.relayParts() };
    this.setTimer = options.setTimer ?? unrefSetTimer;
  }

  /** Who answers when the idle timeout denies (`by` of its `approval_resolved`). */
  get idleDenier(): string {
    return `${this.name} (idle timeout)`;
  }

  /**
   * A handle on the session for one client: a runtime of this process when it owns the session,
   * else (with a relay) one that follows it from the store, its requests handed to the owner.
   * The session stays loaded while any client holds one (and for the idle time after).
   *
   * @throws SessionLockedError when another process owns the session and there is no relay;
   *   what opening the session throws.
   */
  async open(options: CreateRuntimeOptions): Promise<RuntimeHandle> {
    const { entry, lease } = await this.join(options);
    const remote = entry.remote;
    if (entry.keeper === undefined && remote !== undefined) {
      return new RemoteRuntime({
        id: options.id ?? `client:${entry.sessionId}`,
        remote,
        onClose: this.leaving(entry, lease, options),
      });
    }
    return this.localRuntime(entry, lease, options);
  }

  /**
   * A runtime of this process on the session, for callers that run a task here and wait for it
   * (the CLI, ACP, A2A): this process holds the session's lease.
   *
   * @throws SessionLockedError when another process owns the session; what opening it throws.
   */
  async openLocal(options: CreateRuntimeOptions): Promise<Runtime> {
    const { entry, lease } = await this.join(options);
    if (entry.keeper === undefined) {
      await this.leave(entry, lease).catch(() => undefined);
      throw new SessionLockedError(
        `Session ${JSON.stringify(entry.sessionId)} is owned by another claw instance; run the ` +
        'task there.',
        { sessionId: entry.sessionId },
      );
    }
    return this.localRuntime(entry, lease, options);
  }

  /** How many sessions are loaded now (being let go included). */
  get loaded(): number {
    return this.entries.size;
  }

  /** The loaded sessions, each as a client that attached now would see it. */
  async loadedSessions(): Promise<LoadedSession[]> {
    const loaded: LoadedSession[] = [];
    for (const entry of await this.current()) {
      if (entry.unloading) continue;
      const view = entry.keeper?.snapshot() ?? entry.remote?.view();
      if (view === undefined) continue;
      loaded.push({ sessionId: entry.sessionId, workDir: entry.workDir, view });
    }
    return loaded;
  }

  /** How many loaded sessions run a task here now. */
  async running(): Promise<number> {
    return (await this.current()).filter((entry) => entry.keeper?.activeTask !== undefined).length;
  }

  /** Resolves once no loaded session runs a task here, or when `signal` aborts (the first). */
  async tasksDone(signal: AbortSignal): Promise<void> {
    const waits = (await this.current()).flatMap((entry) =>
      entry.keeper === undefined ? [] : [entry.keeper.idle().catch(() => undefined)]);
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => resolve(), { once: true });
      void Promise.all(waits).then(() => resolve());
    });
  }

  /** Cancels every task running here and waits for each to end (its history stays paired). */
  async cancelAll(reason: Error): Promise<void> {
    await Promise.allSettled((await this.current()).map((entry) => this.endTask(entry, reason)));
  }

  /**
   * Lets `sessionId` go (in any workspace) at once, for a session this process may no longer
   * write (its lease was lost, SCALE-2): its task is canceled and its tool processes killed, and
   * it is unloaded whoever watches it — its followers are told why (`SessionEndedError`,
   * LIFE-2) — so that opening it again reads it from the store (and is refused, or followed,
   * while another process owns it) instead of showing what this process had in memory.
   */
  async dropSession(sessionId: string, reason: Error): Promise<void> {
    const entries = (await this.current()).filter((entry) => entry.sessionId === sessionId);
    // Serving stops at once, before the task winds down: the new owner may serve the session
    // already, and what other processes' clients send is its to answer, not this one's.
    for (const entry of entries) this.stopServing(entry);
    // The task first, while its clients still follow the session: they see it canceled.
    await Promise.allSettled(entries.map((entry) => this.endTask(entry, reason)));
    await Promise.allSettled(entries.map(async (entry) => {
      await this.take(entry);
      // Closing waits for the session's last events to settle (their writes are refused); its
      // clients are told why it ends. A store that refuses is expected here.
      await this.unload(entry, reason).catch(() => undefined);
    }));
    // Then the host, whoever still holds it: what this process had of the session is dropped.
    await this.options.factory.closeSession(sessionId, reason);
  }

  /**
   * Stops the idle timers and lets every session go (the factory's close cancels the tasks);
   * what cannot be stored is told to `onError`. New clients are refused from now on.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled((await this.current()).map(async (entry) => {
      await this.take(entry);
      await this.unload(entry).catch((error: unknown) => {
        this.report(entry, 'could not be stored and let go at shutdown', error);
      });
    }));
    await Promise.allSettled([...this.unloadings]);
  }

  /** Cancels the task the entry's session runs here, if any, and waits for it to end. */
  private async endTask(entry: Entry, reason: Error): Promise<void> {
    entry.keeper?.cancel(reason);
    await entry.keeper?.idle();
  }

  /** The loaded entries (those that failed to load left out). */
  private async current(): Promise<Entry[]> {
    const settled = await Promise.allSettled(this.entries.values());
    return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  }

  /** Takes `entry` out of the loaded ones, to let it go here: its clients' uses do nothing. */
  private async take(entry: Entry): Promise<void> {
    const pending = this.entries.peek(entry.key);
    if (pending === undefined) return;
    const current = await pending.catch(() => undefined);
    if (current === entry && this.entries.peek(entry.key) === pending) {
      void this.entries.forget(entry.key);
    }
  }

  private async join(
    options: CreateRuntimeOptions,
  ): Promise<{ entry: Entry; lease: SharedLease<Entry> }> {
    const workDir = path.resolve(options.workDir);
    const sessionId = options.sessionId ?? 'default';
    const key = `${workDir}\u0000${sessionId}`;
    if (this.closed) throw this.stopping();
    // A session being let go (its idle time ran out just now) is loaded again once it is gone.
    const lease = await this.entries.acquire(key, () =>
      this.load(key, sessionId, workDir, options.mcpServers));
    const entry = lease.value;
    if (this.closed) {
      await lease.release().catch(() => undefined);
      throw this.stopping();
    }
    entry.clients += 1;
    this.touch(entry);
    return { entry, lease };
  }

  private stopping(): Error {
    return new Error(`${this.name} is stopping`);
  }

  /** The `onClose` of a client's handle: the caller's own, then the client leaves the entry. */
  private leaving(
    entry: Entry,
    lease: SharedLease<Entry>,
    options: CreateRuntimeOptions,
  ): () => Promise<void> {
    return async () => {
      try {
        await options.onClose?.();
      } finally {
        await this.leave(entry, lease);
      }
    };
  }

  private async localRuntime(
    entry: Entry,
    lease: SharedLease<Entry>,
    options: CreateRuntimeOptions,
  ): Promise<Runtime> {
    const { workDir, sessionId } = entry;
    try {
      return await this.options.factory.createRuntime({
        ...options,
        workDir,
        sessionId,
        onClose: this.leaving(entry, lease, options),
      });
    } catch (error) {
      await this.leave(entry, lease).catch(() => undefined);
      throw error;
    }
  }

  private async load(
    key: string,
    sessionId: string,
    workDir: string,
    mcpServers: CreateRuntimeOptions['mcpServers'],
  ): Promise<Entry> {
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
      hold: undefined,
      timer: undefined,
      takeoverFailure: undefined,
      expired: false,
      waiters: new Set(),
      unloading: false,
    };
    const { shared } = this;
    try {
      await this.own(entry, mcpServers);
    } catch (error) {
      if (!(error instanceof SessionLockedError) || shared === undefined) throw error;
      // Another process owns it: follow it from the store (SCALE-4).
      const { log, relay, pollMs } = shared;
      entry.remote = await RemoteSession.open({
        log,
        relay,
        sessionId,
        workDir,
        ...(pollMs === undefined ? {} : { pollMs }),
        onOwnerGone: () => this.takeOver(entry),
      });
      entry.heartbeat = this.heartbeat(entry, relay);
    }
    return entry;
  }

  /**
   * While clients here follow a session another process owns, that owner hears so every third
   * of the idle time (at most every minute): its idle timeout counts them as watching (CH-10),
   * and does not deny the session's questions while someone here could answer them. Best effort:
   * an owner that does not hear it (gone, or busy) is followed up by the takeover. Returns what
   * stops it.
   */
  private heartbeat(entry: Entry, relay: SessionRelay): (() => void) | undefined {
    const { inbox } = relay;
    if (inbox === undefined) return undefined;
    const idle = this.options.idleTimeoutMs;
    const every = idle === undefined
      ? 60_000
      : Math.max(100, Math.min(60_000, Math.floor(idle / 3)));
    let stopped = false;
    let cancel: () => void = () => undefined;
    const beat = (): void => {
      if (entry.clients > 0) {
        try {
          inbox.send(entry.sessionId, { kind: 'watching', by: this.name }, { timeoutMs: every })
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

  /** Another process's clients follow a session this one owns: it is watched (CH-10). */
  private watched(entry: Entry): void {
    if (entry.clients > 0 || this.closed || entry.unloading) return;
    entry.expired = false;
    this.arm(entry);
  }

  /**
   * Takes the session's lease here (its keeper), serves the requests other processes' clients
   * send to it, and relays its running tools' progress to them.
   *
   * @throws SessionLockedError when another process owns it.
   */
  private async own(
    entry: Entry,
    mcpServers?: CreateRuntimeOptions['mcpServers'],
  ): Promise<Runtime> {
    const keeper = await this.options.factory.createRuntime({
      // Its id is who answered (`by`) when its idle-timeout denial wins.
      id: this.idleDenier,
      sessionId: entry.sessionId,
      workDir: entry.workDir,
      ...(this.options.idleTimeoutMs === undefined
        ? {}
        : { approvalHandler: this.idleDenial(entry, this.options.idleTimeoutMs) }),
      // The session's own MCP servers start with it (the first client's, ACP-1).
      ...(mcpServers === undefined ? {} : { mcpServers }),
    });
    entry.keeper = keeper;
    if (this.shared !== undefined) {
      const { inbox, progress } = this.shared.relay;
      const stopServing = inbox?.serve(
        entry.sessionId,
        relayHandler(keeper, { watched: () => this.watched(entry) }),
      );
      const stopRelaying = progress === undefined
        ? undefined
        : keeper.onToolProgress((report) => progress.publishProgress(entry.sessionId, report));
      entry.stopServing = () => {
        stopServing?.();
        stopRelaying?.();
      };
    }
    return keeper;
  }

  /**
   * The owner of a session followed from the store went away (SCALE-3): take it over here,
   * unless another process was quicker. Its clients go on following it, now from this process.
   */
  private takeOver(entry: Entry): Promise<void> {
    if (entry.keeper !== undefined || entry.unloading || this.closed) return Promise.resolve();
    entry.takingOver ??= (async () => {
      try {
        const keeper = await this.own(entry);
        // Owned here now: nobody else to tell that its clients watch.
        entry.heartbeat?.();
        entry.heartbeat = undefined;
        entry.takeoverFailure = undefined;
        entry.remote?.adopt(keeper);
      } catch (error) {
        // Another process was quicker: it serves the session now. Anything else (the store is
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
   * Stops answering other processes' requests for the session and relaying its progress, and
   * stops telling its owner that clients here watch it.
   */
  private stopServing(entry: Entry): void {
    entry.stopServing?.();
    entry.stopServing = undefined;
    entry.heartbeat?.();
    entry.heartbeat = undefined;
  }

  /**
   * Lets the entry's session go: stops serving, closes the keeper and the follower. With
   * `reason` the session is let go while clients may follow it (SCALE-2): those that follow it
   * through the follower are told why (`SessionEndedError`, LIFE-2).
   */
  private unload(entry: Entry, reason?: Error): Promise<void> {
    entry.unloading = true;
    this.disarm(entry);
    this.stopServing(entry);
    const unloading = (async () => {
      try {
        await entry.keeper?.close({ cancel: false });
      } finally {
        if (reason !== undefined) entry.remote?.events.close(reason);
        await entry.remote?.close();
      }
    })();
    const tracked = unloading.catch(() => undefined);
    this.unloadings.add(tracked);
    void tracked.then(() => this.unloadings.delete(tracked));
    return unloading;
  }

  /** Answers a session's questions with a denial once nobody watched it for the idle time. */
  private idleDenial(entry: Entry, idleTimeoutMs: number): ApprovalHandler {
    const minutes = idleTimeoutMs / 60_000;
    const answer: ApprovalAnswer = {
      decision: 'deny',
      reason:
        'nobody was connected to answer it: no client watched this session for ' +
        `${minutes >= 1 ? `${Math.round(minutes)} min` : `${idleTimeoutMs} ms`} ` +
        `(${this.name}'s idle timeout)`,
    };
    const expired = (signal: AbortSignal): Promise<void> => {
      if (entry.expired) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const deny = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = (): void => {
          entry.waiters.delete(deny);
          reject(abortReason(signal));
        };
        entry.waiters.add(deny);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    };
    return {
      approve: (_prompt: ApprovalPrompt, signal: AbortSignal) =>
        expired(signal).then(() => answer),
      // A request for input of an MCP server (MCP-7) waits like a question, for a client here or
      // another process's (SCALE-4), and is declined when nobody watched for the idle time.
      elicit: (_prompt: ElicitationPrompt, signal: AbortSignal) =>
        expired(signal).then(() => ({ action: 'decline' as const })),
    };
  }

  /** A client came: the idle time stops, and the use its last client left is given up. */
  private touch(entry: Entry): void {
    this.disarm(entry);
    entry.expired = false;
    const hold = entry.hold;
    entry.hold = undefined;
    // Never the last use: the client that came holds one.
    void hold?.release().catch(() => undefined);
  }

  /**
   * A client left. The last one's use is kept for the idle time, or with no idle timeout given
   * up at once: the session is then let go, and its release is what this resolves with.
   */
  private leave(entry: Entry, lease: SharedLease<Entry>): Promise<void> {
    entry.clients -= 1;
    if (entry.clients > 0 || this.closed || entry.unloading) return lease.release();
    if (this.options.idleTimeoutMs === undefined) return lease.release();
    const previous = entry.hold;
    entry.hold = lease;
    this.arm(entry);
    return previous?.release() ?? Promise.resolve();
  }

  /** (Re)starts the entry's idle time. */
  private arm(entry: Entry): void {
    const idleTimeoutMs = this.options.idleTimeoutMs;
    if (idleTimeoutMs === undefined || entry.unloading) return;
    this.disarm(entry);
    entry.timer = this.setTimer(() => {
      entry.timer = undefined;
      // A timer's work has nobody to throw to: what fails is said, and the process goes on.
      this.expire(entry).catch((error: unknown) => {
        this.report(entry, 'could not be let go after the idle timeout', error);
      });
    }, idleTimeoutMs);
  }

  private disarm(entry: Entry): void {
    entry.timer?.();
    entry.timer = undefined;
  }

  /**
   * The idle time ran out: deny what waits, let the session go once no task runs (unless a
   * client came). A session that cannot be stored or released (its store is away) is let go all
   * the same, and said: it is the store's again, and a client that comes back reads it there.
   */
  private async expire(entry: Entry): Promise<void> {
    if (entry.clients > 0 || entry.unloading) return;
    entry.expired = true;
    for (const deny of [...entry.waiters]) deny();
    entry.waiters.clear();
    await entry.keeper?.idle().catch(() => undefined);
    await entry.takingOver?.catch(() => undefined);
    if (entry.clients > 0 || !entry.expired || entry.unloading) return;
    const hold = entry.hold;
    entry.hold = undefined;
    // The last use: the session is let go now.
    await hold?.release().catch((error: unknown) => {
      this.report(entry, 'could not be stored and let go after the idle timeout', error);
    });
  }

  /** Says what failed in the background (`onError`); a listener that throws changes nothing. */
  private report(entry: Entry, what: string, error: unknown): void {
    try {
      this.options.onError?.(
        error,
        `session ${JSON.stringify(entry.sessionId)} (${entry.workDir}) ${what}`,
      );
    } catch {
      // Nothing more to do: the failure was to be said, and saying it failed.
    }
  }
}
