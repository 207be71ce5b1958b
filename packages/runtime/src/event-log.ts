import {
  ClawError,
  abortReason,
  errorMessage,
  eventJson,
  findErrorWithCode,
  forgetEventJson,
  type SessionEvent,
  type SessionEventBody,
  type SetTimer,
} from '@claw/core';
import { leaseLostCode, type PersistentSession } from '@claw/session-store';
import { unrefSetTimer } from './timers.js';

/**
 * What the log needs of its session: its id, its events so far, and a way to number new ones. Its
 * events are stored in the order they were numbered: once one's `written` resolved, every event
 * before it is stored too, one whose own write failed included (a session's next write stores it
 * again). `flush`, when there is one, stores everything numbered before the call; without it, an
 * event whose write failed waits for a later write to store it.
 */
export type EventSource =
  Pick<PersistentSession, 'id' | 'lastEventSeq' | 'storedEvents' | 'appendEvent'>
  & Partial<Pick<PersistentSession, 'flush'>>;

/** How the events a failed write left unstored are stored again: delays double up to the last. */
const storeRetry = { firstMs: 100, maxMs: 5000 } as const;

/** How much of a session's events the log keeps in memory for replay (RT-4). */
export interface EventRetention {
  /** Default 10,000 events. */
  maxEvents?: number;
  /** Default 8 MiB (approximate size of the events as JSON). */
  maxBytes?: number;
}

/** How far one subscriber may fall behind before it is ended with `lagged` (RT-3). */
export interface SubscriberBound {
  /** Events committed since it subscribed that it has not read yet. Default 4,096. */
  maxEvents?: number;
  /** The same, in bytes. Default 4 MiB. */
  maxBytes?: number;
}

/** How many recent events a session's log keeps for late readers, by default (RT-4). */
export const defaultEventRetention = { maxEvents: 10_000, maxBytes: 8 * 1024 * 1024 } as const;
/**
 * How far one reader may fall behind before it is cut off, by default (`SubscriberLaggedError`).
 */
export const defaultSubscriberBound = { maxEvents: 4096, maxBytes: 4 * 1024 * 1024 } as const;

/**
 * `events({ after })` cannot be served (RT-4): the cursor is older than what the log keeps, or
 * beyond the session's last event (e.g. a cursor of another session). Start from a snapshot
 * (`Runtime.snapshot()`), whose `seq` is a cursor that can be served.
 */
export class CursorExpiredError extends ClawError {
  declare readonly code: 'cursor_expired';
  /** The oldest seq the log can replay from now (`after` = oldestSeq - 1 works). */
  readonly oldestSeq: number;
  readonly lastSeq: number;
  readonly cursor: number;

  constructor(options: { cursor: number; oldestSeq: number; lastSeq: number; sessionId: string }) {
    const { cursor, oldestSeq, lastSeq } = options;
    super(
      cursor > lastSeq
        ? `cursor ${cursor} is beyond the last event (${lastSeq}) of session ` +
        `${JSON.stringify(options.sessionId)}; it is not a cursor of this session. Open the ` +
        'session without a cursor to start from its history.'
        : `the events after ${cursor} of session ${JSON.stringify(options.sessionId)} are no ` +
          `longer kept (the oldest is ${oldestSeq}). Open the session without a cursor to start ` +
          'from its history.',
      { code: 'cursor_expired' },
    );
    this.cursor = cursor;
    this.oldestSeq = oldestSeq;
    this.lastSeq = lastSeq;
  }
}

/**
 * A subscriber fell further behind than its bound (RT-3) and was ended; the run did not wait for
 * it. Subscribe again with `after: lastSeq` to catch up from the log.
 */
export class SubscriberLaggedError extends ClawError {
  declare readonly code: 'lagged';
  /** The seq of the last event the subscriber got (its cursor). */
  readonly lastSeq: number;

  constructor(lastSeq: number) {
    super(
      `the event subscriber fell too far behind and was ended after event ${lastSeq}; subscribe ` +
      `again from ${lastSeq} to catch up`,
      { code: 'lagged' },
    );
    this.lastSeq = lastSeq;
  }
}

