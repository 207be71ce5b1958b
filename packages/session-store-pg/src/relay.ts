import { errorMessage, KeyedThrottle, Listeners, type TaskToolProgress } from '@claw/core';
import {
  SessionLogError,
  type LogRecord,
  type OwnerInbox,
  type ProgressChannel,
  type RelayReply,
  type RelayRequest,
  type SessionOwner,
  type SessionReplication,
} from '@claw/session-store';
import type pg from 'pg';
import { connectionSettingsOfPool, storeUnavailable } from './connection.js';
import { PgListener } from './listener.js';
import { readError, recordsOf, type ChangeRow } from './rows.js';

/** The channel NOTIFY wakes readers on; the payload is `[sessionId, lastSeq]` as JSON. */
export const changesChannel = 'claw_changes';
/** The channel of the inbox: `["request", sessionId]` or `["reply", sessionId, requestRowId]`. */
export const inboxChannel = 'claw_inbox';
/**
 * The channel of running tools' progress (`publishProgress`): the payload is `[sessionId, taskId,
 * toolCallId, toolName, progress, total | null, message | null]`. Unlike the other two it carries
 * the data itself: progress is never stored, so one lost is simply not shown.
 */
export const progressChannel = 'claw_progress';

/** The least time between two progress reports of one tool call sent to other instances, in ms. */
export const progressEveryMs = 1000;
/** NOTIFY refuses payloads of 8000 bytes or more; a message is shortened to stay below this. */
const maxProgressPayloadBytes = 7000;

/** Options of {@link PgRelay}. */
export interface PgRelayOptions {
  pool: pg.Pool;
  instanceId: string;
  /** How often a waiting reader or owner looks at the rows without being woken, in ms. */
  pollMs: number;
  /** How long `send` waits for an owner to take a request, by default, in ms. */
  sendTimeoutMs: number;
  location: (id: string) => string;
  /**
   * The lease this instance holds on `id` for its inbox claims (LIFE-2): the owner token and
   * epoch of the session row a claim must still find; undefined when it holds none (or lost it).
   */
  leaseOf: (id: string) => { token: string; epoch: number } | undefined;
  /** How long closing the LISTEN connection may take, by default, in ms. */
  closeTimeoutMs: number;
}

type Waiters = Map<string, Set<() => void>>;

/** A row of `readSince`: the session's last seq, and one change after the cursor, if any. */
type ReadRow = { last_seq: string } & { [column in keyof ChangeRow]: ChangeRow[column] | null };

/**
 * The shared-session half of the PostgreSQL log (SCALE-4), all three relay parts: readers of
 * other instances' sessions (records by seq, woken by NOTIFY, with a poll as backstop), the inbox
 * through which their clients' requests reach the owner, in order, each answered once, and the
 * progress of the owner's running tools (NOTIFY only).
 */
export class PgRelay implements SessionReplication, OwnerInbox, ProgressChannel {
  private readonly options: PgRelayOptions;
  private readonly changeWaiters: Waiters = new Map();
  private readonly requestWaiters: Waiters = new Map();
  private readonly replyWaiters = new Map<string, () => void>();
  private readonly progressListeners = new Map<string, Listeners<TaskToolProgress>>();
  /** At most one published report a tool call (by session and call) every `progressEveryMs`. */
  private readonly progressThrottle = new KeyedThrottle(progressEveryMs, 256);
  private listener: PgListener | undefined;
  /** The sessions this instance serves (one entry per `serve`), for the shared poll. */
  private readonly served = new Set<{ id: string; drain: () => void }>();
  private poller: ReturnType<typeof setInterval> | undefined;

  constructor(options: PgRelayOptions) {
    this.options = options;
  }

  get instanceId(): string {
    return this.options.instanceId;
  }

  /**
   * Stops polling and closes the LISTEN connection, within `timeoutMs` (then dropped). Resolves
   * false when it had to be dropped.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<boolean> {
    clearInterval(this.poller);
    this.poller = undefined;
    const listener = this.listener;
    this.listener = undefined;
    if (listener === undefined) return true;
    return listener.close({ timeoutMs: options.timeoutMs ?? this.options.closeTimeoutMs });
  }

  /** Starts the LISTEN connection on first use; resolves once it tried to connect. */
  private listen(): Promise<void> {
    this.listener ??= new PgListener({
      config: {
        ...(this.options.pool.options as pg.ClientConfig),
        application_name: `claw ${this.options.instanceId} listen`.slice(0, 63),
      },
      closeTimeoutMs: this.options.closeTimeoutMs,
      channels: [changesChannel, inboxChannel, progressChannel],
      onNotification: (channel, payload) => this.notified(channel, payload),
      // Whatever was sent while it was down is lost: every waiter looks again.
      onConnected: () => {
        for (const waiters of [this.changeWaiters, this.requestWaiters]) {
          for (const set of waiters.values()) for (const wake of set) wake();
        }
        for (const wake of this.replyWaiters.values()) wake();
      },
    });
    return this.listener.start();
  }

