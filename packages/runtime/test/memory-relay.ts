import { Listeners, type TaskToolProgress } from '@claw/core';
import {
  MemorySessionLog,
  SessionStore,
  type LogRecord,
  type RelayReply,
  type RelayRequest,
  type SessionOwner,
  type SessionRelay,
} from '@claw/session-store';
import type { SessionSource } from '../src/index.js';

/**
 * A shared log in memory (SCALE-4): what a process that does not own a session reads of it, and
 * the owner's handler that its requests reach, in one process. Wake-ups are not sent: readers
 * find new records by their poll. Progress reaches its listeners at once, every report.
 */
export class MemoryRelay extends MemorySessionLog implements SessionRelay {
  readonly instanceId = 'this-instance';
  private readonly handlers = new Map<string, (request: RelayRequest) => Promise<RelayReply>>();
  private readonly progress = new Map<string, Listeners<TaskToolProgress>>();

  async readSince(
    id: string,
    afterSeq: number,
  ): Promise<{ records: LogRecord[]; oldestSeq: number }> {
    const stored = await this.load(id);
    const records = (stored?.records ?? []).filter((record) => record.seq > afterSeq);
    return { records, oldestSeq: records[0]?.seq ?? afterSeq + 1 };
  }

  watch(): () => void {
    return () => undefined;
  }

  ownerOf(id: string): Promise<SessionOwner | undefined> {
    return Promise.resolve(
      this.handlers.has(id) ? { instance: 'owner-instance', live: true } : undefined,
    );
  }

  send(id: string, request: RelayRequest): Promise<RelayReply> {
    const handle = this.handlers.get(id);
    if (handle === undefined) return Promise.reject(new Error(`nobody serves ${id}`));
    return handle(request);
  }

  serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void {
    this.handlers.set(id, handle);
    return () => {
      if (this.handlers.get(id) === handle) this.handlers.delete(id);
    };
  }

  publishProgress(id: string, progress: TaskToolProgress): void {
    this.progress.get(id)?.emit(progress);
  }

  onProgress(id: string, listener: (progress: TaskToolProgress) => void): () => void {
    const listeners = this.progress.get(id) ?? new Listeners<TaskToolProgress>();
    this.progress.set(id, listeners);
    return listeners.add(listener);
  }

  /** The sessions of a runtime factory, stored in this log. */
  sessionSource(): SessionSource & { close: () => Promise<void> } {
    const store = new SessionStore({ log: this });
    return {
      open: (id, options) => store.open(id, options),
      list: () => store.list(),
      close: () => store.close(),
    };
  }
}
