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
}
