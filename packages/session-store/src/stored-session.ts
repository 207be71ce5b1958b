import {
  errorMessage,
  eventJson,
  type Compaction,
  type CostTotals,
  type Message,
  type SessionEvent,
  type SessionEventBody,
  type ToolCall,
  type ToolStartOptions,
  type Usage,
} from '@claw/core';
import { SessionStoreError } from './errors.js';
import type { SessionWriter, WriteOptions } from './log-writer.js';
import { repairHistory, type RepairedCall } from './repair.js';
import type { SessionSummary } from './session-log.js';
import type { PersistentSession } from './session-manager.js';
import {
  applyChange,
  journalView,
  type OpenTask,
  type SessionChange,
  type SessionState,
} from './session-state.js';
import { summaryOfState } from './summary.js';

const notFlushed: WriteOptions = { sync: false };
const flushed: WriteOptions = { sync: true };
/** Flushed, but waited for only until written (a read-only tool's intent). */
const flushBehind: WriteOptions = { sync: true, resolveWhenWritten: true };

export interface StoredSessionOptions {
  state: SessionState;
  /** Builds the writer once the session exists (it reads the session's state for snapshots). */
  writer: (state: () => SessionState) => SessionWriter;
  now: () => Date;
  /** Events read back with the session (those stored after its last snapshot), oldest first. */
  storedEvents?: readonly SessionEvent[];
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * The session behind both managers: state in memory, every change handed to a writer (a file, or
 * nothing) in the order it was made. See {@link PersistentSession}.
 */
export class StoredSession implements PersistentSession {
  /** Every change is applied in memory before it is handed to the writer (see `change`). */
  readonly changesApplyAtOnce = true;
  private readonly state: SessionState;
  private readonly writer: SessionWriter;
  private readonly now: () => Date;
  private repaired: readonly RepairedCall[] = [];
  private deleted = false;
  /** The last time stamp made, and its millisecond: a turn's many changes share most of them. */
  private lastStamp = { ms: Number.NaN, iso: '' };
  private readonly loadedEvents: readonly SessionEvent[];

  constructor(options: StoredSessionOptions) {
    this.state = options.state;
    this.now = options.now;
    this.writer = options.writer(() => this.state);
    this.loadedEvents = options.storedEvents ?? [];
  }

  get id(): string {
    return this.state.id;
  }

  get workDir(): string {
    return this.state.workDir;
  }

  get createdAt(): string {
    return this.state.createdAt;
  }

  get updatedAt(): string {
    return this.state.updatedAt;
  }

  history(): readonly Message[] {
    return this.state.messages;
  }

  usage(): Usage {
    return { ...this.state.usage };
  }

  cost(): CostTotals {
    return { ...this.state.cost };
  }

  lastRepair(): readonly RepairedCall[] {
    return this.repaired;
  }

  summary(): SessionSummary {
    return summaryOfState(this.state);
  }

  lastEventSeq(): number {
    return this.state.eventSeq;
  }

  openTask(): OpenTask | undefined {
    return this.state.openTask;
  }

  storedEvents(): readonly SessionEvent[] {
    return this.loadedEvents;
  }

  appendEvent(body: SessionEventBody): { event: SessionEvent; written: Promise<void> } {
    const at = this.stamp();
    const event = {
      ...body,
      session_id: this.state.id,
      seq: this.state.eventSeq + 1,
      at,
    };
    // Encoded once: the same text goes to every client that follows the session (`eventJson`).
    const encode = (): string => `{"type":"event","event":${eventJson(event)}}`;
    return { event, written: this.change({ type: 'event', event }, notFlushed, encode, at) };
  }

