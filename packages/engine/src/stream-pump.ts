import {
  ClawError,
  closeIterator,
  linkAbortSignal,
  raceAbort,
  type ModelResponse,
  type StreamEvent,
} from '@claw/core';

/** What the pump hands on, in the order it arrived. */
export type PumpItem =
  | { type: 'text_delta'; delta: string }
  | { type: 'reasoning_delta'; delta: string }
  | { type: 'completed'; response: ModelResponse }
  /** The stream failed (not because the pump was closed). */
  | { type: 'failed'; error: unknown }
  /** The stream ended without a `completed` event. */
  | { type: 'ended' };

export interface StreamPumpOptions {
  /** Opens the stream with the signal the provider must honour. */
  open: (signal: AbortSignal) => AsyncIterable<StreamEvent>;
  /** The caller's signal: aborting it aborts the stream. */
  signal: AbortSignal;
  /** Called for every event as it arrives (a text or tool-call delta, or the reply). */
  onEvent: (event: StreamEvent) => void;
}

/**
 * Pulls a provider's stream as fast as the provider produces it into a local queue, apart from
 * whoever takes from the queue. A model call's timers (PRV-5) run while its stream is pulled, so
 * the consumer's pace (a slow reporter) never counts against them (RT-3). The queue holds text
 * and reasoning deltas of one reply only, which the reply itself keeps anyway, so it is bounded
 * by the reply.
 *
 * `close` stops pulling and ends the stream's iteration (ENG-6): the provider's signal is aborted
 * and the iterator closed, so no producer is left running.
 */
export class StreamPump {
  private readonly items: PumpItem[] = [];
  private head = 0;
  private waiting: ((item: PumpItem) => void) | undefined;
  private readonly stopController = new AbortController();
  private readonly link: { signal: AbortSignal; dispose: () => void };
  private finished = false;
  private readonly done: Promise<void>;

  constructor(private readonly options: StreamPumpOptions) {
    this.link = linkAbortSignal(options.signal, this.stopController.signal);
    this.done = this.pump();
  }

  /** The next item, once there is one. Only one `take` may wait at a time. */
  take(): Promise<PumpItem> {
    const item = this.items[this.head];
    if (item !== undefined) {
      this.head += 1;
      if (this.head === this.items.length) {
        this.items.length = 0;
        this.head = 0;
      }
      return Promise.resolve(item);
    }
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /**
   * Stops pulling and closes the stream. Resolves once the pump has let go of it; never waits for
   * a provider that ignores its signal (its pending `next()` is left to the abort).
   */
  async close(): Promise<void> {
    if (!this.finished) {
      this.stopController.abort(new ClawError('model stream closed', { code: 'aborted' }));
    }
    await this.done;
    this.link.dispose();
  }

  private push(item: PumpItem): void {
    const waiting = this.waiting;
    if (waiting === undefined) {
      this.items.push(item);
    } else {
      this.waiting = undefined;
      waiting(item);
    }
  }

  private async pump(): Promise<void> {
    const stop = this.stopController.signal;
    // One wait on the stop signal for the whole stream (not one listener per event: a reply with
    // tool calls arrives in dozens of pieces).
    const stopped = raceAbort(new Promise<never>(() => undefined), stop);
    stopped.catch(() => undefined);
    let iterator: AsyncIterator<StreamEvent> | undefined;
    let nextPending = false;
    try {
      iterator = this.options.open(this.link.signal)[Symbol.asyncIterator]();
      for (;;) {
        if (stop.aborted) return;
        nextPending = true;
        const result = await Promise.race([iterator.next(), stopped]);
        nextPending = false;
        if (result.done === true) {
          this.push({ type: 'ended' });
          return;
        }
        const event = result.value;
        this.options.onEvent(event);
        if (event.type === 'text_delta' || event.type === 'reasoning_delta') {
          this.push({ type: event.type, delta: event.delta });
        }
        if (event.type === 'completed') {
          this.push({ type: 'completed', response: event.response });
          return;
        }
      }
    } catch (error) {
      if (!stop.aborted) this.push({ type: 'failed', error });
    } finally {
      this.finished = true;
      await closeIterator(iterator, nextPending);
    }
  }
}