/**
 * Why a session's events ended while clients followed them (LIFE-2): this process lost the
 * session's lease (another instance owns it now, SCALE-2), its store cannot be reached, or the
 * process let the session go for another reason (it was dropped). The same codes go on the wire.
 */
export const sessionEndCodes = ['lease_lost', 'store_unavailable', 'session_dropped'] as const;
/** Why the process let a session go: one of `sessionEndCodes`. */
export type SessionEndCode = (typeof sessionEndCodes)[number];

/**
 * The session's log was closed while it was followed (see {@link sessionEndCodes}): its
 * subscribers end with this error after the events it stored, and nothing more can be started on
 * what this process had of the session. Open the session again to go on from the store.
 */
export class SessionEndedError extends ClawError {
  declare readonly code: SessionEndCode;
  readonly sessionId: string;

  constructor(options: {
    sessionId: string;
    code: SessionEndCode;
    message: string;
    cause?: unknown;
  }) {
    super(options.message, { code: options.code, cause: options.cause });
    this.sessionId = options.sessionId;
  }
}

/** Store failures: the session is let go because its store cannot be reached or written. */
const storeFailureCodes = ['store_unavailable', 'session_write_failed', 'session_read_failed'];

/**
 * The {@link SessionEndedError} for a session let go because of `reason`: `lease_lost` when its
 * cause chain says so, `store_unavailable` for a store that cannot be reached or written, else
 * `session_dropped`. Each message says what happened and to reopen the session.
 */
export function sessionEndOf(reason: unknown, sessionId: string): SessionEndedError {
  if (reason instanceof SessionEndedError) return reason;
  const name = JSON.stringify(sessionId);
  const lost = findErrorWithCode(reason, leaseLostCode);
  if (lost !== undefined) {
    // The store's own words say who took it, or that the lease could not be renewed.
    const said = /reopen/i.test(lost.message)
      ? lost.message
      : `session ${name} is no longer this process's (${lost.message}); reopen it to continue ` +
        'where its new owner left it';
    return new SessionEndedError({ sessionId, code: 'lease_lost', message: said, cause: reason });
  }
  const store = storeFailureCodes
    .map((code) => findErrorWithCode(reason, code))
    .find((found) => found !== undefined);
  if (store !== undefined) {
    return new SessionEndedError({
      sessionId,
      code: 'store_unavailable',
      message:
        `session ${name} was let go: its store cannot be used (${store.message}). Reopen it once ` +
        'the store is back.',
      cause: reason,
    });
  }
  return new SessionEndedError({
    sessionId,
    code: 'session_dropped',
    message:
      `session ${name} was released by this process` +
      `${reason === undefined ? '' : ` (${errorMessage(reason)})`}; reopen it to go on`,
    cause: reason,
  });
}

interface Kept {
  event: SessionEvent;
  size: number;
  /** Sum of the sizes of every committed event up to and including this one. */
  bytesThrough: number;
}

/** An event numbered and not delivered yet: its write is under way, or failed. */
interface Numbered {
  event: SessionEvent;
  size: number;
}

interface Subscriber {
  cursor: number;
  /** Every event up to here was taken: its reader asked for the next one after it. */
  taken: number;
  /** Reading up to here is replay: it does not count against the bound. */
  subscribedAt: number;
  bytesAtStart: number;
  maxEvents: number;
  maxBytes: number;
  /** Set once it fell behind; it then ends with `lagged` naming the last event it got. */
  lagged: boolean;
  wake: (() => void) | undefined;
  /**
   * `cursor` at the last check of the bound: one that was handed nothing since (and is not waiting
   * for its next event) has stopped reading.
   */
  cursorAtCheck: number;
}

/**
 * The size of an event as JSON (in UTF-16 units). Its JSON is made once per event (`eventJson`):
 * the session stored it already, and every client is sent the same text. The log lets the text go
 * once every subscriber took the event (`releaseEncoding`); a replay encodes it again.
 */
