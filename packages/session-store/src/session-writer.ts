import type { SessionChange } from './session-state.js';

/** Where a session's changes go: the file writer, or nowhere (memory-only sessions). */
export interface SessionWriter {
  /**
   * Takes change number `seq`, already applied in memory. Resolves once it is on disk (for
   * `sync`, flushed to the disk hardware); rejects with `session_write_failed` when the write
   * failed.
   */
  write(seq: number, at: string, change: SessionChange, options: { sync: boolean }): Promise<void>;
  /** Resolves once everything in memory is on disk, writing it again after a failed write. */
  flush(): Promise<void>;
  /** Waits for queued writes, then removes the session's storage. */
  remove(): Promise<void>;
}

/** The writer of memory-only sessions: keeps nothing, never touches disk. */
export const memoryWriter: SessionWriter = {
  write: () => Promise.resolve(),
  flush: () => Promise.resolve(),
  remove: () => Promise.resolve(),
};
