import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { ClawError, Listeners, errorMessage, type TaskToolProgress } from '@claw/core';
import { SessionLockedError, SessionLogError, type SessionLockHolder } from './errors.js';
import { MemorySessionLog } from './memory-session-log.js';
import {
  recordsToStore,
  type AppendResult,
  type LogRecord,
  type SessionLog,
  type SessionLogLock,
  type SessionPage,
  type SessionSnapshot,
  type StoredLog,
} from './session-log.js';
import {
  leaseLostCode,
  type OwnerInbox,
  type ProgressChannel,
  type RelayReply,
  type RelayRequest,
  type SessionOwner,
  type SessionRelay,
  type SessionReplication,
} from './session-relay.js';

/** Options of {@link MemoryRelay}. */
export interface MemoryRelayOptions {
  /** This instance's id. Default: a random UUID. */
  instanceId?: string;
  /** The clock leases run on, in ms. Default: `Date.now`. */
  now?: () => number;
  /** How long the leases of a frozen instance last on, in ms (`freeze`). Default 10 000. */
  leaseMs?: number;
  /** How long `send` waits for the owner to take a request, by default, in ms. Default 15 000. */
  sendTimeoutMs?: number;
  /** The timers of `send` (default `setTimeout`, not keeping the process alive). */
  setTimer?: (callback: () => void, ms: number) => () => void;
  /** Records after a snapshot before `append` says compaction is due. Default 1000. */
  compactAfterRecords?: number;
  /**
   * Records a compaction keeps before its snapshot for followers a little behind (`readSince`);
   * one further behind reads the snapshot again. Default 1000.
   */
  keptAfterCompaction?: number;
}

interface Ownership {
  instance: MemoryRelay;
  token: string;
  holder: SessionLockHolder;
}

interface Request {
  request: RelayRequest;
  taken: boolean;
  reply: (reply: RelayReply) => void;
}

interface Server {
  instance: MemoryRelay;
  handle: (request: RelayRequest) => Promise<RelayReply>;
  running: boolean;
  again: boolean;
  stopped: boolean;
}

/** What the instances of one {@link MemoryRelay} share: the sessions, as a database holds them. */
interface Shared {
  storage: MemorySessionLog;
  /**
   * The records followers read, by session (`readSince`): every record appended, and those a
   * compaction carries, kept past the snapshot up to `kept` before it.
   */
  rows: Map<string, LogRecord[]>;
  kept: number;
  now: () => number;
  leaseMs: number;
  owners: Map<string, Ownership>;
  watchers: Map<string, Set<() => void>>;
  inboxes: Map<string, Request[]>;
  servers: Map<string, Set<Server>>;
  progress: Map<string, Listeners<TaskToolProgress>>;
}

