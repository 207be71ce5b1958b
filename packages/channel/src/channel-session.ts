import { ApprovalNotPendingError } from '@claw/approval';
import { KeyedThrottle, type ApprovalDecision, type ElicitationAction } from '@claw/core';
import {
  CursorExpiredError,
  SessionBusyError,
  SubscriberLaggedError,
  type RuntimeHandle,
} from '@claw/runtime';
import { ChannelError, toChannelError } from './errors.js';
import type { CloseReason } from './outbound-queue.js';
import { isSessionEndCode, toWireMessage, type ServerEvent } from './protocol.js';

/** What a connection may do in a session: a controller prompts and answers, an observer watches. */
export type ChannelRole = 'controller' | 'observer';

/** The least time between two `tool_progress` of one tool call to one connection. */
const progressEveryMs = 250;

/**
 * One session as one connection has it open (CH-9, CH-10): its runtime (attached to the
 * session's host), the connection's role in it, and the subscription that forwards the session's
 * events to the connection. A controller prompts, interrupts and answers approvals; an observer
 * only watches.
 */
export class ChannelSession {
  readonly id: string;
  readonly runtime: RuntimeHandle;
  private currentRole: ChannelRole;
  private readonly send: (event: ServerEvent) => void;
  private readonly room: () => Promise<void> | undefined;
  private readonly tooSlow: (reason: CloseReason) => void;
  private subscription = new AbortController();
  /** The last task this connection started on the session. */
  private ownTask: string | undefined;
  /** Ends the forwarding of tool progress (see `forwardProgress`). */
  private stopProgress: () => void = () => undefined;
  /** At most one progress report a tool call every `progressEveryMs`. */
  private readonly progressThrottle = new KeyedThrottle(progressEveryMs, 64);
  /** Why the server let the session go while this connection followed it (LIFE-2). */
  private endedWith: ChannelError | undefined;

  constructor(options: {
    runtime: RuntimeHandle;
    role: ChannelRole;
    send: (event: ServerEvent) => void;
    /** Undefined while the connection can take another event; else resolves once it can. */
    room?: () => Promise<void> | undefined;
    /**
     * Closes the connection as too slow (CH-5): it fell so far behind the session that the events
     * it missed are no longer kept. Default: the session's subscription ends with an `error`.
     */
    tooSlow?: (reason: CloseReason) => void;
  }) {
    this.runtime = options.runtime;
    this.id = options.runtime.sessionId;
    this.currentRole = options.role;
    this.send = options.send;
    this.room = options.room ?? (() => undefined);
    this.tooSlow = options.tooSlow ?? (() => undefined);
  }

  get role(): ChannelRole {
    return this.currentRole;
  }

  /**
   * Set once the server let the session go while this connection followed it (`lease_lost`,
   * `store_unavailable`, `session_dropped`; LIFE-2): the client was told, and its requests get
   * the same error until it opens the session again (a new attachment, see `ChannelConnection`).
   */
  get ended(): ChannelError | undefined {
    return this.endedWith;
  }

  /**
   * (Re)starts the subscription: answers `session_opened`, then the history (`after`
   * undefined), or the events after `after` (a number), or only new events (`'latest'`); then the
   * live events. A cursor that cannot be served is refused before anything is sent.
   *
   * @throws ChannelError `cursor_expired` with the oldest seq the session can replay from.
   */
  open(role: ChannelRole, after: number | 'latest' | undefined): number {
    const view = this.runtime.snapshot();
    const cursor = typeof after === 'number' ? after : view.seq;
    if (typeof after === 'number') this.checkCursor(after);
    this.subscription.abort();
    this.subscription = new AbortController();
    this.currentRole = role;
    this.send({
      type: 'session_opened',
      session_id: this.id,
      state: view.state,
      last_seq: view.seq,
      pending_approvals: view.pendingApprovals,
      ...(view.pendingElicitations === undefined || view.pendingElicitations.length === 0
        ? {}
        : { pending_elicitations: view.pendingElicitations }),
      role,
      workdir: this.runtime.workDir,
      ...(view.instructions === undefined || view.instructions.length === 0
        ? {}
        : { instructions: view.instructions.map((file) => ({ ...file })) }),
    });
    if (after === undefined) {
      this.send({
        type: 'history',
        session_id: this.id,
        seq: view.seq,
        messages: view.history.map(toWireMessage),
        ...(view.compaction === undefined || view.compaction.upTo === 0
          ? {}
          : {
              compaction: {
                up_to: view.compaction.upTo,
                ...(view.compaction.summary === undefined
                  ? {}
                  : { summary: view.compaction.summary }),
              },
            }),
      });
    }
    const { signal } = this.subscription;
    void this.follow(cursor, signal).catch((error: unknown) => {
      // Never an unhandled rejection: the client is told, as of any failure of its session.
      if (!signal.aborted) this.send(errorEvent(toChannelError(error, this.id)));
    });
    this.forwardProgress();
    return view.seq;
  }