function sizeOf(event: SessionEvent): number {
  return eventJson(event).length;
}

/**
 * The events of one session (RT-3, RT-4). `append` numbers an event (through the session, so seq
 * continues after a restart), stores it with the session and returns it at once: the caller (the
 * run) never waits. An event is delivered to subscribers once it is stored, in seq order, so a
 * subscriber never sees an event that a crash could take back and number again. One whose write
 * failed is held, and the events after it wait behind it, until a later write or a retry
 * (`flush`, with a growing delay) stores it; a log closed before that never delivers it.
 *
 * Recent events stay in memory (bounded by count and bytes) for replay. Each subscriber is a
 * cursor into them with its own bound: one that falls further behind than the bound (counting
 * only what arrived after it subscribed) is ended with `SubscriberLaggedError`, and one whose
 * next event was dropped from memory too.
 */
export class SessionEventLog {
  readonly sessionId: string;
  private readonly session: EventSource;
  private readonly retention: Required<EventRetention>;
  private readonly bound: Required<SubscriberBound>;
  /** Kept events from `keptStart` on (a queue without O(n) shifts). */
  private kept: Kept[] = [];
  private keptStart = 0;
  private keptBytes = 0;
  private committedBytes = 0;
  /** The last delivered (committed) event. */
  private committed: number;
  /** Events numbered but not yet committed, in order (see `dropped` for those let go). */
  private inFlight: Numbered[] = [];
  private inFlightBytes = 0;
  /** Writes of events under way (their `written` has not settled). */
  private writing = 0;
  /** Every event up to here is stored: the session stores them in order (see EventSource). */
  private storedSeq: number;
  /** The last event whose write failed while it is not stored yet, and why: it is held. */
  private failed: { seq: number; error: unknown } | undefined;
  /**
   * Held events outgrew the retention and were let go from memory: those up to here. Once they
   * are stored, the log goes on after them as after a gap (see `ingest`).
   */
  private dropped: number | undefined;
  /** Cancels the retry that is due (`retryLater`). */
  private cancelRetry: (() => void) | undefined;
  private retryDelay: number = storeRetry.firstMs;
  private readonly setTimer: SetTimer;
  private readonly onError: (error: unknown, what: string) => void;
  private readonly subscribers = new Set<Subscriber>();
  private closed = false;
  /** A check of the subscribers' bounds is scheduled (`checkBounds`). */
  private boundCheckDue = false;
  /** Set once a write said this process no longer owns the session (SCALE-2): the store's error. */
  private lost: ClawError | undefined;
  /** Why the log was closed while it was followed (LIFE-2); unset for a normal close. */
  private closedWith: SessionEndedError | undefined;

  constructor(options: {
    session: EventSource;
    retention?: EventRetention;
    subscriberBound?: SubscriberBound;
    /** Timers of the retries of failed writes. Default: `setTimeout`, unref'd. */
    setTimer?: SetTimer;
    /**
     * Told when a retry of a failed write fails too (the store is still away), or something else
     * goes wrong in that background work, which has nobody to throw to. Default: ignored.
     */
    onError?: (error: unknown, what: string) => void;
  }) {
    this.session = options.session;
    this.sessionId = options.session.id;
    this.retention = { ...defaultEventRetention, ...options.retention };
    this.bound = { ...defaultSubscriberBound, ...options.subscriberBound };
    this.setTimer = options.setTimer ?? unrefSetTimer;
    this.onError = options.onError ?? (() => undefined);
    this.committed = options.session.lastEventSeq();
    this.storedSeq = this.committed;
    const stored = options.session.storedEvents();
    // Only a run of events that ends at the session's last one can be replayed.
    if (stored.at(-1)?.seq === this.committed) {
      for (const event of stored) this.keep(event);
    }
  }

  /** The seq of the last event subscribers can have (0 before the first). */
  get lastSeq(): number {
    return this.committed;
  }

  /** The seq of the last event numbered, delivered or not (or taken in, for `ingest`). */
  get assignedSeq(): number {
    return Math.max(this.session.lastEventSeq(), this.committed);
  }