  private notified(channel: string, payload: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return;
    }
    if (!Array.isArray(parsed)) return;
    if (channel === changesChannel && typeof parsed[0] === 'string') {
      wakeAll(this.changeWaiters, parsed[0]);
    } else if (channel === inboxChannel && parsed[0] === 'request' && typeof parsed[1] === 'string') {
      wakeAll(this.requestWaiters, parsed[1]);
    } else if (channel === inboxChannel && parsed[0] === 'reply') {
      this.replyWaiters.get(String(parsed[2]))?.();
    } else if (channel === progressChannel) {
      const progress = progressOf(parsed);
      if (progress === undefined) return;
      this.progressListeners.get(progress.sessionId)?.emit(progress.report);
    }
  }

  publishProgress(id: string, progress: TaskToolProgress): void {
    if (!this.progressThrottle.allow(`${id}\n${progress.toolCallId}`)) return;
    const payload = progressPayload(id, progress);
    if (payload === undefined) return;
    this.options.pool.query('SELECT pg_notify($1, $2)', [progressChannel, payload])
      .catch(() => undefined);
  }

  onProgress(id: string, listener: (progress: TaskToolProgress) => void): () => void {
    void this.listen();
    let listeners = this.progressListeners.get(id);
    if (listeners === undefined) {
      listeners = new Listeners();
      this.progressListeners.set(id, listeners);
    }
    const remove = listeners.add(listener);
    const own = listeners;
    return () => {
      remove();
      if (own.size > 0 || this.progressListeners.get(id) !== own) return;
      this.progressListeners.delete(id);
    };
  }

  watch(id: string, wake: () => void): () => void {
    void this.listen();
    return addWaiter(this.changeWaiters, id, wake);
  }

  async readSince(
    id: string,
    afterSeq: number,
    options: { limit?: number } = {},
  ): Promise<{ records: LogRecord[]; oldestSeq: number }> {
    const location = this.options.location(id);
    try {
      // The rows and the session's last seq as of one moment (one statement, one snapshot): read
      // apart, a write committing between them would pass for a compaction. One row with null
      // columns of the change when there are none after `afterSeq`; no row for no session.
      const result = await this.options.pool.query<ReadRow>(
        `SELECT s.last_seq, c.seq, c.at, c.change FROM claw_sessions s
         LEFT JOIN LATERAL (
           SELECT seq, at, change FROM claw_changes
           WHERE session_id = s.id AND seq > $2 ORDER BY seq LIMIT $3
         ) c ON true
         WHERE s.id = $1 ORDER BY c.seq`,
        [id, afterSeq, Math.max(1, options.limit ?? 500)],
      );
      const changes = result.rows.filter((row): row is ReadRow & ChangeRow => row.seq !== null);
      const records = recordsOf(changes, location);
      const first = records[0];
      if (first !== undefined) return { records, oldestSeq: first.seq };
      // None after it: compacted away, or nothing new.
      const last = Number(result.rows[0]?.last_seq ?? 0);
      return { records, oldestSeq: last > afterSeq ? last + 1 : afterSeq + 1 };
    } catch (error) {
      throw readError(error, location, connectionSettingsOfPool(this.options.pool));
    }
  }

  async ownerOf(id: string): Promise<SessionOwner | undefined> {
    const rows = await this.options.pool.query<{ owner_instance: string | null; live: boolean }>(
      `SELECT owner_instance, coalesce(lease_until > now(), false) AS live
       FROM claw_sessions WHERE id = $1 AND owner IS NOT NULL`,
      [id],
    );
    const row = rows.rows[0];
    return row === undefined ? undefined : { instance: row.owner_instance ?? '?', live: row.live };
  }

  async send(
    id: string,
    request: RelayRequest,
    options: { timeoutMs?: number } = {},
  ): Promise<RelayReply> {
    const location = this.options.location(id);
    const timeoutMs = options.timeoutMs ?? this.options.sendTimeoutMs;
    await this.listen();
    const { pool } = this.options;
    let rowId: string;
    try {
      // The request and the owner's wake-up: one statement.
      const inserted = await pool.query<{ id: string }>(
        `WITH request AS (
           INSERT INTO claw_inbox (session_id, kind, payload, from_instance) VALUES ($1, $2, $3, $4)
           RETURNING id
         )
         SELECT id, pg_notify($5, $6) FROM request`,
        [
          id,
          request.kind,
          JSON.stringify(request),
          this.options.instanceId,
          inboxChannel,
          JSON.stringify(['request', id]),
        ],
      );
      rowId = String(inserted.rows[0]?.id);
    } catch (error) {
      const cause = storeUnavailable(
        error,
        `handing a ${request.kind} to the owner of ${location}`,
        connectionSettingsOfPool(pool),
      );
      throw new SessionLogError(
        cause?.message ??
        `Could not hand a ${request.kind} to the owner of ${location}: ${errorMessage(error)}. ` +
        'Check that PostgreSQL is reachable, then retry.',
        { code: 'session_write_failed', location, cause: cause ?? error },
      );
    }
    const unreachable = (): SessionLogError => new SessionLogError(
      `The claw instance that owns ${location} did not take a ${request.kind} within ` +
      `${timeoutMs} ms; it was withdrawn. Retry: the session is taken over once its owner's lease lapses.`,
      { code: 'session_owner_unreachable', location },
    );
    let wake: () => void = () => undefined;
    this.replyWaiters.set(rowId, () => wake());
    try {
      const deadline = Date.now() + timeoutMs;
      let taken = false;
      for (;;) {
        const row = await pool.query<{ taken: boolean; reply: RelayReply | null }>(
          'SELECT taken_at IS NOT NULL AS taken, reply FROM claw_inbox WHERE id = $1',
          [rowId],
        ).then((result) => result.rows[0], () => undefined);
        if (row?.reply !== undefined && row.reply !== null) {
          await pool.query('DELETE FROM claw_inbox WHERE id = $1', [rowId]).catch(() => undefined);
          return row.reply;
        }
        taken ||= row?.taken === true;
        if (Date.now() >= deadline) {
          if (taken) {
            // Taken and being worked on: its reply is near (a prompt or answer is quick).
            if (Date.now() >= deadline + timeoutMs) throw unreachable();
          } else {
            const withdrawn = await pool.query(
              'UPDATE claw_inbox SET taken_at = now(), reply = $2 WHERE id = $1 AND taken_at IS NULL RETURNING 1',
              [rowId, JSON.stringify({ ok: false, code: 'withdrawn', message: 'withdrawn' })],
            ).catch(() => undefined);
            if (withdrawn?.rowCount === 1) {
              await pool.query('DELETE FROM claw_inbox WHERE id = $1', [rowId]).catch(() => undefined);
              throw unreachable();
            }
            taken = true;
          }
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(this.options.pollMs, 250));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      this.replyWaiters.delete(rowId);
    }
  }

  serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void {
    const { pool } = this.options;
    let stopped = false;
    let running = false;
    let again = false;
    const drain = async (): Promise<void> => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const open = await pool.query<{ id: string }>(
            'SELECT id FROM claw_inbox WHERE session_id = $1 AND taken_at IS NULL ORDER BY id',
            [id],
          );
          for (const { id: rowId } of open.rows) {
            if (stopped) return;
            // Only the owner of the session's current epoch may take a request (LIFE-2), in the
            // statement itself: one taken over (or whose lease lapsed) and not yet aware of it
            // takes nothing, and the request waits for the new owner.
            const lease = this.options.leaseOf(id);
            if (lease === undefined) return;
            const claimed = await pool.query<{ payload: RelayRequest }>(
              `UPDATE claw_inbox AS request SET taken_at = now()
               FROM claw_sessions AS session
               WHERE request.id = $1 AND request.taken_at IS NULL
                 AND session.id = request.session_id AND session.owner = $2
                 AND session.epoch = $3 AND session.lease_until > now()
               RETURNING request.payload`,
              [rowId, lease.token, lease.epoch],
            );
            const request = claimed.rows[0]?.payload;
            if (request === undefined) continue;
            const reply = await handle(request).catch((error: unknown): RelayReply => ({
              ok: false,
              code: 'internal_error',
              message: errorMessage(error),
            }));
            // The reply and its sender's wake-up: one statement.
            await pool.query(
              `WITH replied AS (UPDATE claw_inbox SET reply = $2 WHERE id = $1 RETURNING id)
               SELECT pg_notify($3, $4) FROM replied`,
              [rowId, JSON.stringify(reply), inboxChannel, JSON.stringify(['reply', id, rowId])],
            );
          }
        } while (again && !stopped);
      } catch {
        // The database is away: the next wake-up or poll tries again.
      } finally {
        running = false;
      }
    };
    void this.listen();
    const unwatch = addWaiter(this.requestWaiters, id, () => void drain());
    const served = { id, drain: () => void drain() };
    this.served.add(served);
    this.poller ??= this.startPolling();
    void drain();
    return () => {
      stopped = true;
      unwatch();
      this.served.delete(served);
      if (this.served.size === 0) {
        clearInterval(this.poller);
        this.poller = undefined;
      }
    };
  }

  /**
   * The backstop of lost wake-ups for every session this instance serves: one look at the inbox
   * per `pollMs` for all of them (not one per session), and a drain of those with requests.
   */
  private startPolling(): ReturnType<typeof setInterval> {
    let polls = 0;
    let polling = false;
    const poller = setInterval(() => {
      if (polling) return;
      polling = true;
      polls += 1;
      const sweep = polls % 60 === 0;
      void this.poll(sweep).finally(() => {
        polling = false;
      });
    }, this.options.pollMs);
    poller.unref();
    return poller;
  }

  private async poll(sweep: boolean): Promise<void> {
    const ids = [...new Set([...this.served].map((served) => served.id))];
    if (ids.length === 0) return;
    const { pool } = this.options;
    try {
      const waiting = await pool.query<{ session_id: string }>(
        'SELECT DISTINCT session_id FROM claw_inbox WHERE session_id = ANY($1::text[]) AND taken_at IS NULL',
        [ids],
      );
      const due = new Set(waiting.rows.map((row) => row.session_id));
      for (const served of this.served) if (due.has(served.id)) served.drain();
      // Replies nobody read (their sender stopped) are let go after a while.
      if (sweep) {
        await pool.query(
          'DELETE FROM claw_inbox WHERE session_id = ANY($1::text[]) AND taken_at < now() - interval \'10 minutes\'',
          [ids],
        );
      }
    } catch {
      // The database is away: the next poll tries again.
    }
  }
}

