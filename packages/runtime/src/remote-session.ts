import { ApprovalNotPendingError } from '@claw/approval';
import {
  ClawError,
  Listeners,
  type ApprovalDecision,
  type ElicitationAction,
  type SessionEvent,
  type SessionRunState,
  type TaskToolProgress,
} from '@claw/core';
import {
  SessionLogError,
  SessionReplica,
  newSessionSnapshot,
  type RelayReply,
  type RelayRequest,
  type SessionLog,
  type SessionRelay,
  type StoredLog,
} from '@claw/session-store';
import { SessionBusyError } from './errors.js';
import {
  SessionEventLog,
  SubscriberLaggedError,
  type CursorExpiredError,
  type EventRetention,
  type SubscriberBound,
} from './event-log.js';
import { relayHandler } from './relay-handler.js';
import type { Runtime } from './runtime.js';
import { ElicitationAnswerError } from './session-approvals.js';
import type { SessionView } from './session-host.js';

/** Options of {@link RemoteSession.open}. */
export interface RemoteSessionOptions {
  /** The shared log the session is read from (`load`, after a compaction). */
  log: SessionLog;
  /**
   * Its relay parts (`log.relayParts()`): the records are followed through the replication; the
   * clients' requests go through the owner inbox (without one they are refused), and the owner's
   * tools' progress comes through the progress channel, when the log has them.
   */
  relay: SessionRelay;
  sessionId: string;
  workDir: string;
  /**
   * Called when the owner's lease lapsed or was given up (the session may be taken over): the
   * caller tries to own it and, when it does, hands its runtime to {@link RemoteSession.adopt}.
   * Called again on a later look while nobody owns the session and it was not adopted.
   */
  onOwnerGone: () => Promise<void>;
  /** How often the rows are read without a wake-up, in ms. Default 1000. */
  pollMs?: number;
  retention?: EventRetention;
  subscriberBound?: SubscriberBound;
}

/** Records read at once. */
const readLimit = 500;

/**
 * A session another process owns, as this process serves it to its clients (SCALE-4): a replica
 * of the session kept up to date from the shared log (woken by the relay, with a poll as
 * backstop, so a lost wake-up loses nothing), its events in an event log of their own, and the
 * clients' prompts, interrupts and answers handed to the owner, which serves them in order.
 * When the owner goes away, `onOwnerGone` may take the session over; the session then follows
 * the new local host (`adopt`), and its clients go on without reconnecting.
 */
export class RemoteSession {
  readonly sessionId: string;
  readonly workDir: string;
  readonly events: SessionEventLog;
  private readonly options: RemoteSessionOptions;
  private replica: SessionReplica;
  private local: Runtime | undefined;
  private closed = false;
  /** Set when something may be new; the next pause then returns at once. */
  private woken = false;
  private resume: (() => void) | undefined;
  private readonly following: Promise<void>;
  private readonly bridge = new AbortController();
  private readonly progress = new Listeners<TaskToolProgress>();
  /** Stops hearing the progress the owner relays (or, once adopted, the local runtime's). */
  private stopProgress: () => void;

  private constructor(options: RemoteSessionOptions, stored: StoredLog) {
    this.options = options;
    this.sessionId = options.sessionId;
    this.workDir = options.workDir;
    this.replica = this.replicaOf(stored);
    const replica = (): SessionReplica => this.replica;
    this.events = new SessionEventLog({
      session: {
        id: options.sessionId,
        lastEventSeq: () => replica().eventSeq,
        storedEvents: () => replica().events,
        appendEvent: () => {
          throw new Error('a remote session\'s events are numbered by its owner');
        },
      },
      ...(options.retention === undefined ? {} : { retention: options.retention }),
      ...(options.subscriberBound === undefined
        ? {}
        : { subscriberBound: options.subscriberBound }),
    });
    this.following = this.follow();
    const relayed = options.relay.progress;
    this.stopProgress = relayed === undefined
      ? () => undefined
      : relayed.onProgress(options.sessionId, (report) => this.progress.emit(report));
  }

  /**
   * Reads the session from the shared log and starts following it.
   *
   * @throws SessionLogError when the log cannot be read.
   */
  static async open(options: RemoteSessionOptions): Promise<RemoteSession> {
    const stored = await options.log.load(options.sessionId);
    const snapshot = newSessionSnapshot({
      id: options.sessionId,
      workDir: options.workDir,
      now: new Date().toISOString(),
    });
    const empty = { snapshot, records: [], needsCompaction: false };
    return new RemoteSession(options, stored ?? empty);
  }