  /**
   * Sends the progress of the session's running tools as `tool_progress` (not a session event:
   * best effort). At most one a tool call every 250 ms, and none while the connection has no room:
   * progress is worth sending only when it is fresh.
   */
  private forwardProgress(): void {
    this.stopProgress();
    this.progressThrottle.clear();
    this.stopProgress = this.runtime.onToolProgress((report) => {
      if (this.room() !== undefined || !this.progressThrottle.allow(report.toolCallId)) return;
      this.send({
        type: 'tool_progress',
        session_id: this.id,
        task_id: report.taskId,
        tool_call_id: report.toolCallId,
        tool_name: report.toolName,
        progress: report.progress,
        ...(report.total === undefined ? {} : { total: report.total }),
        ...(report.message === undefined ? {} : { message: report.message }),
      });
    });
  }

  /**
   * Starts a task.
   *
   * @throws ChannelError `not_controller`, `session_busy`.
   */
  async prompt(content: string): Promise<string> {
    this.requireLive();
    this.requireController('prompt or interrupt');
    try {
      const { id } = await this.runtime.start(content);
      this.ownTask = id;
      return id;
    } catch (error) {
      if (error instanceof SessionBusyError) {
        throw new ChannelError(
          `session ${JSON.stringify(this.id)} is already running a task (${error.taskId}); wait ` +
          'for it to end, or interrupt it',
          { code: 'session_busy', sessionId: this.id, cause: error },
        );
      }
      throw this.failure(error);
    }
  }

  /**
   * Compacts the session's conversation now (CMP-5), as a task; controllers only, on an idle
   * session.
   *
   * @throws ChannelError `not_controller`, `session_busy`, `not_supported` (a session another
   *   instance runs).
   */
  async compact(focus: string | undefined): Promise<string> {
    this.requireLive();
    this.requireController('compact the conversation');
    const compact = this.runtime.compact?.bind(this.runtime);
    if (compact === undefined) {
      throw new ChannelError(
        `session ${JSON.stringify(this.id)} runs on another instance, which has to compact it: ` +
        'send compact to the instance that runs it, or once it is idle open it here again',
        { code: 'not_supported', sessionId: this.id },
      );
    }
    try {
      const { id } = compact(focus === undefined ? {} : { focus });
      this.ownTask = id;
      return id;
    } catch (error) {
      if (error instanceof SessionBusyError) {
        throw new ChannelError(
          `session ${JSON.stringify(this.id)} is running a task (${error.taskId}); compact it once ` +
          'that ends, or interrupt it',
          { code: 'session_busy', sessionId: this.id, cause: error },
        );
      }
      throw this.failure(error);
    }
  }

