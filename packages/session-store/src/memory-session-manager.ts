import { MemorySessionLog } from './memory-session-log.js';
import { SessionStore } from './session-store.js';

/** Options of {@link MemorySessionManager}. */
export interface MemorySessionManagerOptions {
  /** The clock for createdAt, updatedAt and event times. Default: the current time. */
  now?: () => Date;
  /** The log to keep sessions in. Default: a new one of its own. */
  log?: MemorySessionLog;
}

/**
 * Sessions in memory only (SES-6): the same sessions as `FileSessionManager` (repair, tool
 * journal, events, totals kept across `clear`, one owner at a time), but nothing ever touches
 * disk and nothing survives the process. For tests and library users.
 */
export class MemorySessionManager extends SessionStore {
  constructor(options: MemorySessionManagerOptions = {}) {
    super({
      log: options.log ?? new MemorySessionLog(),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }
}