  private replicaOf(stored: StoredLog): SessionReplica {
    return new SessionReplica(stored, {
      workDir: this.options.workDir,
      location: this.options.log.location(this.options.sessionId),
    });
  }

  get state(): SessionRunState {
    return this.local?.state ?? this.replica.openTask?.state ?? 'idle';
  }

  /** The running task, as far as this process knows. */
  get activeTask(): { id: string } | undefined {
    if (this.local !== undefined) return this.local.activeTask;
    const open = this.replica.openTask;
    return open === undefined ? undefined : { id: open.taskId };
  }

  view(): SessionView {
    if (this.local !== undefined) return { ...this.local.snapshot(), seq: this.events.lastSeq };
    const open = this.replica.openTask;
    return {
      sessionId: this.sessionId,
      workDir: this.workDir,
      state: open?.state ?? 'idle',
      seq: this.events.lastSeq,
      history: [...this.replica.history()],
      pendingApprovals: [...(open?.approvals ?? [])],
      pendingElicitations: [...(open?.elicitations ?? [])],
      ...(open === undefined ? {} : { task: { id: open.taskId, prompt: open.prompt } }),
    };
  }

  cursorError(after: number): CursorExpiredError | undefined {
    return this.events.cursorError(after);
  }

  /**
   * Calls `listener` with the progress of the session's running tools, as the owner relays it
   * (when the relay has a progress channel), or as the runtime here reports it once the
   * session was taken over. Best effort: not kept, not numbered.
   */
  onToolProgress(listener: (progress: TaskToolProgress) => void): () => void {
    return this.progress.add(listener);
  }

  /**
   * Starts a task through the owner (or here, once adopted).
   *
   * @throws SessionBusyError when a task runs; ClawError with the owner's code otherwise.
   */
  async start(prompt: string, by: string): Promise<{ id: string }> {
    const reply = await this.request({ kind: 'prompt', content: prompt, by });
    return { id: reply.taskId ?? '' };
  }

  /** @throws ClawError `not_running` when no task runs. */
  async cancel(reason: string, by: string): Promise<void> {
    await this.request({ kind: 'interrupt', reason, by });
  }

  /** @throws ApprovalNotPendingError when the owner no longer waits for it (first answer wins). */
  async respond(requestId: string, decision: ApprovalDecision, by: string): Promise<void> {
    await this.request({ kind: 'answer', requestId, decision, by });
  }

  /**
   * Answers a request for input of the owner's MCP server (MCP-7) through the owner.
   *
   * @throws ElicitationAnswerError when the owner no longer waits for it (first answer wins) or
   *   the content does not fit the form.
   */
  async respondElicitation(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by: string,
  ): Promise<void> {
    await this.request({
      kind: 'elicitation_answer',
      requestId,
      action: answer.action,
      ...(answer.content === undefined ? {} : { content: { ...answer.content } }),
      by,
    });
  }

  /**
   * Has `request` served by the owner, or by the runtime here once adopted: the same handler the
   * owner serves with ({@link relayHandler}), so both answer alike.
   */
  private async request(request: RelayRequest): Promise<Extract<RelayReply, { ok: true }>> {
    const reply = this.local === undefined
      ? await this.send(request)
      : await relayHandler(this.local)(request);
    if (reply.ok) return reply;
    if (reply.code === 'session_busy') {
      throw new SessionBusyError(this.sessionId, this.activeTask?.id ?? '?');
    }
    if (reply.code === 'approval_not_pending' && request.kind === 'answer') {
      throw new ApprovalNotPendingError(reply.message, { requestId: request.requestId });
    }
    const inputCodes = ['elicitation_not_pending', 'invalid_elicitation_answer'] as const;
    const inputCode = inputCodes.find((code) => code === reply.code);
    if (inputCode !== undefined && request.kind === 'elicitation_answer') {
      throw new ElicitationAnswerError(reply.message, {
        requestId: request.requestId,
        code: inputCode,
      });
    }
    throw new ClawError(reply.message, { code: reply.code });
  }

