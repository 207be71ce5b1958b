import { eventJson } from '@claw/core';
import type { ServerEvent, ServerEventOf } from './protocol.js';

/** Limits of one connection's outbound queue (CH-5). */
export interface OutboundLimits {
  /** Default 1,024 events. */
  maxEvents?: number;
  /** Default 4 MiB (of JSON text). */
  maxBytes?: number;
  /**
   * How long the queue may stay full while a session's events wait for room, in ms, before the
   * client is closed as too slow. Default 10 s.
   */
  maxStallMs?: number;
}

/** The limits of an `OutboundQueue` that its options leave out (CH-5). */
export const defaultOutboundLimits = {
  maxEvents: 1024,
  maxBytes: 4 * 1024 * 1024,
  maxStallMs: 10_000,
} as const;

/** Why a connection was closed by the channel (the transport says it its own way). */
export interface CloseReason {
  /** `client_too_slow`, `unauthorized`, `write_failed`, `closed`… */
  code: string;
  message: string;
}

/** Where a connection's output goes: one writer per connection serialises it (CH-3). */
export interface ChannelWriter {
  /** Writes one event, encoded as JSON (no newline); resolves once the transport took it. */
  write(json: string, event: ServerEvent): Promise<void> | void;
  /**
   * Writes several events at once, in order (e.g. JSON lines in one system call). Optional: the
   * queue then hands over everything waiting at once instead of one event at a time.
   */
  writeBatch?(items: ReadonlyArray<{ json: string; event: ServerEvent }>): Promise<void> | void;
  /** Ends the connection, saying why (WebSocket close code, an `error` line on TCP…). */
  close(reason: CloseReason): void;
}

/**
 * The most text one merged delta holds: a merged delta is re-encoded when more is merged into it,
 * so without a cap a long answer to a stuck client would cost time quadratic in its length.
 */
const maxMergedChars = 64 * 1024;

interface Queued {
  event: ServerEvent;
  json: string;
}

/** A delta that may be merged with its neighbours of the same type: answer or reasoning text. */
interface TextDelta {
  event: ServerEventOf<'text_delta'> | ServerEventOf<'thinking_delta'>;
  json: string;
}

/**
 * The bounded outbound queue of one connection (CH-3, CH-5): events are queued at once and
 * written one at a time, in order. Sessions' events are paced (`room()`): a subscription that
 * finds the queue full waits — the run never does, its events stay in the session's log — so a
 * client catching up on a long backlog gets it at the speed it reads. When the queue is full,
 * consecutive text deltas of one task are first merged into one (content joined, the last one's
 * seq: a client's cursor stays right), and so are those of its reasoning (`thinking_delta`); if it
 * stays full for `maxStallMs`, or an unpaced event
 * overflows it, the connection is closed with `client_too_slow`. The client reconnects with its
 * cursor and catches up from the log.
 */
export class OutboundQueue {
  private readonly writer: ChannelWriter;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly maxStallMs: number;
  private readonly roomWaiters: Array<() => void> = [];
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly queue: Queued[] = [];
  private bytes = 0;
  private writing = false;
  /** A pump is due at the end of this tick (`process.nextTick`). */
  private pumpDue = false;
  /** How many of the first queued events are being written now (never merged). */
  private inFlight = 0;
  private closedReason: CloseReason | undefined;
  private readonly drained: Array<() => void> = [];

  constructor(writer: ChannelWriter, limits: OutboundLimits = {}) {
    this.writer = writer;
    this.maxEvents = limits.maxEvents ?? defaultOutboundLimits.maxEvents;
    this.maxBytes = limits.maxBytes ?? defaultOutboundLimits.maxBytes;
    this.maxStallMs = limits.maxStallMs ?? defaultOutboundLimits.maxStallMs;
  }

  /** True while one more event fits (or once closed: pushes are ignored then). */
  get hasRoom(): boolean {
    return (
      this.closedReason !== undefined ||
      (this.queue.length < this.maxEvents && this.bytes < this.maxBytes)
    );
  }