  /** Appends in order; no messages: nothing happens. */
  append(...messages: Message[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return this.change({ type: 'append', messages });
  }

  /**
   * Adds one model call's tokens and price (`undefined`: an unpriced call).
   *
   * @throws SessionStoreError `invalid_usage` for negative or non-finite figures (nothing is
   * recorded).
   */
  recordUsage(usage: Usage, costUsd?: number): Promise<void> {
    const figures = [usage.promptTokens, usage.completionTokens, usage.totalTokens];
    if (usage.cachedPromptTokens !== undefined) figures.push(usage.cachedPromptTokens);
    if (!figures.every(isCount) || (costUsd !== undefined && !isCount(costUsd))) {
      return Promise.reject(
        new SessionStoreError(
          `Cannot record usage ${JSON.stringify({ ...usage, costUsd })}: token counts and cost ` +
          'must be finite numbers of zero or more.',
          { code: 'invalid_usage' },
        ),
      );
    }
    const copy: Usage = {
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      totalTokens: usage.totalTokens,
      // Kept over the session's life too (REAL-5); absent when no call reported any.
      ...(usage.cachedPromptTokens === undefined
        ? {}
        : { cachedPromptTokens: usage.cachedPromptTokens }),
    };
    return this.change(
      costUsd === undefined ? { type: 'usage', usage: copy } : { type: 'usage', usage: copy, costUsd },
    );
  }

  clear(): Promise<void> {
    if (this.state.messages.length === 0 && this.state.journal.size === 0) return Promise.resolve();
    return this.change({ type: 'clear' });
  }

  beforeRun(): Promise<void> {
    return this.repair();
  }

  compaction(): Compaction | undefined {
    return this.state.compaction;
  }

  /**
   * Stores a compaction (CMP-4), flushed to the disk before it resolves: a crash after it
   * resumes from the compacted view.
   *
   * @throws SessionStoreError `invalid_compaction` when it names messages the history does not
   *   have (nothing is stored).
   */
  compact(compaction: Compaction): Promise<void> {
    const { upTo, kept } = compaction;
    if (upTo > this.state.messages.length || kept.some((index) => index >= upTo || index < 0)) {
      return Promise.reject(
        new SessionStoreError(
          `Cannot store a compaction of ${upTo} messages in session ${JSON.stringify(this.state.id)}, ` +
          `which has ${this.state.messages.length}.`,
          { code: 'invalid_compaction' },
        ),
      );
    }
    return this.change({ type: 'compaction', compaction }, flushed);
  }

  toolStarted(call: ToolCall, options?: ToolStartOptions): Promise<void> {
    const { id, name, arguments: args } = call;
    const change: SessionChange = { type: 'tool_started', call: { id, name, arguments: args } };
    return this.change(change, options?.readOnly === true ? flushBehind : flushed);
  }

  toolFinished(toolCallId: string): Promise<void> {
    return this.change({ type: 'tool_finished', toolCallId });
  }

  /**
   * After a failed write this stores the whole session again; the event log retries through it
   * (RT-3). A deleted session is not stored again: that would bring it back, and without its lock.
   *
   * @throws SessionStoreError `session_deleted` once the session was deleted.
   */
  flush(): Promise<void> {
    if (this.deleted) return Promise.reject(this.deletedError());
    return this.writer.flush();
  }

  /** Now, as an ISO time stamp (made once per millisecond). */
  private stamp(): string {
    const now = this.now();
    const ms = now.getTime();
    if (ms !== this.lastStamp.ms) this.lastStamp = { ms, iso: now.toISOString() };
    return this.lastStamp.iso;
  }

  /** Orphan repair (SES-7/8); also run by the managers right after loading. */
  repair(): Promise<void> {
    const result = repairHistory(this.state.messages, journalView(this.state));
    this.repaired = result.repaired;
    if (result.repaired.length === 0) return Promise.resolve();
    const inserts = result.repaired.map(({ index, observation }) => ({
      index,
      message: observation,
    }));
    return this.change({ type: 'repair', inserts });
  }

  private deletedError(): SessionStoreError {
    return new SessionStoreError(
      `Session ${JSON.stringify(this.state.id)} was deleted; open it again to start afresh.`,
      { code: 'session_deleted' },
    );
  }

  /**
   * The session's lock was given up (its store let it go): every later change and flush rejects
   * with `session_released`, and nothing more is written, so that a holder left over from this
   * ownership (a retry, a task winding down) never writes under a later owner's lock.
   */
  release(): void {
    this.writer.release?.(
      new SessionStoreError(
        `Session ${JSON.stringify(this.state.id)} was let go by this process (its lock was ` +
        'given up), so nothing more is stored through this copy of it; open it again to go on.',
        { code: 'session_released' },
      ),
    );
  }

  /** Rejects every later change, then removes the session's storage once queued writes are done. */
  delete(): Promise<void> {
    this.deleted = true;
    return this.writer.remove();
  }

  /**
   * Applies the change in memory now (so `history()` and the order of calls agree) and hands it
   * to the writer; resolves as `SessionWriter.write` does with `write`. The writer's queue runs
   * the write only after this returns, so a snapshot it writes includes the change.
   */
  private change(
    change: SessionChange,
    write: WriteOptions = notFlushed,
    encode?: () => string,
    at = this.stamp(),
  ): Promise<void> {
    if (this.deleted) return Promise.reject(this.deletedError());
    const seq = this.state.seq + 1;
    let encoded: string;
    try {
      // Encoded now: the record says what the change was when it was made, and data that cannot
      // be stored is refused before anything changes.
      encoded = encode === undefined ? JSON.stringify(change) : encode();
    } catch (error) {
      // Only a change that cannot be JSON gets here: nothing changed, in memory or on disk.
      return Promise.reject(
        new SessionStoreError(
          `Cannot save a ${change.type} change to session ${JSON.stringify(this.state.id)}: ` +
          `${errorMessage(error)}. Messages must be plain JSON data.`,
          { code: 'invalid_change', cause: error },
        ),
      );
    }
    // The writer's queue writes only after this returns, once memory has the change.
    const written = this.writer.write({ seq, at, change, encoded }, write);
    applyChange(this.state, change, at);
    this.state.seq = seq;
    return written;
  }
}
