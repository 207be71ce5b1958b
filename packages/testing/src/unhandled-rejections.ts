/** What `watchUnhandledRejections` gives a test. */
export interface UnhandledRejectionWatch {
  /** The reasons of the process's unhandled rejections so far, oldest first. */
  readonly reasons: unknown[];
  /**
   * Stops watching, after two turns of the event loop (Node reports an unhandled rejection once
   * the microtask queue drains), and resolves to the reasons seen.
   */
  stop(): Promise<unknown[]>;
}

/**
 * Collects the process's unhandled rejections while a test runs, so that it can assert that a
 * failure in the background was caught and reported rather than left to end the process.
 */
export function watchUnhandledRejections(): UnhandledRejectionWatch {
  const reasons: unknown[] = [];
  const listener = (reason: unknown): void => void reasons.push(reason);
  process.on('unhandledRejection', listener);
  return {
    reasons,
    stop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      process.off('unhandledRejection', listener);
      return reasons;
    },
  };
}
