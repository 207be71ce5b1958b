import { abortReason } from './errors.js';

/**
 * Starts a timer that calls `callback` after `ms` milliseconds and returns a function that
 * cancels it: the shape claw's timed parts take their timers in, so that tests drive time
 * (`ManualClock.setTimer` of @claw/testing).
 */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/**
 * Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as it is aborted.
 * The timer and the listener are both removed when it settles.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * True when `promise` settled (resolved or rejected) within `ms`, false when it had not by then.
 * The promise goes on either way: whoever calls this decides what to do about a late one. The
 * timer keeps the process alive meanwhile (a promise that never settles cannot end it) and is
 * cleared as soon as the answer is known.
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A child signal that aborts (with the same reason) as soon as any of `parents` does, for handing
 * to code that adds abort listeners and never removes them (HTTP clients do), or for one operation
 * that several signals may stop (the run's signal and a budget's). Call `dispose` when the
 * operation settles: it removes the listeners this put on the parents, so long-lived parent
 * signals collect none however many operations they cover. `undefined` parents are skipped.
 */
export function linkAbortSignal(...parents: ReadonlyArray<AbortSignal | undefined>): {
  signal: AbortSignal;
  dispose: () => void;
} {
  const controller = new AbortController();
  const present = parents.filter((parent): parent is AbortSignal => parent !== undefined);
  const aborted = present.find((parent) => parent.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const removers = present.map((parent) => {
    const forward = (): void => {
      dispose();
      controller.abort(parent.reason);
    };
    parent.addEventListener('abort', forward, { once: true });
    return () => parent.removeEventListener('abort', forward);
  });
  const dispose = (): void => {
    for (const remove of removers.splice(0)) remove();
  };
  return { signal: controller.signal, dispose };
}

/**
 * Runs async tasks one at a time, in the order they were queued (a promise chain). A failed task
 * fails only its own caller; the next task still runs.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once every task queued so far has settled. */
  idle(): Promise<void> {
    return this.tail;
  }
}

const noop = (): void => undefined;

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as `signal` aborts, even
 * when whatever `promise` waits on ignores the signal. The listener is removed when it settles,
 * and a later rejection of `promise` is handled, never reported as unhandled.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.then(noop, noop);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    // The listener goes on whichever comes first: a promise that never settles leaves none.
    const stop = (): void => signal.removeEventListener('abort', onAbort);
    const onAbort = (): void => {
      stop();
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(stop).then(resolve, reject);
  });
}

/** A value, a promise of it, or a function that gives that promise when it is needed. */
export type Eventual<T> = T | Promise<T> | (() => Promise<T>);

/**
 * What `source` gives, asked for once: a function is called by the first call of the result (not
 * before), a value or a promise is taken at once, and every call gets the same promise. Its
 * failure goes to those who call; it never counts as an unhandled rejection.
 */
export function askOnce<T>(source: Eventual<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  const ask = (): Promise<T> => {
    if (answer === undefined) {
      answer = Promise.resolve(
        typeof source === 'function' ? (source as () => Promise<T>)() : source,
      );
      answer.catch(() => undefined);
    }
    return answer;
  };
  if (typeof source !== 'function') void ask();
  return ask;
}

/**
 * `raceAbort` for many promises against one signal, with one listener on it however many races
 * run (a model stream races each of its chunks): each `race` settles like its promise, or
 * rejects with the signal's reason as soon as it aborts. `dispose` removes the listener.
 */
export class AbortRace {
  private readonly racing = new Set<(reason: unknown) => void>();
  private readonly onAbort = (): void => {
    for (const reject of this.racing) reject(abortReason(this.signal));
    this.racing.clear();
  };

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.then(noop, noop);
      return Promise.reject(abortReason(this.signal));
    }
    return new Promise<T>((resolve, reject) => {
      this.racing.add(reject);
      promise.then(resolve, reject).finally(() => this.racing.delete(reject));
    });
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/**
 * Ends an async iteration (a model stream) whose consumer is leaving. While a `next()` is still
 * in flight the iterator cannot run `return()` until that settles, so it is not awaited then
 * (whoever aborted the `next()` ends the stream); a failure while closing is ignored: the
 * consumer is done either way.
 */
export async function closeIterator(
  iterator: AsyncIterator<unknown> | undefined,
  nextPending: boolean,
): Promise<void> {
  if (iterator?.return === undefined) return;
  try {
    const closing = iterator.return();
    if (nextPending) closing.then(noop, noop);
    else await closing;
  } catch {
    // Nothing to do: the iteration is over for the consumer.
  }
}