  /** Hands `request` to the owner through the relay's inbox. */
  private send(request: RelayRequest): Promise<RelayReply> {
    const { inbox } = this.options.relay;
    if (inbox === undefined) {
      const location = this.options.log.location(this.sessionId);
      return Promise.reject(new SessionLogError(
        `Cannot hand a ${request.kind} to the claw instance that owns ${location}: this store ` +
        'relays no requests to the owner. Open the session on that instance.',
        { code: 'session_owner_unreachable', location },
      ));
    }
    return inbox.send(this.sessionId, request);
  }

  /**
   * Follows the runtime of this process that now owns the session (it was taken over): its
   * events continue this session's, and requests go to it directly.
   */
  adopt(local: Runtime): void {
    if (this.local !== undefined || this.closed) return;
    this.local = local;
    this.stopProgress();
    this.stopProgress = local.onToolProgress((report) => this.progress.emit(report));
    this.poke();
    void this.pipe(local);
  }

  /**
   * Takes the events of the runtime here in, from the last one this session has, until it
   * closes. Behind the runtime's subscriber bound, it catches up from its cursor (the clients
   * never miss an event). When the runtime no longer keeps the events after the cursor, it goes
   * on from the oldest one it keeps: the gap ends this session's subscribers behind it with
   * `lagged`, and a client's cursor then gets `cursor_expired` (it is told, and starts afresh).
   */
  private async pipe(local: Runtime): Promise<void> {
    const { signal } = this.bridge;
    let cursor = this.events.lastSeq;
    for (;;) {
      try {
        const expired = local.cursorError(cursor);
        if (expired !== undefined) cursor = expired.oldestSeq - 1;
        for await (const event of local.events({ after: cursor, signal })) {
          cursor = event.seq;
          this.events.ingest(event);
        }
        return;
      } catch (error) {
        if (error instanceof SubscriberLaggedError && !signal.aborted) {
          cursor = error.lastSeq;
          continue;
        }
        // Closed; or `lease_lost`: the server drops the session, and this follower with it.
        return;
      }
    }
  }

  /** Stops following; its subscribers end. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopProgress();
    this.progress.clear();
    this.bridge.abort();
    this.poke();
    await this.following;
    this.events.close();
  }

  private async follow(): Promise<void> {
    const { replication } = this.options.relay;
    const unwatch = replication.watch(this.sessionId, () => this.poke());
    try {
      while (!this.closed && this.local === undefined) {
        this.woken = false;
        let more = false;
        try {
          more = await this.readMore();
          if (!more && this.local === undefined) {
            const owner = await replication.ownerOf(this.sessionId);
            if (owner === undefined || !owner.live) await this.options.onOwnerGone();
          }
        } catch {
          // The store is away: the next look tries again.
        }
        if (!more) await this.pause();
      }
    } finally {
      unwatch();
    }
  }

  /** Reads what is new; true when there may be more to read at once. */
  private async readMore(): Promise<boolean> {
    const { replication } = this.options.relay;
    const { records, oldestSeq } = await replication.readSince(this.sessionId, this.replica.seq, {
      limit: readLimit,
    });
    if (oldestSeq > this.replica.seq + 1) {
      // Compacted past what this process read: start again from the snapshot.
      await this.reload();
      return false;
    }
    for (const record of records) {
      if (this.local !== undefined) return false;
      let event: SessionEvent | undefined;
      try {
        event = this.replica.apply(record);
      } catch {
        // A record that does not follow (the session was removed and made anew): read it afresh.
        await this.reload();
        return false;
      }
      if (event !== undefined) this.events.ingest(event);
    }
    return records.length === readLimit;
  }

  /**
   * Reads the session afresh from its snapshot; its events go on from there (after a gap). The
   * load holds only the events after its snapshot: when the snapshot took in events this process
   * never read, its subscribers behind them are told now (RT-4), not by a next event that an idle
   * session may never have.
   */
  private async reload(): Promise<void> {
    const stored = await this.options.log.load(this.sessionId);
    if (stored === undefined) return;
    this.replica = this.replicaOf(stored);
    for (const event of this.replica.events) this.events.ingest(event);
    this.events.skip(this.replica.eventSeq);
  }

  private poke(): void {
    this.woken = true;
    this.resume?.();
  }

  /** Waits for a wake-up, or the poll interval. */
  private pause(): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.resume = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs ?? 1000);
      timer.unref();
      this.resume = done;
    });
  }
}