  /** The oldest seq still kept (`lastSeq + 1` when none is). */
  get oldestSeq(): number {
    return this.kept[this.keptStart]?.event.seq ?? this.committed + 1;
  }

  /**
   * Numbers the event, stores it with the session and returns it. Never waits, and a failed write
   * is the session's to report: the run's own changes go in the same writes, and their failure
   * stops it. The event is delivered once stored (held until then, see the class).
   */
  append(body: SessionEventBody): SessionEvent {
    const { event, written } = this.session.appendEvent(body);
    const size = sizeOf(event);
    this.inFlight.push({ event, size });
    this.inFlightBytes += size;
    this.writing += 1;
    written.then(
      () => {
        this.writing -= 1;
        this.storedThrough(event.seq);
      },
      (error: unknown) => {
        this.writing -= 1;
        this.writeFailed(event.seq, error);
      },
    );
    this.boundHeld();
    return event;
  }

  /**
   * A write was refused because another process owns the session now (`lease_lost`): the events
   * numbered here and not stored are never delivered (the new owner gives those seqs to its own
   * events), and subscribers end with the error once they read what was stored.
   */
  private lose(error: unknown): void {
    this.lost ??= findErrorWithCode(error, leaseLostCode);
  }

  /** Every event up to `seq` is stored: those held are delivered, and no retry is due. */
  private storedThrough(seq: number): void {
    this.storedSeq = Math.max(this.storedSeq, seq);
    if (this.failed !== undefined && this.storedSeq >= this.failed.seq) {
      this.failed = undefined;
      this.stopRetrying();
      this.retryDelay = storeRetry.firstMs;
    }
    this.commitSettled();
  }

  /**
   * The write of event `seq` failed: unless the session is lost, the event is held (and the
   * events after it wait) until a later write or a retry stores it.
   */
  private writeFailed(seq: number, error: unknown): void {
    this.lose(error);
    if (this.lost === undefined && seq > this.storedSeq) {
      if (this.failed === undefined || seq > this.failed.seq) this.failed = { seq, error };
      this.boundHeld();
      this.retryLater();
    }
    this.commitSettled();
  }

  /**
   * Held events take memory for as long as the store is away: beyond the retention, they are let
   * go (`dropped`). Subscribers behind them then end with `lagged` once they are stored, and come
   * back from the store through a snapshot; until then nothing of them is delivered, as before.
   */
  private boundHeld(): void {
    if (this.failed === undefined) return;
    const { maxEvents, maxBytes } = this.retention;
    if (this.inFlight.length <= maxEvents && this.inFlightBytes <= maxBytes) return;
    const last = this.inFlight.at(-1);
    if (last === undefined) return;
    for (const { event } of this.inFlight) forgetEventJson(event);
    this.dropped = last.event.seq;
    this.inFlight = [];
    this.inFlightBytes = 0;
  }

  /** Stores the held events again (`flush`) once the delay is over; each delay doubles. */
  private retryLater(): void {
    if (this.cancelRetry !== undefined || this.closed || this.session.flush === undefined) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(delay * 2, storeRetry.maxMs);
    this.cancelRetry = this.setTimer(() => {
      this.cancelRetry = undefined;
      void this.storeHeld();
    }, delay);
  }

  private stopRetrying(): void {
    this.cancelRetry?.();
    this.cancelRetry = undefined;
  }

  /** A retry: never rejects (a timer's callback has nobody to throw to); failures are told. */
  private async storeHeld(): Promise<void> {
    const what = `storing the events of session ${JSON.stringify(this.sessionId)} again`;
    try {
      if (this.closed || this.lost !== undefined || this.failed === undefined) return;
      // What `flush` stores: everything numbered before it was called.
      const through = this.session.lastEventSeq();
      // A write under way: a close meanwhile waits for it, as for the others.
      this.writing += 1;
      let stored: boolean;
      try {
        await this.session.flush?.();
        stored = true;
      } catch (error) {
        stored = false;
        this.report(error, what);
        this.lose(error);
        if (this.lost === undefined && this.failed !== undefined) this.retryLater();
      } finally {
        this.writing -= 1;
      }
      if (stored) this.storedThrough(through);
      else this.commitSettled();
    } catch (error) {
      this.report(error, what);
    }
  }