function addWaiter(waiters: Waiters, id: string, wake: () => void): () => void {
  let set = waiters.get(id);
  if (set === undefined) {
    set = new Set();
    waiters.set(id, set);
  }
  set.add(wake);
  return () => {
    set.delete(wake);
    if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
  };
}

function wakeAll(waiters: Waiters, id: string): void {
  for (const wake of waiters.get(id) ?? []) wake();
}

/**
 * The NOTIFY payload of one progress report, its message shortened until the payload fits;
 * undefined when even the report without a message does not (ids of absurd length).
 */
function progressPayload(id: string, progress: TaskToolProgress): string | undefined {
  let message = progress.message;
  for (;;) {
    const payload = JSON.stringify([
      id,
      progress.taskId,
      progress.toolCallId,
      progress.toolName,
      progress.progress,
      progress.total ?? null,
      message ?? null,
    ]);
    if (Buffer.byteLength(payload) < maxProgressPayloadBytes) return payload;
    if (message === undefined || message.length === 0) return undefined;
    message = message.length > 16 ? `${message.slice(0, Math.floor(message.length / 2))}…` : '';
  }
}

/** Reads a progress payload; undefined when it is not one (another sender's, a future shape). */
function progressOf(
  parsed: unknown[],
): { sessionId: string; report: TaskToolProgress } | undefined {
  const [sessionId, taskId, toolCallId, toolName, progress, total, message] = parsed;
  if (
    typeof sessionId !== 'string' || typeof taskId !== 'string' ||
    typeof toolCallId !== 'string' || typeof toolName !== 'string' ||
    typeof progress !== 'number' || !(total === null || typeof total === 'number') ||
    !(message === null || typeof message === 'string')
  ) {
    return undefined;
  }
  return {
    sessionId,
    report: {
      taskId,
      toolCallId,
      toolName,
      progress,
      ...(total === null ? {} : { total }),
      ...(message === null ? {} : { message }),
    },
  };
}