const defaultSetTimer = (callback: () => void, ms: number): (() => void) => {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * Sessions in memory that several processes share (SCALE-4), for tests and library users: each
 * instance (`new MemoryRelay()`, then `instance()` for each other process) is one process's
 * `SessionLog` over the same sessions, with all three relay parts. A session is owned by the
 * instance that acquired it, by lease: it lasts while that instance lives, and lapses `leaseMs`
 * after the instance was frozen (`freeze`, a process that stopped), on the clock `now`; another
 * instance's `acquire` then takes the session over, and the frozen owner's late writes are
 * refused with `lease_lost`. Only the owner takes the requests sent to a session.
 */
export class MemoryRelay implements SessionLog, SessionReplication, OwnerInbox, ProgressChannel {
  readonly instanceId: string;
  private shared: Shared;
  private readonly sendTimeoutMs: number;
  private readonly setTimer: (callback: () => void, ms: number) => () => void;
  /** The lease token of each session this instance acquired (and may have lost since). */
  private readonly leases = new Map<string, string>();
  /** The lease token behind each lock `acquire` returned, to fence writes made under a lock. */
  private readonly tokenOfLock = new WeakMap<SessionLogLock, string>();
  private frozenAt: number | undefined;

  constructor(options: MemoryRelayOptions = {}) {
    this.instanceId = options.instanceId ?? randomUUID();
    this.sendTimeoutMs = options.sendTimeoutMs ?? 15_000;
    this.setTimer = options.setTimer ?? defaultSetTimer;
    this.shared = {
      storage: new MemorySessionLog(
        options.compactAfterRecords === undefined
          ? {}
          : { compactAfterRecords: options.compactAfterRecords },
      ),
      rows: new Map(),
      kept: options.keptAfterCompaction ?? 1000,
      now: options.now ?? Date.now,
      leaseMs: options.leaseMs ?? 10_000,
      owners: new Map(),
      watchers: new Map(),
      inboxes: new Map(),
      servers: new Map(),
      progress: new Map(),
    };
  }

  /** Another process on the same sessions (its own id, and the options given). */
  instance(
    instanceId: string = randomUUID(),
    options: Pick<MemoryRelayOptions, 'sendTimeoutMs' | 'setTimer'> = {},
  ): MemoryRelay {
    const other = new MemoryRelay({
      instanceId,
      sendTimeoutMs: options.sendTimeoutMs ?? this.sendTimeoutMs,
      setTimer: options.setTimer ?? this.setTimer,
    });
    other.shared = this.shared;
    return other;
  }

  /** All three parts, each this log. */
  relayParts(): SessionRelay {
    return { replication: this, inbox: this, progress: this };
  }

  /**
   * This instance stops (kill -9, SIGSTOP): it no longer renews its leases, which lapse
   * `leaseMs` later, and it takes no more requests.
   */
  freeze(): void {
    this.frozenAt ??= this.shared.now();
  }

  location(id: string): string {
    return this.shared.storage.location(id);
  }

  async acquire(id: string): Promise<SessionLogLock> {
    this.location(id);
    const current = this.shared.owners.get(id);
    if (current !== undefined && this.live(current)) {
      throw new SessionLockedError(
        `Session ${JSON.stringify(id)} is in use by claw instance ${current.instance.instanceId}. ` +
        'Open it there, or wait until that instance lets it go.',
        { sessionId: id, holder: current.holder },
      );
    }
    const token = randomUUID();
    const holder: SessionLockHolder = {
      pid: process.pid,
      host: os.hostname(),
      startedAt: new Date(this.shared.now()).toISOString(),
    };
    this.shared.owners.set(id, { instance: this, token, holder });
    this.leases.set(id, token);
    this.wake(id);
    this.drain(id);
    const lock: SessionLogLock = {
      holder,
      release: async () => {
        if (this.leases.get(id) === token) this.leases.delete(id);
        if (this.shared.owners.get(id)?.token !== token) return;
        this.shared.owners.delete(id);
        this.wake(id);
      },
    };
    this.tokenOfLock.set(lock, token);
    return lock;
  }

  async load(id: string): Promise<StoredLog | undefined> {
    return this.shared.storage.load(id);
  }

  async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; lock?: SessionLogLock },
  ): Promise<AppendResult> {
    this.fence(id, options.lock);
    const result = await this.shared.storage.append(id, records, options);
    this.rowsOf(id).push(...structuredClone([...records]));
    this.wake(id);
    return result;
  }

  /**
   * Replaces the stored log with `snapshot`. The `records` it holds that go on from the last
   * record followers can read become readable too, so that they get every change and event.
   */
  async compact(
    id: string,
    snapshot: SessionSnapshot,
    options: { records?: readonly LogRecord[]; lock?: SessionLogLock } = {},
  ): Promise<void> {
    this.fence(id, options.lock);
    await this.shared.storage.compact(id, snapshot);
    const rows = this.rowsOf(id);
    const lastSeq = rows.at(-1)?.seq ?? 0;
    rows.push(...structuredClone(
      recordsToStore(options.records ?? [], { lastSeq, snapshotSeq: snapshot.seq }),
    ));
    // What follows the snapshot is the new log's; some records before it stay for followers.
    const kept = rows.filter(
      (record) => record.seq > snapshot.seq - this.shared.kept && record.seq <= snapshot.seq,
    );
    this.shared.rows.set(id, kept);
    this.wake(id);
  }

  async remove(id: string): Promise<void> {
    this.fence(id);
    await this.shared.storage.remove(id);
    this.shared.rows.delete(id);
    this.wake(id);
  }

  list(options?: { limit?: number; after?: string }): Promise<SessionPage> {
    return this.shared.storage.list(options);
  }

  async readSince(
    id: string,
    afterSeq: number,
    options: { limit?: number } = {},
  ): Promise<{ records: LogRecord[]; oldestSeq: number }> {
    this.location(id);
    const records = structuredClone((this.shared.rows.get(id) ?? [])
      .filter((record) => record.seq > afterSeq)
      .slice(0, Math.max(1, options.limit ?? 500)));
    const first = records[0];
    if (first !== undefined) return { records, oldestSeq: first.seq };
    // None after it: compacted away, or nothing new (a load, a copy of the session, only then).
    const stored = await this.shared.storage.load(id);
    if (stored === undefined) return { records, oldestSeq: afterSeq + 1 };
    const last = stored.records.at(-1)?.seq ?? stored.snapshot.seq;
    return { records, oldestSeq: last > afterSeq ? last + 1 : afterSeq + 1 };
  }

  watch(id: string, wake: () => void): () => void {
    return addTo(this.shared.watchers, id, wake);
  }

  async ownerOf(id: string): Promise<SessionOwner | undefined> {
    const owner = this.shared.owners.get(id);
    return owner === undefined
      ? undefined
      : { instance: owner.instance.instanceId, live: this.live(owner) };
  }

  send(
    id: string,
    request: RelayRequest,
    options: { timeoutMs?: number } = {},
  ): Promise<RelayReply> {
    const location = this.location(id);
    const timeoutMs = options.timeoutMs ?? this.sendTimeoutMs;
    return new Promise<RelayReply>((resolve, reject) => {
      const unreachable = (): SessionLogError => new SessionLogError(
        `The claw instance that owns ${location} did not take a ${request.kind} within ` +
        `${timeoutMs} ms; it was withdrawn. Retry: the session is taken over once its owner's ` +
        'lease lapses.',
        { code: 'session_owner_unreachable', location },
      );
      const queue = this.shared.inboxes.get(id) ?? [];
      this.shared.inboxes.set(id, queue);
      let cancel: () => void = () => undefined;
      const sent: Request = {
        request: structuredClone(request),
        taken: false,
        reply: (reply) => {
          cancel();
          resolve(reply);
        },
      };
      const withdraw = (): void => {
        const index = queue.indexOf(sent);
        if (index >= 0) queue.splice(index, 1);
        sent.reply = () => undefined;
        reject(unreachable());
      };
      // Taken in time: its reply is near (a prompt or an answer is quick), and waited for as long
      // again; not taken: withdrawn, so that a late owner never acts on it.
      cancel = this.setTimer(() => {
        if (!sent.taken) {
          withdraw();
          return;
        }
        cancel = this.setTimer(withdraw, timeoutMs);
      }, timeoutMs);
      queue.push(sent);
      this.drain(id);
    });
  }

  serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void {
    const server: Server = { instance: this, handle, running: false, again: false, stopped: false };
    const remove = addTo(this.shared.servers, id, server);
    void this.serveFrom(id, server);
    return () => {
      server.stopped = true;
      remove();
    };
  }

  publishProgress(id: string, progress: TaskToolProgress): void {
    this.shared.progress.get(id)?.emit(structuredClone(progress));
  }

  onProgress(id: string, listener: (progress: TaskToolProgress) => void): () => void {
    const listeners = this.shared.progress.get(id) ?? new Listeners<TaskToolProgress>();
    this.shared.progress.set(id, listeners);
    const remove = listeners.add(listener);
    return () => {
      remove();
      if (listeners.size === 0 && this.shared.progress.get(id) === listeners) {
        this.shared.progress.delete(id);
      }
    };
  }

  private rowsOf(id: string): LogRecord[] {
    let rows = this.shared.rows.get(id);
    if (rows === undefined) {
      rows = [];
      this.shared.rows.set(id, rows);
    }
    return rows;
  }

  private live(owner: Ownership): boolean {
    const frozenAt = owner.instance.frozenAt;
    return frozenAt === undefined || this.shared.now() < frozenAt + this.shared.leaseMs;
  }

  /**
   * @throws ClawError `lease_lost` when another instance owns `id` now (SCALE-2), or the write is
   *   made under a `lock` that is not this instance's current one (an earlier hold's).
   */
  private fence(id: string, lock?: SessionLogLock): void {
    const owner = this.shared.owners.get(id);
    const mine = lock === undefined ? this.leases.get(id) : this.tokenOfLock.get(lock) ?? '';
    const lost = mine === undefined
      ? owner !== undefined && owner.instance !== this
      : owner?.token !== mine;
    if (!lost) return;
    throw new ClawError(
      `Session ${JSON.stringify(id)} was taken over by another claw instance` +
      `${owner === undefined ? '' : ` (${owner.instance.instanceId})`}: this instance writes ` +
      'nothing more to it. Reopen the session to continue it.',
      { code: leaseLostCode },
    );
  }

  private wake(id: string): void {
    for (const wake of [...(this.shared.watchers.get(id) ?? [])]) {
      try {
        wake();
      } catch {
        // A reader's wake-up is its own; the write went through.
      }
    }
  }

  /** Lets every server of `id` take what waits in its inbox. */
  private drain(id: string): void {
    for (const server of this.shared.servers.get(id) ?? []) {
      void server.instance.serveFrom(id, server);
    }
  }

  /** Serves the requests waiting for `id`, one at a time, while this instance owns it. */
  private async serveFrom(id: string, server: Server): Promise<void> {
    if (server.running) {
      server.again = true;
      return;
    }
    server.running = true;
    try {
      do {
        server.again = false;
        for (;;) {
          const owner = this.shared.owners.get(id);
          // Only the owner takes requests, and a frozen one takes nothing.
          if (server.stopped || owner?.instance !== this || this.frozenAt !== undefined) return;
          const next = this.shared.inboxes.get(id)?.find((waiting) => !waiting.taken);
          if (next === undefined) break;
          next.taken = true;
          const reply = await server.handle(structuredClone(next.request)).catch(
            (error: unknown): RelayReply => ({
              ok: false,
              code: 'internal_error',
              message: errorMessage(error),
            }),
          );
          const queue = this.shared.inboxes.get(id) ?? [];
          const index = queue.indexOf(next);
          if (index >= 0) queue.splice(index, 1);
          next.reply(structuredClone(reply));
        }
      } while (server.again && !server.stopped);
    } finally {
      server.running = false;
    }
  }
}

function addTo<T>(map: Map<string, Set<T>>, id: string, value: T): () => void {
  let set = map.get(id);
  if (set === undefined) {
    set = new Set();
    map.set(id, set);
  }
  set.add(value);
  const own = set;
  return () => {
    own.delete(value);
    if (own.size === 0 && map.get(id) === own) map.delete(id);
  };
}