  private report(error: unknown, what: string): void {
    try {
      this.onError(error, what);
    } catch {
      // A reporter that throws changes nothing.
    }
  }

  /**
   * Why the log ended (its subscribers end with it, and nothing more may be started on the
   * session here): a `lease_lost` error, or a {@link SessionEndedError}; `undefined` while it goes
   * on, or after a normal close.
   */
  get ended(): ClawError | undefined {
    return this.lost ?? this.closedWith;
  }

  /**
   * The events after `after` (default: the last one now, i.e. only new ones), in order, exactly
   * once, then live ones, until `signal` aborts (the iteration then rejects with its reason) or
   * the log closes (it then ends, or rejects with why the session was let go).
   *
   * @throws CursorExpiredError (at once) when `after` cannot be served.
   * @throws SubscriberLaggedError (from the iteration) when the subscriber fell behind its bound.
   * @throws SessionEndedError (from the iteration) once it read every event stored before the
   *   session was let go (`lease_lost`, `store_unavailable`, `session_dropped`).
   */
  events(
    options: { after?: number; signal?: AbortSignal; bound?: SubscriberBound } = {},
  ): AsyncIterableIterator<SessionEvent> {
    const after = options.after ?? this.assignedSeq;
    this.checkCursor(after);
    const bound = { ...this.bound, ...options.bound };
    const subscriber: Subscriber = {
      cursor: after,
      taken: after,
      subscribedAt: Math.max(after, this.committed),
      bytesAtStart: this.committedBytes,
      maxEvents: bound.maxEvents,
      maxBytes: bound.maxBytes,
      lagged: false,
      wake: undefined,
      cursorAtCheck: after,
    };
    // Counted from now, read or not: one that never reads ends lagged too (and is let go then).
    this.subscribers.add(subscriber);
    return this.iterate(subscriber, options.signal);
  }

  /**
   * Ends every subscription, after the events already numbered. Without `reason` they finish
   * normally (nobody follows the session any more); with one, the session was let go while it
   * was followed (LIFE-2) and they end with its {@link SessionEndedError} (`lease_lost`,
   * `store_unavailable` or `session_dropped`, see {@link sessionEndOf}), as does any later
   * subscription. The first reason stays.
   */
  close(reason?: unknown): void {
    this.closed = true;
    if (reason !== undefined) this.closedWith ??= sessionEndOf(reason, this.sessionId);
    // A session let go is no longer this log's to store: a write still under way may store what
    // is held; else it is never delivered (see `commitSettled`).
    this.stopRetrying();
    this.commitSettled();
    for (const subscriber of this.subscribers) subscriber.wake?.();
  }

  /** Why `events({ after })` would be refused now; `undefined` when it can be served. */
  cursorError(after: number): CursorExpiredError | undefined {
    const assigned = this.assignedSeq;
    const servable = Number.isInteger(after) && after >= this.oldestSeq - 1 && after <= assigned;
    if (servable) return undefined;
    return new CursorExpiredError({
      cursor: after,
      oldestSeq: this.oldestSeq,
      lastSeq: assigned,
      sessionId: this.sessionId,
    });
  }

  /** @throws CursorExpiredError */
  private checkCursor(after: number): void {
    const error = this.cursorError(after);
    if (error !== undefined) throw error;
  }