  /**
   * Resolves once one more event fits — after merging text deltas, if that makes room — or once
   * the connection is closed; a queue that stays full for `maxStallMs` closes it as too slow.
   */
  room(): Promise<void> {
    if (this.hasRoom) return Promise.resolve();
    this.coalesce();
    if (this.hasRoom) return Promise.resolve();
    this.stallTimer ??= setTimeout(() => {
      this.stallTimer = undefined;
      this.close({
        code: 'client_too_slow',
        message:
          `client too slow: nothing could be sent for ${this.maxStallMs} ms (${this.queue.length} ` +
          'events waiting); reconnect with the last seq you got to catch up',
      });
    }, this.maxStallMs);
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Why the queue closed the connection, once it did. */
  get closed(): CloseReason | undefined {
    return this.closedReason;
  }

  /** Events waiting to be written. */
  get length(): number {
    return this.queue.length;
  }

  /**
   * Queues an event; never waits. Ignored once the connection is closed. A `paced` event (a
   * session's, whose sender waits for `room()` after it) may go over the bound by itself — one
   * event larger than the byte bound still goes out — and never closes the connection; any
   * other event that overflows the queue closes it as too slow.
   */
  push(event: ServerEvent, options: { paced?: boolean } = {}): void {
    if (this.closedReason !== undefined) return;
    // A session's event is encoded once for every connection (and its session record).
    const json = eventJson(event);
    this.queue.push({ event, json });
    this.bytes += json.length;
    if (this.queue.length > this.maxEvents || this.bytes > this.maxBytes) {
      this.coalesce();
      const over = this.queue.length > this.maxEvents || this.bytes > this.maxBytes;
      if (over && options.paced !== true) {
        this.close({
          code: 'client_too_slow',
          message:
            `client too slow: ${this.queue.length} events (${this.bytes} bytes) were waiting to ` +
            'be sent; reconnect with the last seq you got to catch up',
        });
        return;
      }
    }
    // A session's events go out together at the end of the tick; anything else (an answer to
    // the client's message) is handed to the writer at once.
    if (options.paced === true) this.schedulePump();
    else void this.pump();
  }

  /** Resolves once everything queued so far was written (or the connection closed). */
  drain(): Promise<void> {
    if (this.queue.length === 0 && !this.writing && !this.pumpDue) return Promise.resolve();
    if (this.closedReason !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Drops what is queued and closes the connection through the writer (once). */
  close(reason: CloseReason): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.queue.length = 0;
    this.bytes = 0;
    this.settleDrained();
    this.settleRoom();
    this.writer.close(reason);
  }

  /**
   * Merges runs of text deltas of the same task, each into one delta of at most `maxMergedChars`
   * of text (the last one's seq); what is being written is left alone. A run is joined and
   * encoded once, so one pass costs time linear in what waits (merging pair by pair would
   * re-encode the growing delta at every step: with small deltas, seconds of CPU for a stuck
   * client's queue, during which no other client gets anything).
   */
  private coalesce(): void {
    const firstFree = Math.max(1, this.inFlight);
    const rest: Queued[] = [];
    let index = firstFree;
    while (index < this.queue.length) {
      const first = this.queue[index] as Queued;
      const head = first.event;
      index += 1;
      if (head.type !== 'text_delta' && head.type !== 'thinking_delta') {
        rest.push(first);
        continue;
      }
      const run: TextDelta[] = [{ event: head, json: first.json }];
      let chars = head.content.length;
      for (; index < this.queue.length; index += 1) {
        const { event: next, json } = this.queue[index] as Queued;
        if (
          next.type !== head.type ||
          next.session_id !== head.session_id ||
          next.task_id !== head.task_id ||
          chars + next.content.length > maxMergedChars
        ) {
          break;
        }
        chars += next.content.length;
        run.push({ event: next, json });
      }
      rest.push(run.length === 1 ? first : this.merge(run));
    }
    this.queue.length = firstFree;
    for (const item of rest) this.queue.push(item);
  }

  /** One text delta holding the text of a run of them, with the last one's seq. */
  private merge(run: readonly TextDelta[]): Queued {
    const last = (run[run.length - 1] as TextDelta).event;
    const event = { ...last, content: run.map((item) => item.event.content).join('') };
    const json = JSON.stringify(event);
    for (const item of run) this.bytes -= item.json.length;
    this.bytes += json.length;
    return { event, json };
  }

  /**
   * Starts writing at the end of the tick, once the work under way is done: the events a
   * session commits together (a batch of its log) reach the queue a few promise steps apart, and
   * so go out in one write, not the first alone and then the rest (each write is a system call,
   * and wakes the reader).
   */
  private schedulePump(): void {
    if (this.writing || this.pumpDue) return;
    this.pumpDue = true;
    process.nextTick(() => {
      this.pumpDue = false;
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.closedReason === undefined) {
        const next = this.queue[0];
        if (next === undefined) break;
        // What is being written stays in the queue (it counts, and is never merged) until done.
        const batch = this.writer.writeBatch === undefined ? [next] : [...this.queue];
        this.inFlight = batch.length;
        try {
          if (this.writer.writeBatch === undefined) await this.writer.write(next.json, next.event);
          else await this.writer.writeBatch(batch);
        } catch (error) {
          this.close({
            code: 'write_failed',
            message: `could not send to the client: ${error instanceof Error ? error.message : String(error)}`,
          });
          return;
        }
        this.inFlight = 0;
        // `close` may have emptied the queue meanwhile.
        if (this.queue[0] === next) {
          this.queue.splice(0, batch.length);
          for (const item of batch) this.bytes -= item.json.length;
        }
        if (this.hasRoom) this.settleRoom();
      }
    } finally {
      this.writing = false;
      if (this.queue.length === 0) this.settleDrained();
    }
  }

  private settleRoom(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  private settleDrained(): void {
    for (const resolve of this.drained.splice(0)) resolve();
  }
}