  /**
   * Cancels the session's task (CH-4).
   *
   * @throws ChannelError `not_controller`, `not_running`.
   */
  async interrupt(reason: string): Promise<void> {
    this.requireLive();
    this.requireController('prompt or interrupt');
    if (this.runtime.activeTask === undefined) {
      throw new ChannelError(`session ${JSON.stringify(this.id)} has no running task`, {
        code: 'not_running',
        sessionId: this.id,
      });
    }
    try {
      await this.runtime.cancel(new Error(reason));
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Answers an approval; the first answer wins (CH-10).
   *
   * @throws ChannelError `approval_not_pending` (also for an observer's answer).
   */
  async answer(requestId: string, decision: ApprovalDecision, by: string): Promise<void> {
    this.requireLive();
    const notPending = (why: string): ChannelError =>
      new ChannelError(why, { code: 'approval_not_pending', sessionId: this.id, requestId });
    if (this.currentRole !== 'controller') {
      throw notPending(
        `this connection watches session ${JSON.stringify(this.id)} as an observer and cannot ` +
        'answer its approvals; open it as a controller to answer',
      );
    }
    try {
      await this.runtime.respond(requestId, decision, by);
    } catch (error) {
      if (error instanceof ApprovalNotPendingError) throw notPending(error.message);
      throw this.failure(error);
    }
  }

  /**
   * Answers an MCP server's request for input (MCP-7); the first answer wins.
   *
   * @throws ChannelError `elicitation_not_pending` (also for an observer's answer);
   *   `invalid_elicitation_answer` when the content does not fit the form (the request stays
   *   waiting). Where another instance runs the session, the answer goes to it (SCALE-4).
   */
  async answerElicitation(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by: string,
  ): Promise<void> {
    this.requireLive();
    const notPending = (why: string): ChannelError =>
      new ChannelError(why, { code: 'elicitation_not_pending', sessionId: this.id, requestId });
    if (this.currentRole !== 'controller') {
      throw notPending(
        `this connection watches session ${JSON.stringify(this.id)} as an observer and cannot ` +
        'answer its requests for input; open it as a controller to answer',
      );
    }
    if (this.runtime.respondElicitation === undefined) {
      throw notPending(
        `session ${JSON.stringify(this.id)} takes no answers to requests for input here; answer ` +
        'where claw runs it',
      );
    }
    try {
      await this.runtime.respondElicitation(requestId, answer, by);
    } catch (error) {
      const failure = toChannelError(error, this.id);
      throw new ChannelError(failure.message, {
        code: failure.code,
        sessionId: this.id,
        requestId,
        cause: error,
      });
    }
  }

  /**
   * Leaves the session: the subscription ends; `end` (a controller's) also cancels its task —
   * with `ownOnly`, only a task this connection started.
   */
  async detach(end: boolean, by: string, ownOnly = false): Promise<void> {
    this.subscription.abort();
    this.stopProgress();
    const running = this.runtime.activeTask?.id;
    const mine = !ownOnly || (running !== undefined && running === this.ownTask);
    if (end && this.currentRole === 'controller' && mine) {
      await Promise.resolve(this.runtime.cancel(new Error(`ended by ${by}`))).catch(() => undefined);
    }
    const closing = this.runtime.close({ cancel: false });
    // A session the server let go may not be stored from here any more: leaving is all there is.
    await (this.endedWith === undefined ? closing : closing.catch(() => undefined));
  }

  /**
   * @throws ChannelError with the code that ended the session here (`lease_lost`,
   *   `store_unavailable`, `session_dropped`): open it again.
   */
  private requireLive(): void {
    const ended = this.endedWith;
    if (ended === undefined) return;
    throw new ChannelError(ended.message, { code: ended.code, sessionId: this.id, cause: ended });
  }

  /**
   * A failure of a request as the client gets it; one that says the session was let go (the
   * runtime refused before the subscription ended) ends the session here too.
   */
  private failure(error: unknown): ChannelError {
    const failure = toChannelError(error, this.id);
    if (isSessionEndCode(failure.code)) this.end(failure);
    return failure;
  }

  /** The session was let go: its subscription and progress stop; requests get `failure`. */
  private end(failure: ChannelError): void {
    this.endedWith ??= failure;
    this.subscription.abort();
    this.stopProgress();
  }

  /** @throws ChannelError `not_controller` */
  requireController(what: string): void {
    if (this.currentRole === 'controller') return;
    throw new ChannelError(
      `this connection watches session ${JSON.stringify(this.id)} as an observer; open it as a ` +
      `controller to ${what}`,
      { code: 'not_controller', sessionId: this.id },
    );
  }

  /** @throws ChannelError `cursor_expired` */
  private checkCursor(after: number): void {
    const error = this.runtime.cursorError(after);
    if (error === undefined) return;
    throw new ChannelError(error.message, {
      code: 'cursor_expired',
      sessionId: this.id,
      oldestSeq: error.oldestSeq,
    });
  }

  /** Forwards the session's events after `after` to the connection, until `signal` aborts. */
  private async follow(after: number, signal: AbortSignal): Promise<void> {
    let cursor = after;
    let lagged = false;
    for (;;) {
      try {
        for await (const event of this.runtime.events({ after: cursor, signal })) {
          cursor = event.seq;
          this.send(event);
          // Paced by the connection: a backlog goes out as fast as the client reads it. Meanwhile
          // the session's log holds what comes (a subscriber too far behind catches up below).
          const room = this.room();
          if (room !== undefined) await room;
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
        // Behind the log's bound: catch up from where it was; the outbound queue is the limit.
        if (error instanceof SubscriberLaggedError) {
          cursor = error.lastSeq;
          lagged = true;
          continue;
        }
        // It fell behind while its connection could take nothing more, and what it missed is gone
        // from the log: the connection is too slow (CH-5), not just this session's subscription.
        if (lagged && error instanceof CursorExpiredError) {
          this.tooSlow({
            code: 'client_too_slow',
            message:
              `client too slow: it fell so far behind session ${JSON.stringify(this.id)} that the ` +
              'events it missed are no longer kept; reconnect and open the session again without a ' +
              'cursor (its history)',
          });
          if (signal.aborted) return;
        }
        const failure =
          error instanceof CursorExpiredError
            ? new ChannelError(error.message, {
                code: 'cursor_expired',
                sessionId: this.id,
                oldestSeq: error.oldestSeq,
              })
            : toChannelError(error, this.id);
        // The server let the session go (LIFE-2): said once, with why; the client reopens it.
        if (isSessionEndCode(failure.code)) {
          if (this.endedWith !== undefined) return;
          this.end(failure);
        }
        this.send(errorEvent(failure));
        return;
      }
    }
  }
}

/** The `error` event for a failure. */
export function errorEvent(error: ChannelError): ServerEvent {
  return {
    type: 'error',
    code: error.code,
    message: error.message,
    ...(error.sessionId === undefined ? {} : { session_id: error.sessionId }),
    ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
    ...(error.oldestSeq === undefined ? {} : { oldest_seq: error.oldestSeq }),
  };
}