  private async *iterate(
    subscriber: Subscriber,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<SessionEvent, void, undefined> {
    const onAbort = (): void => subscriber.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        if (signal?.aborted === true) throw abortReason(signal);
        if (subscriber.lagged) throw new SubscriberLaggedError(subscriber.cursor);
        const next = this.eventAfter(subscriber);
        if (next !== undefined) {
          subscriber.cursor = next.event.seq;
          if (subscriber.cursor > subscriber.subscribedAt) {
            subscriber.bytesAtStart = next.bytesThrough;
          }
          // It read the oldest kept event: what only it still held may go now.
          if (next.event.seq === this.oldestSeq) this.trim();
          yield next.event;
          subscriber.taken = next.event.seq;
          this.releaseEncoding(next.event);
          continue;
        }
        // Lost: what was numbered and not stored is never delivered (see `commitSettled`).
        if (this.lost !== undefined) throw this.lost;
        // Closed: done once the events numbered before it were delivered (writes still settling)
        // or given up (never stored).
        if (this.closed && this.inFlight.length === 0 && this.dropped === undefined) {
          if (this.closedWith !== undefined) throw this.closedWith;
          return;
        }
        await new Promise<void>((resolve) => {
          subscriber.wake = resolve;
        });
        subscriber.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.subscribers.delete(subscriber);
    }
  }

  /** The kept event right after the subscriber's cursor; fails it when that one is gone. */
  private eventAfter(subscriber: Subscriber): Kept | undefined {
    if (subscriber.cursor >= this.committed) return undefined;
    const index = subscriber.cursor + 1 - this.oldestSeq;
    const kept = index >= 0 ? this.kept[this.keptStart + index] : undefined;
    if (kept === undefined) {
      subscriber.lagged = true;
      throw new SubscriberLaggedError(subscriber.cursor);
    }
    return kept;
  }

  /**
   * Takes in an event another process numbered and stored (a session it owns, SCALE-4): it is
   * delivered at once. Events at or before the last one are ignored; after a gap (events this
   * process never saw), what was kept is dropped, so that subscribers behind the gap end with
   * `lagged` and come back through a cursor the log can serve.
   */
  ingest(event: SessionEvent): void {
    if (event.seq <= this.committed) return;
    if (event.seq !== this.committed + 1) this.restartAfter(event.seq - 1);
    this.keep(event);
    this.wakeSubscribers();
  }

  /**
   * For a log fed by `ingest`: goes on after `throughSeq`, whose events this process will never
   * see (another process numbered them, and they are gone from the store: SCALE-4), as `ingest`
   * does after a gap, but at once: subscribers behind it end with `lagged` now, and their cursors
   * then get `cursor_expired` (RT-4), rather than waiting for a next event that may never come.
   * Nothing happens when `throughSeq` is not past the last event.
   */
  skip(throughSeq: number): void {
    if (throughSeq <= this.committed) return;
    this.restartAfter(throughSeq);
    this.wakeSubscribers();
  }

  /**
   * Goes on after `seq` as after a gap: nothing kept is replayed across it, so subscribers behind
   * it end with `lagged`, and their cursors get `cursor_expired`.
   */
  private restartAfter(seq: number): void {
    this.kept = [];
    this.keptStart = 0;
    this.keptBytes = 0;
    this.committed = seq;
  }

  /** Delivers what is stored, in order; gives up what can no longer be (lost, or closed). */
  private commitSettled(): void {
    if (this.lost !== undefined) {
      this.forgetUnstored();
      this.wakeSubscribers();
      return;
    }
    let advanced = false;
    if (this.dropped !== undefined && this.storedSeq >= this.dropped) {
      // The events let go are stored: go on after them, as after a gap.
      this.restartAfter(this.dropped);
      this.dropped = undefined;
      advanced = true;
    }
    const storedNext = (): boolean =>
      this.dropped === undefined && (this.inFlight[0]?.event.seq ?? Infinity) <= this.storedSeq;
    while (storedNext()) {
      const { event, size } = this.inFlight.shift() as Numbered;
      this.inFlightBytes -= size;
      this.keep(event, size);
      advanced = true;
    }
    const unstored = this.inFlight.length > 0 || this.dropped !== undefined;
    if (this.closed && this.writing === 0 && unstored) {
      // Closed, and no write under way can store them any more: subscribers end after what was
      // stored, with the close's reason, or else with what the store said.
      this.closedWith ??= this.unstoredEnd();
      this.forgetUnstored();
      advanced = true;
    }
    if (advanced) this.wakeSubscribers();
  }

