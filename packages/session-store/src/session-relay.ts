import type {
  ApprovalDecision,
  ElicitationAction,
  Message,
  SessionEvent,
  TaskToolProgress,
} from '@claw/core';
import type { LogRecord, SessionLog, StoredLog } from './session-log.js';
import {
  applyRecord,
  replay,
  type OpenTask,
  type SessionState,
} from './session-state.js';

/**
 * What a client of one process asks of the process that owns the session (SCALE-4): start a task,
 * cancel it, answer one of its approvals. `by` names who asked (a client's name).
 */
export type RelayRequest =
  | { kind: 'prompt'; content: string; by: string }
  | { kind: 'interrupt'; reason: string; by: string }
  | { kind: 'answer'; requestId: string; decision: ApprovalDecision; by: string }
  /** An answer to a request for input of the owner's MCP server (MCP-7). */
  | {
    kind: 'elicitation_answer';
    requestId: string;
    action: ElicitationAction;
    content?: Record<string, unknown>;
    by: string;
  }
  /** Clients of the sender follow the session: the owner must not count it as unwatched. */
  | { kind: 'watching'; by: string };

/** The owner's reply: `ok` (with the new task's id for a prompt), or why it refused. */
export type RelayReply =
  | { ok: true; taskId?: string }
  | { ok: false; code: string; message: string };

/** Who owns a session now, as the store sees it. */
export interface SessionOwner {
  /** The owning process's instance id. */
  instance: string;
  /** False once its lease lapsed: another process may take the session over. */
  live: boolean;
}

/**
 * Replication of a session's records to the processes that follow it (SCALE-4): one process owns
 * a session (holds its lease) and writes it; the others read its records as they are written.
 * Wake-ups only wake readers up: the data is always read from the records by seq, so a lost
 * wake-up delays a reader and loses nothing. The part every shared log has.
 */
export interface SessionReplication {
  /** This process's instance id (owners are named by theirs: `ownerOf`). */
  readonly instanceId: string;
  /**
   * The records of `id` after `afterSeq`, in order, at most `limit` of them. `oldestSeq` is the
   * oldest record still kept: when it is beyond `afterSeq + 1`, the records between are gone (the
   * log was compacted) and the reader must start again from `load`.
   */
  readSince(
    id: string,
    afterSeq: number,
    options?: { limit?: number },
  ): Promise<{ records: LogRecord[]; oldestSeq: number }>;
  /** Calls `wake` whenever `id` may have new records; returns the unsubscribe. */
  watch(id: string, wake: () => void): () => void;
  /** Who owns `id` now; undefined when nobody does. */
  ownerOf(id: string): Promise<SessionOwner | undefined>;
}

/**
 * Requests to the owner of a session (SCALE-4): the clients of a process that follows a session
 * hand their prompts, interrupts and answers to the process that owns it, which serves them in
 * order, each once.
 */
export interface OwnerInbox {
  /**
   * Hands `request` to the owner of `id` and resolves with its reply.
   *
   * @throws SessionLogError `session_owner_unreachable` when no owner took it within
   *   `timeoutMs` (it is then withdrawn: a late owner never acts on it).
   */
  send(id: string, request: RelayRequest, options?: { timeoutMs?: number }): Promise<RelayReply>;
  /**
   * As the owner of `id`: `handle` gets the requests sent to it, one at a time, oldest first,
   * until the returned function is called. Only the process holding the session's lease takes
   * requests; a handler that throws replies `internal_error`.
   */
  serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void;
}

/**
 * The progress of the owner's running tools, told to the processes that follow the session.
 * Best effort, like progress itself: never stored, never replayed, never throws; a channel may
 * drop reports (to at most one a tool call every so often) and shorten messages.
 */
export interface ProgressChannel {
  /** As the owner of `id`: tells the processes following it how one of its tools gets on. */
  publishProgress(id: string, progress: TaskToolProgress): void;
  /**
   * Calls `listener` with the progress the owner of `id` publishes, from now until the returned
   * function is called. A listener that throws misses that report alone.
   */
  onProgress(id: string, listener: (progress: TaskToolProgress) => void): () => void;
}

/**
 * The relay of a log several processes share (SCALE-4), in the parts its backend implements
 * (`SessionLog.relayParts`): the replication of records always; the owner's inbox and the
 * progress channel where it has them. Without an inbox, followers read the session and cannot
 * act on it; without a progress channel, they see tools' progress only as their events.
 */
export interface SessionRelay {
  readonly replication: SessionReplication;
  readonly inbox?: OwnerInbox;
  readonly progress?: ProgressChannel;
}

/** A log several processes share: one that names its relay parts. */
export type SharedSessionLog = SessionLog & { relayParts(): SessionRelay };

/**
 * The code of the error a shared log's write rejects with once this process no longer owns the
 * session (SCALE-2: another one took it over, or this one gave it up). What it numbered since
 * is not the session's: another owner numbers those seqs.
 */
export const leaseLostCode = 'lease_lost';

/**
 * A read-only copy of a session another process writes (SCALE-4): built from a `load`, then
 * brought up to date record by record as the reader reads them.
 */
export class SessionReplica {
  private readonly state: SessionState;
  private readonly loadedEvents: SessionEvent[];

  /**
   * Reads `stored` the way a session store loads it (the same replay).
   *
   * @throws SessionLogError `session_corrupt` when a record does not fit the session.
   */
  constructor(stored: StoredLog, options: { workDir: string; location: string }) {
    const { state, events } = replay(stored, options);
    this.state = state;
    this.loadedEvents = events;
  }

  /** The seq of the last record applied. */
  get seq(): number {
    return this.state.seq;
  }

  /** The seq of the last event of the session. */
  get eventSeq(): number {
    return this.state.eventSeq;
  }

  /** The events the load held, oldest first (the newest of them, as a store keeps them). */
  get events(): readonly SessionEvent[] {
    return this.loadedEvents;
  }

  history(): readonly Message[] {
    return this.state.messages;
  }

  /** The task the session's events say is running. */
  get openTask(): OpenTask | undefined {
    return this.state.openTask;
  }

  /**
   * Applies the next record; returns its event when it holds one.
   *
   * @throws ChangeMismatch when the record is not the next one or does not fit the session.
   */
  apply(record: LogRecord): SessionEvent | undefined {
    applyRecord(this.state, record);
    return record.change.type === 'event' ? record.change.event : undefined;
  }
}
