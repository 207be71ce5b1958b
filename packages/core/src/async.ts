import { abortReason } from './errors.js';

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
 * A child signal that aborts (with the same reason) when `parent` does, for handing to code that
 * adds abort listeners and never removes them (HTTP clients do). Call `dispose` when the operation
 * settles: it removes the one listener this put on `parent`, so a long-lived parent signal
 * collects no listeners however many operations it covers.
 */
export function linkAbortSignal(parent: AbortSignal | undefined): {
  signal: AbortSignal;
  dispose: () => void;
} {
  const controller = new AbortController();
  if (parent === undefined) return { signal: controller.signal, dispose: () => undefined };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const forward = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    dispose: () => parent.removeEventListener('abort', forward),
  };
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