  private forgetUnstored(): void {
    for (const { event } of this.inFlight) forgetEventJson(event);
    this.inFlight = [];
    this.inFlightBytes = 0;
    this.dropped = undefined;
    this.failed = undefined;
    this.stopRetrying();
  }

  /** Why the subscribers of a log closed before its events were stored end. */
  private unstoredEnd(): SessionEndedError {
    const cause = this.failed?.error;
    return new SessionEndedError({
      sessionId: this.sessionId,
      code: 'store_unavailable',
      message:
        `session ${JSON.stringify(this.sessionId)} was let go before its store took its latest ` +
        `events${cause === undefined ? '' : ` (${errorMessage(cause)})`}. Reopen it once the ` +
        'store is back.',
      cause,
    });
  }

  private wakeSubscribers(): void {
    for (const subscriber of this.subscribers) subscriber.wake?.();
    // Nobody to check (a session nobody follows): no callback each turn.
    if (this.boundCheckDue || this.subscribers.size === 0) return;
    this.boundCheckDue = true;
    setImmediate(() => {
      this.boundCheckDue = false;
      this.checkBounds();
    });
  }

  /**
   * Lets go of the subscribers behind their bound that were handed nothing since the last check and
   * do not wait for their next event: their readers stopped. One that reads is not behind however
   * many events a write brings at once (each event's write settles in a microtask of its own, one
   * after the other, and a run streaming fast commits thousands before any subscriber can run), so
   * this runs once the commits of a turn of the event loop are done.
   */
  private checkBounds(): void {
    for (const subscriber of this.subscribers) {
      const stuck = subscriber.wake === undefined && subscriber.cursor === subscriber.cursorAtCheck;
      subscriber.cursorAtCheck = subscriber.cursor;
      if (!stuck) continue;
      const unreadEvents = this.committed - Math.max(subscriber.cursor, subscriber.subscribedAt);
      const unreadBytes = this.committedBytes - subscriber.bytesAtStart;
      if (unreadEvents > subscriber.maxEvents || unreadBytes > subscriber.maxBytes) {
        subscriber.lagged = true;
        this.subscribers.delete(subscriber);
      }
    }
  }

  private keep(event: SessionEvent, size = sizeOf(event)): void {
    this.committedBytes += size;
    this.committed = event.seq;
    this.kept.push({ event, size, bytesThrough: this.committedBytes });
    this.keptBytes += size;
    this.releaseEncoding(event);
    this.trim();
  }

  /**
   * Lets the event's JSON go once every subscriber took the event (at once when none follows):
   * kept events are there for replays, which are rare, and their text would otherwise stay as long
   * as they do (as much again as the events: a tool's whole output each).
   */
  private releaseEncoding(event: SessionEvent): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.taken < event.seq) return;
    }
    forgetEventJson(event);
  }

  private overRetention(): boolean {
    return (
      this.kept.length - this.keptStart > this.retention.maxEvents ||
      this.keptBytes > this.retention.maxBytes
    );
  }

  /**
   * Drops the oldest kept events while more are kept than the retention allows, but never one
   * that a subscriber still within its bound has not read: writes are stored in batches, and one
   * batch larger than the retention must not cost a subscriber that keeps up its events (its own
   * bound limits what it can hold back). The newest event always stays, however large.
   */
  private trim(): void {
    if (!this.overRetention()) return;
    let unreadFrom = Number.POSITIVE_INFINITY;
    for (const subscriber of this.subscribers) {
      if (!subscriber.lagged) unreadFrom = Math.min(unreadFrom, subscriber.cursor + 1);
    }
    while (this.kept.length - this.keptStart > 1 && this.overRetention()) {
      const oldest = this.kept[this.keptStart] as Kept;
      if (oldest.event.seq >= unreadFrom) break;
      this.keptBytes -= oldest.size;
      this.keptStart += 1;
    }
    if (this.keptStart > 1024 && this.keptStart * 2 > this.kept.length) {
      this.kept = this.kept.slice(this.keptStart);
      this.keptStart = 0;
    }
  }
}
